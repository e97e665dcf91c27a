"""The prefill matmul kernel of convert-fp4-to-gpu (PrefillMatmulKernel.cpp,
prefill-dequant=shared: cp.async ring in dynamic shared memory, the weight
dequantized once per CTA into a bf16 tile, ldmatrix.x4 + mma.sync), run on
the CPU by gpu_kernel_interp.py, against the f64 product of its operands.

Two forms, each for chip=sm_90 (mma.sync) and chip=sm_90a (where the tile
has 64-row warp groups, wgmma.mma_async from the 128-byte-swizzled tiles,
variant suffix _wgmma; the interpreter decodes the descriptors):
  * plain W4A16 (fp4.matmul of a bf16 lhs and an MXFP4 weight): variant
    prefill_w4a16_smem; W4A4 and NVFP4 too on sm_90a;
  * weight entries (variant prefill_w4a16_smem_entries): in a chain that
    splits the weight's outliers at run time and quantizes the rest, the
    correction_matmul of the weight's outliers is folded into the weight
    tile (the quantized rest is +-0 at the outlier positions, so writing
    the entry over the dequantized element is the sum). The result must be
    stacked @ (dequantize(qw) + scatter(values, indices))^T.

Only the matmul kernel of a compiled module runs (on buffers built from its
own argument list), so each case is a single launch. M > 16 everywhere
(M <= decode-max-m takes the decode kernel). No GPU needed.
"""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402
from test_gpu_correction_kernels import bf16_bits, compile_op  # noqa: E402
from test_gpu_quant_kernels import FP4_OPT, buffer_for  # noqa: E402

pytestmark = pytest.mark.skipif(not os.path.exists(FP4_OPT),
                                reason=f"fp4-opt not built at {FP4_OPT}")

MX = "#fp4.mxfp4<block_size = 32>"
# Relative Frobenius error: the interpreter's mma.sync sums each 16-wide k
# step in f64 and rounds once to f32 (the tensor cores' order differs), so
# only f32 rounding of the accumulators separates it from the f64 product.
TOL = 1e-6


def qtype(rows, cols):
    return f"!fp4.tensor<{rows}x{cols}xf4E2M1FN, {MX}, axis = 1>"


def run_launch(kernels, launch, inputs):
    """Runs one launch on buffers of its own arguments (manifest names are
    per plan, so they are not shared across launches): `inputs` by name;
    outputs poisoned (0xA5) and returned as arrays of their dtype."""
    args = []
    for name, dtype, shape, scratch in launch["args"]:
        assert not scratch, name
        args.append(buffer_for(name, dtype, shape, inputs.get(name)))
    interp.run_kernel(kernels[launch["name"]], launch["grid"],
                      launch["block"], args, launch["shared_bytes"])
    return {a[0]: b.bytes.view(b.dtype).reshape(b.shape)
            for a, b in zip(launch["args"], args) if a[0] not in inputs}


def rel_error(got, expect):
    return np.linalg.norm(got - expect) / np.linalg.norm(expect)


def check_close(got, expect, what):
    """Relative Frobenius error <= TOL, and every element within the same
    tolerance of the largest (a map of the wrong ones otherwise)."""
    got = got.astype(np.float64)
    assert np.all(np.isfinite(got)), f"{what}: non-finite outputs"
    bad = np.abs(got - expect) > TOL * np.abs(expect).max()
    if bad.any():
        rows, cols = np.nonzero(bad)
        rmap = "\n".join("".join("X" if b else "." for b in r) for r in bad)
        pytest.fail(f"{what}: {bad.sum()} wrong elements, rows "
                    f"{sorted(set(rows.tolist()))}, columns "
                    f"{sorted(set(cols.tolist()))}\n{rmap}")
    err = rel_error(got, expect)
    assert err <= TOL, f"{what}: relative error {err}"


def random_weight(rng, n, k, outlier_columns=0):
    """bf16-exact weights with per-row magnitudes 2^-3..2^3 (scale bytes on
    both sides of the one-multiply MXFP4 form) and, optionally, a few
    columns scaled by 40 (outliers)."""
    w = rng.standard_normal((n, k)) * np.exp2(rng.integers(-3, 4, (n, 1)))
    if outlier_columns:
        w[:, rng.choice(k, outlier_columns, replace=False)] *= 40.0
    return ref.round_to_bf16(w.astype(np.float32))


def stacked_activation(rng, m, k):
    """The bf16 lhs the chain's activation prep feeds the matmul: an MXFP4
    round trip of random data (exact in bf16)."""
    x = rng.standard_normal((m, k)).astype(np.float32)
    x = ref.dequantize(ref.quantize(x, scheme="mxfp4", block_size=32))
    return ref.round_to_bf16(x.astype(np.float32))


def expected_variant(base, chip, m):
    """The variant on `chip`: the 64-row tile (M 49..64: two warp groups of
    64 columns) and the 128-row ones take wgmma on sm_90a; the 16- and
    48-row tiles of the medium class keep mma.sync."""
    return base + ("_wgmma" if chip == "sm_90a" and m > 48 else "")


# (m, n, k): N never a multiple of the CTA tile; K = 224 ends in a partial
# K tile; the 136-row cases have CTAs along both grid axes; M = 64 runs two
# warp groups side by side (sm_90a).
@pytest.mark.parametrize("chip", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("m,n,k,multi_cta", [
    (40, 37, 128, False), (40, 37, 224, False), (136, 150, 224, True),
    (64, 150, 320, False)])
def test_prefill_w4a16(m, n, k, multi_cta, chip):
    y = f"tensor<{m}x{n}xf32>"
    a = f"tensor<{m}x{k}xbf16>"
    mlir = (f"func.func @f(%x: {a}, %qw: {qtype(n, k)}) -> {y} {{\n"
            f"  %y = fp4.matmul %x, %qw : {a}, {qtype(n, k)} -> {y}\n"
            f"  return %y : {y}\n}}\n")
    kernels, manifest = compile_op(mlir, chip)
    assert len(manifest) == 1, manifest
    launch = manifest[0]
    assert launch["variant"] == expected_variant("prefill_w4a16_smem", chip,
                                                 m), launch["variant"]
    assert [a[0] for a in launch["args"]] == [
        "lhs", "rhs.codes", "rhs.scales", "result"]
    gx, gy, gz = launch["grid_dims"]
    assert gz == 1
    if multi_cta:
        assert gx > 1 and gy > 1, launch["grid_dims"]

    rng = np.random.default_rng(m * 1000 + n + k)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    qw = ref.quantize(random_weight(rng, n, k), scheme="mxfp4", block_size=32)
    out = run_launch(kernels, launch, {
        "lhs": bf16_bits(x), "rhs.codes": qw.codes,
        "rhs.scales": qw.scales.view(np.uint8)})
    expect = x.astype(np.float64) @ ref.dequantize(qw).astype(np.float64).T
    check_close(out["result"], expect, f"w4a16 {m}x{n}x{k}")


def chain(m, n, k, block, top):
    """Quantized activation; the weight's outliers split at run time, its
    rest quantized; matmul plus the weight outliers' correction."""
    qx, qw = qtype(m, k), qtype(n, k)
    w = f"tensor<{n}x{k}xbf16>"
    v = f"tensor<{n}x{k // block}x{top}xbf16>"
    i = f"tensor<{n}x{k // block}x{top}xi8>"
    y = f"tensor<{m}x{n}xf32>"
    return (
        f"func.func @f(%x: tensor<{m}x{k}xbf16>, %w: {w}) -> {y} {{\n"
        f"  %qx = fp4.quantize %x : tensor<{m}x{k}xbf16> -> {qx}\n"
        f"  %rest, %wv, %wi = fp4.split_outliers %w block {block} top {top}"
        f" : {w} -> {v}, {i}\n"
        f"  %qw = fp4.quantize %rest : {w} -> {qw}\n"
        f"  %y0 = fp4.matmul %qx, %qw : {qx}, {qw} -> {y}\n"
        f"  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block {block}) "
        f"acc %y0 : ({qx}), ({v}, {i}), {y} -> {y}\n"
        f"  return %y1 : {y}\n}}\n")


# (m, n, k, outlier block, entries per block). Blocks of 16 (two per
# 32-element unit), 32 and 64 (a block wider than a unit); K = 224 ends in a
# partial K tile; N is never a multiple of the CTA tile; the last cases
# have CTAs along both grid axes.
ENTRY_CASES = [
    (40, 37, 128, 32, 2),
    (40, 37, 224, 32, 2),
    (40, 37, 128, 16, 1),
    (40, 37, 224, 16, 1),
    (40, 37, 128, 64, 4),
    (40, 37, 256, 64, 4),
    (136, 150, 224, 32, 2),
    (136, 150, 224, 16, 2),
    # Decode-sized chains on the medium class's 16-row tile, 4 stages (no
    # 2:4 buffers): a partial K tile, and 5 K tiles wrapping the ring.
    (16, 70, 352, 32, 2),
    (12, 37, 640, 64, 4),
    (16, 37, 640, 16, 1),
]


# Every case on sm_90; on sm_90a the 128-row tiles (wgmma), since the
# smaller tiles of these cases are the same mma.sync kernels there.
@pytest.mark.parametrize(
    "m,n,k,block,top,chip",
    [c + ("sm_90",) for c in ENTRY_CASES] +
    [c + ("sm_90a",) for c in ENTRY_CASES if c[0] > 64])
def test_prefill_weight_entries(m, n, k, block, top, chip):
    kernels, manifest = compile_op(chain(m, n, k, block, top), chip)
    matmuls = [l for l in manifest if l["name"].startswith("fp4_matmul")]
    assert len(matmuls) == 1, [l["name"] for l in manifest]
    launch = matmuls[0]
    assert launch["variant"] == expected_variant(
        "prefill_w4a16_smem_entries", chip, m), launch["variant"]
    assert [a[0] for a in launch["args"]] == [
        "stacked0", "weight.codes", "weight.scales", "weights.values",
        "weights.indices", "product0"]
    assert launch["grid_dims"][2] == 1

    rng = np.random.default_rng(m * 7919 + n * 31 + k + block + top)
    stacked = stacked_activation(rng, m, k)
    w = random_weight(rng, n, k, outlier_columns=5)
    rest, values, indices = ref.split_outliers(w, block_size=block, k=top)
    qw = ref.quantize(rest, scheme="mxfp4", block_size=32)
    sparse = ref.scatter_sparse(values, indices, block).astype(np.float64)
    dense = ref.dequantize(qw).astype(np.float64)
    # The fold's premise: the quantized rest is +-0 at every entry.
    assert np.all(dense[sparse != 0] == 0)
    assert np.count_nonzero(sparse) > n  # the weight has outliers

    out = run_launch(kernels, launch, {
        "stacked0": bf16_bits(stacked), "weight.codes": qw.codes,
        "weight.scales": qw.scales.view(np.uint8),
        "weights.values": bf16_bits(values), "weights.indices": indices})
    got = out["product0"].astype(np.float64)
    a = stacked.astype(np.float64)
    check_close(got, a @ (dense + sparse).T,
                f"entries {m}x{n}x{k} block {block} top {top}")

    # Negative controls: without the entries, or with every entry one
    # column off inside its block, the product is far from the result, so
    # a fold that dropped or misplaced them could not pass the check above.
    assert rel_error(got, a @ dense.T) > 1e3 * TOL
    shifted = ref.scatter_sparse(values, (indices.astype(np.int64) + 1) %
                                 block, block).astype(np.float64)
    assert rel_error(got, a @ (dense + shifted).T) > 1e3 * TOL


# sm_90a's wgmma with a dequantized A tile too (W4A4) and NVFP4's E4M3
# scales and tensor scale; bf16 and f16 results; N and K tails.
@pytest.mark.parametrize("m,n,k,scheme,w4a4,out", [
    (136, 150, 224, "mxfp4", True, "f32"),
    (130, 77, 96, "nvfp4", False, "bf16"),
    (140, 40, 80, "nvfp4", True, "f16")])
def test_prefill_wgmma_schemes(m, n, k, scheme, w4a4, out):
    attr = MX if scheme == "mxfp4" else "#fp4.nvfp4"
    qt = lambda r, c: f"!fp4.tensor<{r}x{c}xf4E2M1FN, {attr}, axis = 1>"
    a = qt(m, k) if w4a4 else f"tensor<{m}x{k}xbf16>"
    y = f"tensor<{m}x{n}x{out}>"
    mlir = (f"func.func @f(%x: {a}, %qw: {qt(n, k)}) -> {y} {{\n"
            f"  %y = fp4.matmul %x, %qw : {a}, {qt(n, k)} -> {y}\n"
            f"  return %y : {y}\n}}\n")
    kernels, manifest = compile_op(mlir, "sm_90a")
    assert len(manifest) == 1, manifest
    launch = manifest[0]
    kind = "w4a4" if w4a4 else "w4a16"
    assert launch["variant"] == f"prefill_{kind}_smem_wgmma", \
        launch["variant"]

    rng = np.random.default_rng(m * 977 + n + k)
    bs = 32 if scheme == "mxfp4" else 16
    inputs = {}
    if w4a4:
        qx = ref.quantize(rng.standard_normal((m, k)).astype(np.float32),
                          scheme=scheme, block_size=bs)
        x = ref.dequantize(qx).astype(np.float64)
    else:
        x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
        inputs["lhs"] = bf16_bits(x)
        x = x.astype(np.float64)
    qw = ref.quantize(random_weight(rng, n, k), scheme=scheme, block_size=bs)
    names = [a[0] for a in launch["args"]]
    for prefix, q in (("lhs", qx if w4a4 else None), ("rhs", qw)):
        if q is None:
            continue
        inputs[f"{prefix}.codes"] = q.codes
        inputs[f"{prefix}.scales"] = q.scales.view(np.uint8)
        if f"{prefix}.tensor_scale" in names:
            inputs[f"{prefix}.tensor_scale"] = np.asarray(
                q.tensor_scale, np.float32).reshape(())
    missing = [n_ for n_ in names[:-1] if n_ not in inputs]
    assert not missing, (missing, names)
    res = run_launch(kernels, launch, inputs)
    expect = x @ ref.dequantize(qw).astype(np.float64).T
    got = res["result"]
    if out == "f32":
        check_close(got, expect, f"wgmma {scheme} {kind} {m}x{n}x{k}")
    else:
        # One rounding of the f32 sum to the result type (bf16 results come
        # back as their 16 bits).
        if out == "bf16":
            got = (got.astype(np.uint32) << 16).view(np.float32)
        got = got.astype(np.float64)
        err = rel_error(got, expect)
        assert err <= 4e-3, f"wgmma {scheme} {kind}: relative error {err}"
