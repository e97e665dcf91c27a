"""The activation-prep kernel of a fused correction chain
(FusedActivationPrep.h, ActivationPrepKernel.cpp) run on the CPU by
gpu_kernel_interp.py: from x, one kernel computes the rotation, the block
top-k outlier split, the MXFP4 quantization of the rest, the 2:4 residual
and the stacked bf16 row groups. Every output must equal the C++
reference (hadamard_rotate, split_outliers, quantize, sparse_residual) bit
for bit, the stacked rows the parts, the transposed sum their f32 sum; the
decode product (mma.sync, not modelled by the interpreter) is computed in
f64 from the stacked rows, and the epilogue's result must match the f64
sum of every term within f32 rounding. No GPU needed."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402
from test_gpu_quant_kernels import buffer_for  # noqa: E402
from test_gpu_correction_kernels import (bf16_bits, compile_op,  # noqa: E402
                                         from_bf16, qtype)


def recipe_mlir(m, n, k, rotate, split, residual, weight_outliers,
                rotated="f32", weight_split=False, return_parts=False,
                split_block=32, split_k=2, weight_block=32, weight_k=2):
    """The bench form of a recipe (weight parts are arguments): x ->
    [rotate] -> [split top-2 of 32] -> quantize -> [2:4 residual], every
    activation part times every weight part. `weight_split`: the weight's
    outliers are split from a bf16 %w at run time and its rest quantized
    (what makes them joinable at prefill sizes). `return_parts`: the
    split's and the residual's results are returned too (read outside the
    chain, so the prep writes them). The weight outliers are the top
    `weight_k` of blocks of `weight_block`."""
    t = lambda *d: "tensor<" + "x".join(str(v) for v in d) + ">"
    y = t(m, n, "f32")
    args = [f"%x: {t(m, k, 'bf16')}", f"%qw: {qtype(n, k)}"]
    body, src, x_ty = [], "%x", t(m, k, "bf16")
    wb, wk = weight_block, weight_k
    if weight_split:
        wv, wi = t(n, k // wb, wk, "bf16"), t(n, k // wb, wk, "i8")
        args[1] = f"%w: {t(n, k, 'bf16')}"
        body.append(f"%wrest, %wv, %wi = fp4.split_outliers %w block {wb} top {wk} : {t(n, k, 'bf16')} -> {wv}, {wi}")
        body.append(f"%qw = fp4.quantize %wrest : {t(n, k, 'bf16')} -> {qtype(n, k)}")
    if rotate:
        body.append(f"%xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : {x_ty} -> {t(m, k, rotated)}")
        src, x_ty = "%xr", t(m, k, rotated)
    act, wgt = [("(%qx)", f"({qtype(m, k)})")], [("(%qw)", f"({qtype(n, k)})")]
    if split:
        sb, sk = split_block, split_k
        sv, si = t(m, k // sb, sk, "bf16"), t(m, k // sb, sk, "i8")
        body.append(f"%rest, %xv, %xi = fp4.split_outliers {src} block {sb} top {sk} : {x_ty} -> {sv}, {si}")
        src = "%rest"
        act.append((f"(%xv, %xi block {sb})", f"({sv}, {si})"))
    if weight_outliers:
        wv, wi = t(n, k // wb, wk, "bf16"), t(n, k // wb, wk, "i8")
        if not weight_split:
            args += [f"%wv: {wv}", f"%wi: {wi}"]
        wgt.append((f"(%wv, %wi block {wb})", f"({wv}, {wi})"))
    body.append(f"%qx = fp4.quantize {src} : {x_ty} -> {qtype(m, k)}")
    if residual:
        rv, ri = t(m, k // 4, 2, "bf16"), t(m, k // 4, 2, "i8")
        body.append(f"%rv, %ri = fp4.residual {src}, %qx block 4 top 2 : {x_ty}, {qtype(m, k)} -> {rv}, {ri}")
        act.append(("(%rv, %ri block 4)", f"({rv}, {ri})"))
    body.append(f"%y0 = fp4.matmul %qx, %qw : {qtype(m, k)}, {qtype(n, k)} -> {y}")
    prev = "%y0"
    terms = [(a, w) for a in act for w in wgt][1:]
    for i, (a, w) in enumerate(terms):
        body.append(f"%y{i + 1} = fp4.correction_matmul {a[0]}, {w[0]} acc {prev} : "
                    f"{a[1]}, {w[1]}, {y} -> {y}")
        prev = f"%y{i + 1}"
    lines = "\n".join("  " + b for b in body)
    rets, tys = [prev], [y]
    if return_parts and split:
        rets += ["%xv", "%xi"]
        tys += [t(m, k // split_block, split_k, "bf16"),
                t(m, k // split_block, split_k, "i8")]
    if return_parts and residual:
        rets += ["%rv", "%ri"]
        tys += [t(m, k // 4, 2, "bf16"), t(m, k // 4, 2, "i8")]
    return (f"func.func @f({', '.join(args)}) -> ({', '.join(tys)}) {{\n"
            f"{lines}\n  return {', '.join(rets)} : {', '.join(tys)}\n}}\n")


def run_plan(kernels, launches, inputs, launched=None):
    """Runs `launches` in order on the interpreter, buffers shared by
    argument name (the plan names a buffer alike in its producer and its
    consumers); `inputs` by name. Returns every buffer as an array;
    `launched`, a list, receives each launch's interpreter state."""
    buffers = {}
    for launch in launches:
        args = []
        for name, dtype, shape, _ in launch["args"]:
            if name not in buffers:
                buffers[name] = buffer_for(name, dtype, shape,
                                           inputs.get(name))
            args.append(buffers[name])
        done = interp.run_kernel(kernels[launch["name"]], launch["grid"],
                                 launch["block"], args,
                                 launch.get("shared_bytes"))
        if launched is not None:
            launched.append(done)
    return {name: b.bytes.view(b.dtype).reshape(b.shape)
            for name, b in buffers.items()}


def prep_and_matmul(manifest):
    """The plan's activation prep and its one product (asserting that the
    chain's epilogue needed no separate kernel)."""
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
    assert "fp4_stacked_epilogue" not in stems, stems
    launches = [l for l in manifest
                if l["name"].startswith(("fp4_activation_prep", "fp4_matmul"))]
    assert [l["name"].rsplit("_", 1)[0] for l in launches] == [
        "fp4_activation_prep", "fp4_matmul"], stems
    return launches


def with_entries(dense, values, indices, block):
    """The stacker's sum: each entry added (in f32, in slot order) to the
    dense element at its column; the others keep their bits (-0.0 too)."""
    out = dense.astype(np.float32).copy()
    rows, blocks, k = values.shape
    for c in range(blocks):
        for s in range(k):
            cols = c * block + indices[:, c, s].astype(np.int64)
            out[np.arange(rows), cols] += values[:, c, s].astype(np.float32)
    return out


CASES = [
    # m, rotate, split, residual, weight outliers, rotation result type, K
    (1, True, True, True, True, "f32", 128),     # the full recipe
    (3, True, True, True, False, "f32", 128),    # activation outliers only
    (16, True, True, True, True, "f32", 128),    # 32 stacked rows
    (2, True, True, True, True, "bf16", 128),    # rotated values rounded
    (2, False, False, True, False, "f32", 128),  # residual 2:4 alone
    (2, False, True, False, True, "f32", 128),   # outliers, no rotation
    # The benchmark's K: the epilogue's lanes read whole 4-block runs of
    # the weight outliers (128 blocks, no masked lane).
    (1, True, True, True, True, "f32", 4096),
    (16, True, True, True, True, "f32", 4096),
]


# decode-outliers=tail: the decode kernel multiplies the weight outliers
# after its main loop (runs of a row's entries per lane: one masked entry
# per lane at K = 128, whole 8-entry vector runs at K = 4096). N = 77:
# five CTAs of 16 rows (the tail form's one row group), the last partial.
# At K = 4096 (256 entries per row)
# each CTA copies its rows' entries into shared memory with the
# activation sum (cp.async, before the main loop); at K = 128 (8 per row,
# not whole 16-byte pieces) the tail reads them from global memory.
TAIL_CASES = [c for c in CASES if c[4] and c[0] * c[6] * 4 <= 32 * 1024]


# prep-readback: the prep reads its codes and scales back from its global
# outputs (the default) or from the shared copies it writes alongside
# (they fit at every size here); the outputs are bit-identical.
@pytest.mark.parametrize("readback", ["global", "shared"])
@pytest.mark.parametrize(
    "m,rotate,split,residual,weight_outliers,rotated,k,tail",
    [c + (False,) for c in CASES] + [c + (True,) for c in TAIL_CASES])
def test_activation_prep(m, rotate, split, residual, weight_outliers, rotated,
                         k, tail, readback):
    n = 77 if tail else 37
    rng = np.random.default_rng(300 + m)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    x[:, 5] *= 60.0
    x[:, 70] *= -40.0
    x[0, 8:16] = 0.0          # ties at zero
    x[-1, 40:44] = x[-1, 36]  # equal magnitudes: the lower index first
    x = ref.round_to_bf16(x)  # the kernel's input is bf16
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8).astype(np.float32))
    wrest, wv, wi = ref.split_outliers(w, 32, 2)
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=32)

    src = ref.hadamard_rotate(x, 32, randomized=True, seed=0) if rotate else x
    if rotated == "bf16":
        src = ref.round_to_bf16(src)
    parts = []
    if split:
        rest, xv, xi = ref.split_outliers(src, 32, 2)
    else:
        rest = src
    qx = ref.quantize(rest, scheme="mxfp4", block_size=32)
    deq = ref.dequantize(qx).astype(np.float32)
    parts.append(with_entries(deq, xv, xi, 32) if split else deq)
    if residual:
        rv, ri = ref.sparse_residual(rest, "mxfp4", block_size=4, k=2)
        parts.append(ref.scatter_sparse(rv, ri, 4))

    # Odd M: the parts are returned too, so the prep writes them.
    return_parts = m % 2 == 1
    kernels, manifest = compile_op(
        recipe_mlir(m, n, k, rotate, split, residual, weight_outliers, rotated,
                    return_parts=return_parts),
        options="decode-outliers=" + ("tail" if tail else "loop") +
        " prep-readback=" + readback)
    prep = [l for l in manifest if l["name"].startswith("fp4_activation_prep")]
    # Shared copies (workgroup memrefs of the codes' and scales' shapes)
    # or none.
    shared = [t for _, t in kernels[prep[0]["name"]].regions[0][0]
              if "address_space<workgroup>" in t]
    assert len(shared) == (2 if readback == "shared" else 0), shared
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
    if tail:
        decode = [l for l in manifest
                  if l["variant"] == "decode_w4a16_epilogue_tail"]
        assert decode, [l["variant"] for l in manifest]
        # One 16-row group per CTA, its K split over the CTA's warps. With
        # the entries' copy (16 rows x 256 entries x (2 + 1) bytes) all the
        # kernel's shared memory is dynamic: the copy, the [K, M] f32 sum,
        # the result stage ([stacked rows][16]) and the outlier stage
        # ([M][16]), and the warps' reduction buffer (4 sums per lane).
        warps = decode[0]["block"] // 32
        assert decode[0]["grid"] == -(-n // 16), decode[0]
        assert decode[0].get("shared_bytes", 0) == (
            16 * 256 * 3 + 4096 * m * 4 + (len(parts) + 1) * m * 16 * 4 +
            warps * 4 * 32 * 4
            if k == 4096 else 0), decode[0]
    products = 2 if m * len(parts) > 32 else 1
    # One decode product does the epilogue itself unless its weight
    # outliers' [K, M] activation sum exceeds the 32 KB it stages.
    separate = products > 1 or (weight_outliers and k * m * 4 > 32 * 1024)
    epilogue = ["fp4_stacked_epilogue"] if (
        (len(parts) > 1 or weight_outliers) and separate) else []
    assert stems == ["fp4_activation_prep"] + ["fp4_matmul"] * products + \
        epilogue, stems
    inputs = {"input": bf16_bits(x), "weight.codes": qw.codes,
              "weight.scales": qw.scales.view(np.uint8),
              "weights.values": bf16_bits(wv), "weights.indices": wi}
    deq_w = ref.dequantize(qw).astype(np.float64)
    got = run_plan(kernels, manifest, inputs)

    # The ops' results, bit for bit.
    assert np.array_equal(got["quantized.codes"], qx.codes)
    assert np.array_equal(got["quantized.scales"], qx.scales.view(np.uint8))
    # Read only by the chain: not written.
    assert ("outliers.values" in got) == (split and return_parts)
    assert ("residual.values" in got) == (residual and return_parts)
    if split and return_parts:
        assert np.array_equal(got["outliers.values"], bf16_bits(xv))
        assert np.array_equal(got["outliers.indices"], xi)
    if residual and return_parts:
        assert np.array_equal(got["residual.values"], bf16_bits(rv))
        assert np.array_equal(got["residual.indices"], ri)
    # The stacked row groups and the transposed sum.
    stacked = np.concatenate([from_bf16(got[f"stacked{p}"])
                              for p in range(products)]).reshape(-1, m, k)
    assert stacked.shape[0] == len(parts)
    for g, part in enumerate(parts):
        assert np.array_equal(stacked[g].view(np.uint32),
                              part.astype(np.float32).view(np.uint32)), g
    if weight_outliers:
        summed = np.float32(0.0) + parts[0]
        for part in parts[1:]:
            summed = summed + part
        want = summed.T.astype(np.float32)
        # The tail form reads it lane-banked where its lanes' runs of a
        # row's entries (top-2 of 32) are whole blocks (TransposedSum.h):
        # element (k, m) at [k mod C, k / C, m], C = K / 32.
        per_row = k // 32 * 2
        tail_form = any(l["variant"].endswith("_tail") for l in manifest)
        if tail_form and per_row % 32 == 0 and (per_row // 32) % 2 == 0:
            want = want.reshape(32, k // 32, m).transpose(1, 0, 2)
        assert got["summed_t"].shape == want.shape, got["summed_t"].shape
        assert np.array_equal(got["summed_t"].view(np.uint32),
                              want.view(np.uint32))
    # The chain's result.
    x64 = sum(p.astype(np.float64) for p in parts)
    w64 = deq_w + (ref.scatter_sparse(wv, wi, 32) if weight_outliers else 0.0)
    y64 = x64 @ w64.T
    # The epilogue's result, or the decode kernel's when it did the
    # epilogue itself; a plain product otherwise.
    y = got["result"] if "result" in got else got["product0"]
    err = np.linalg.norm(y.astype(np.float64) - y64) / np.linalg.norm(y64)
    assert err <= 1e-6, err


# The activation split's block top-k in the prep for other blocks and k:
# blocks of 16 (2 lanes), 32 (4), 64 (8), 128 (16 lanes); k = 1, 4 and
# k = 16 of 64, more than a lane's 8 elements (its lanes hold no candidate
# for the late ranks until the lanes merge). Ties at zero and equal
# magnitudes; values and indices bit for bit, the stacked rows too.
# `rotated`: None splits the bf16 input itself (the keyed top-k of values
# exact in bf16, narrowOutlierKey); "f32" splits a Hadamard rotation's f32
# result (the general top-k, every f32 bit pattern), with ties made in the
# rotated values, Inf and a NaN.
@pytest.mark.parametrize("block,top,rotated", [
    (16, 1, None), (32, 1, None), (32, 4, None), (64, 4, None),
    (64, 16, None), (128, 2, None),
    (16, 1, "f32"), (32, 2, "f32"), (64, 16, "f32"), (128, 4, "f32")])
def test_activation_prep_split_topk(block, top, rotated):
    m, n, k = 3, 37, 256
    rng = np.random.default_rng(block * 31 + top)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    x[:, 5] *= 60.0
    x[0, 8:24] = 0.0          # ties at zero
    x[-1, 40:48] = x[-1, 36]  # equal magnitudes: the lower index first
    x[1, 130:134] = -x[1, 129]
    if rotated:
        # A constant 32-block rotates to four magnitudes and zeros (exact
        # ties of either sign, within a lane and across lanes); Inf and NaN
        # blocks rotate to non-finite values everywhere.
        x[0, 64:96] = 0.75
        x[1, 160] = np.inf
        x[2, 224] = np.nan
    x = ref.round_to_bf16(x)
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8).astype(np.float32))
    qw = ref.quantize(w, scheme="mxfp4", block_size=32)
    src = (ref.hadamard_rotate(x, 32, randomized=True, seed=0)
           if rotated else x)
    rest, xv, xi = ref.split_outliers(src, block, top)
    qx = ref.quantize(rest, scheme="mxfp4", block_size=32)
    dense = with_entries(ref.dequantize(qx).astype(np.float32), xv, xi, block)
    kernels, manifest = compile_op(recipe_mlir(
        m, n, k, bool(rotated), True, False, False, rotated or "f32",
        return_parts=True, split_block=block, split_k=top))
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
    assert stems[0] == "fp4_activation_prep", stems
    got = run_plan(kernels, manifest, {
        "input": bf16_bits(x), "weight.codes": qw.codes,
        "weight.scales": qw.scales.view(np.uint8)})
    assert np.array_equal(got["outliers.values"], bf16_bits(xv))
    assert np.array_equal(got["outliers.indices"], xi)
    assert np.array_equal(got["quantized.codes"], qx.codes)
    assert np.array_equal(from_bf16(got["stacked0"])[:m].view(np.uint32),
                          dense.astype(np.float32).view(np.uint32))


def compressed_residual(rv, ri):
    """mma.sp's form of a 2:4 residual (MatmulKernelSpec::sparseLhs): per
    group of 4, the two values by ascending position; metadata bytes of
    two groups (nibble lo | hi << 2, group 2b in the low half), XOR 0x44."""
    swap = ri[..., 0] > ri[..., 1]
    values = np.where(swap[..., None], rv[..., ::-1], rv)
    idx = np.where(swap[..., None], ri[..., ::-1], ri).astype(np.uint8)
    assert np.all(idx[..., 0] < idx[..., 1])
    nib = idx[..., 0] | (idx[..., 1] << 2)
    m, groups = nib.shape
    meta = (nib[:, 0::2] | (nib[:, 1::2] << 4)) ^ 0x44
    return values.reshape(m, groups * 2), meta.astype(np.uint8)


# At prefill sizes the 2:4 residual goes compressed to the prefill kernel's
# sparse tensor cores (mma.sp), adding into the dense product's
# accumulators: no stacked residual rows, no epilogue.
PREFILL_CASES = [
    # m, n, k, rotate, split, weight outliers (split at run time)
    (40, 37, 128, True, True, True),     # the full recipe
    (40, 37, 224, False, False, False),  # residual alone; a partial K tile
    (136, 150, 224, True, True, False),  # CTAs along M and N, partial both
    (136, 150, 256, False, True, True),  # two full K tiles, entries
    # Decode-sized chains from 9 rows take the medium class's 16-row tile
    # (ChipDescription::correctionPrefillMinM): 64 columns, K steps of 128.
    (16, 70, 352, True, True, True),     # the full recipe; partial N, K tiles
    (12, 37, 224, False, True, True),    # a partial row tile
]


# On sm_90a (mma = wgmma) the residual's packed values go to wgmma.sp
# (inline PTX, MatmulKernelSpec::sparseLhs on the wgmma form): after each
# k32 step's two dense wgmmas, one sparse wgmma from the packed tile (64-
# byte rows at K steps of 64, M = 136; 128-byte rows at the one-row tile's
# K steps of 128, M = 64) and the metadata registers. M = 40 (a 48-row
# tile, not whole warp groups) keeps mma.sync and mma.sp. With
# prefill-residual=rows the same chains run as one product of the stacked
# row groups: the prep writes the 2:4 residual densified as row group 1 of
# stacked0 ([2M, K]) and the wgmma kernel issues both groups' A tiles into
# one accumulator set (MatmulKernelSpec::lhsGroups). M = 64: two warp
# groups side by side; 136: CTAs along M and N with partial tiles.
GROUPED_CASES = [
    # m, n, k, rotate, split, weight outliers (split at run time)
    (136, 150, 224, True, True, False),
    (136, 150, 256, False, True, True),
    (64, 77, 320, True, True, True),
]


@pytest.mark.parametrize(
    "m,n,k,rotate,split,weight_outliers,chip,form",
    [c + ("sm_90", "sparse") for c in PREFILL_CASES] +
    [c + ("sm_90a", "sparse") for c in GROUPED_CASES] +
    [(40, 37, 128, True, True, True, "sm_90a", "sparse")] +
    [c + ("sm_90a", "rows") for c in GROUPED_CASES] +
    # The prep's shared read-back at prefill sizes (136 x 224: 15 KB of
    # codes, within the 40 KB it stages).
    [GROUPED_CASES[0] + ("sm_90a", "rows shared")])
def test_prefill_residual(m, n, k, rotate, split, weight_outliers, chip,
                          form):
    form, _, readback = form.partition(" ")
    grouped = form == "rows"
    # The wgmma form takes whole 64-row warp groups: M = 64, or the 128-row
    # tile from 65 rows on (M = 40's 48-row tile keeps mma.sync).
    on_wgmma = chip == "sm_90a" and (m % 64 == 0 or m > 64)
    rng = np.random.default_rng((900 if grouped else 500) + m + k)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    x[:, 5] *= 60.0
    x[1, 8:16] = 0.0          # an all-zero residual group: positions (0, 1)
    x[-1, 40:44] = x[-1, 36]  # equal magnitudes
    x = ref.round_to_bf16(x)
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8).astype(np.float32))
    w[:, 3] *= 30.0
    w = ref.round_to_bf16(w)
    if weight_outliers:
        wrest, wv, wi = ref.split_outliers(w, 32, 2)
    else:
        wrest = w
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=32)
    src = ref.hadamard_rotate(x, 32, randomized=True, seed=0) if rotate else x
    rest, xv, xi = ref.split_outliers(src, 32, 2) if split else (src, 0, 0)
    qx = ref.quantize(rest, scheme="mxfp4", block_size=32)
    deq = ref.dequantize(qx).astype(np.float32)
    dense = with_entries(deq, xv, xi, 32) if split else deq
    rv, ri = ref.sparse_residual(rest, "mxfp4", block_size=4, k=2)

    return_parts = m == 40
    kernels, manifest = compile_op(recipe_mlir(
        m, n, k, rotate, split, True, weight_outliers,
        weight_split=weight_outliers, return_parts=return_parts), chip=chip,
        options=f"prefill-residual={form} prep-readback="
        f"{readback or 'global'}")
    launches = prep_and_matmul(manifest)
    prep, matmul = launches
    entries = "_entries" if weight_outliers else ""
    outlier_args = ["weights.values", "weights.indices"] \
        if weight_outliers else []
    if grouped:
        assert not prep["variant"].endswith("_sparse24"), prep["variant"]
        assert matmul["variant"] == \
            f"prefill_w4a16_smem{entries}_groups2_wgmma", matmul["variant"]
        residual_args = []
    else:
        assert prep["variant"].endswith("_residual_sparse24"), \
            prep["variant"]
        wgmma = "_wgmma" if on_wgmma else ""
        assert matmul["variant"] == \
            f"prefill_w4a16_smem_sparse24{entries}{wgmma}", matmul["variant"]
        residual_args = ["residual.sparse_values", "residual.sparse_meta"]
    names = [a[0] for a in matmul["args"]]
    assert names == ["stacked0", "weight.codes", "weight.scales"] + \
        residual_args + outlier_args + ["result"], names

    inputs = {"input": bf16_bits(x), "weight.codes": qw.codes,
              "weight.scales": qw.scales.view(np.uint8)}
    if weight_outliers:
        inputs.update({"weights.values": bf16_bits(wv), "weights.indices": wi})
    got = run_plan(kernels, launches, inputs)

    # The ops' results and the dense rows, bit for bit; the residual as row
    # group 1 (wgmma) or compressed in mma.sp's order.
    assert np.array_equal(got["quantized.codes"], qx.codes)
    assert ("residual.values" in got) == return_parts
    if return_parts:
        assert np.array_equal(got["residual.values"], bf16_bits(rv))
        assert np.array_equal(got["residual.indices"], ri)
    residual = ref.scatter_sparse(rv, ri, 4).astype(np.float32)
    stacked = from_bf16(got["stacked0"])
    assert stacked.shape == ((2 if grouped else 1) * m, k)
    assert np.array_equal(stacked[:m].view(np.uint32),
                          dense.astype(np.float32).view(np.uint32))
    if grouped:
        assert np.array_equal(stacked[m:], residual)
    else:
        values, meta = compressed_residual(rv, ri)
        assert np.array_equal(got["residual.sparse_values"],
                              bf16_bits(values))
        assert np.array_equal(got["residual.sparse_meta"].view(np.uint8),
                              meta)
    # The product: both row groups in one accumulator set.
    x64 = dense.astype(np.float64) + residual.astype(np.float64)
    w64 = ref.dequantize(qw).astype(np.float64)
    if weight_outliers:
        w64 = w64 + ref.scatter_sparse(wv, wi, 32)
    y64 = x64 @ w64.T
    y = got["result"].astype(np.float64)
    err = np.linalg.norm(y - y64) / np.linalg.norm(y64)
    assert err <= 1e-6, err
    assert np.abs(y - y64).max() <= 1e-6 * np.abs(y64).max()

    # Negative control: the residual's share is there, on mma.sp, wgmma.sp
    # (inline PTX) or wgmma.
    if grouped:
        mma = "nvvm.wgmma.mma_async"
    elif matmul["variant"].endswith("_wgmma"):
        mma = "llvm.inline_asm"
    else:
        mma = "nvvm.mma.sp.sync"
    assert interp.count_ops(kernels[matmul["name"]], mma) > 0
    without = dense.astype(np.float64) @ w64.T
    assert np.linalg.norm(y - without) > 100 * np.linalg.norm(y - y64)


def test_prep_declines_when_rest_is_used():
    """x_rest returned as well: the prep cannot produce it, so the chain
    lowers with the ops' own kernels and the stacker."""
    m, n, k = 2, 37, 128
    mlir = recipe_mlir(m, n, k, True, True, True, True).replace(
        "-> (tensor<2x37xf32>) {", "-> (tensor<2x37xf32>, tensor<2x128xf32>) {").replace(
        "return %y5 : tensor<2x37xf32>",
        "return %y5, %rest : tensor<2x37xf32>, tensor<2x128xf32>")
    _, manifest = compile_op(mlir)
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
    assert "fp4_activation_prep" not in stems, stems
    assert "fp4_stack_activations" in stems and "fp4_split_outliers" in stems


def test_prefill_sparse_metadata_is_checked():
    """The interpreter's mma.sp model rejects a position pair that is not
    strictly ascending (undefined on the hardware), so the tests above
    would catch a prep writing bad metadata: metadata bytes of 0x44 (read
    back as positions (0, 0)) fail the prefill kernel."""
    m, n, k = 40, 37, 128
    kernels, manifest = compile_op(recipe_mlir(m, n, k, False, False, True,
                                               False))
    matmul = [l for l in manifest if l["name"].startswith("fp4_matmul")][0]
    assert matmul["variant"] == "prefill_w4a16_smem_sparse24"
    rng = np.random.default_rng(7)
    qw = ref.quantize(ref.round_to_bf16(
        rng.standard_normal((n, k)).astype(np.float32)), scheme="mxfp4",
        block_size=32)
    inputs = {"stacked0": np.zeros((m, k), np.uint16),
              "weight.codes": qw.codes,
              "weight.scales": qw.scales.view(np.uint8),
              "residual.sparse_values": np.zeros((m, k // 2), np.uint16),
              "residual.sparse_meta": np.full((m, k // 8), 0x44, np.uint8)}
    args = [buffer_for(name, dtype, shape, inputs.get(name))
            for name, dtype, shape, _ in matmul["args"]]
    with pytest.raises(AssertionError, match="mma.sp metadata nibble"):
        interp.run_kernel(kernels[matmul["name"]], matmul["grid"],
                          matmul["block"], args, matmul["shared_bytes"])


def test_prefill_sparse_residual_outer_acc():
    """A chain that adds to an outer acc: the sparse prefill product goes
    to an f32 buffer and the epilogue kernel (one row group) adds the acc
    and rounds once. Every launch of the plan runs on the interpreter."""
    m, n, k = 40, 37, 96
    t = lambda *d: "tensor<" + "x".join(str(v) for v in d) + ">"
    y = t(m, n, "bf16")
    rv, ri = t(m, k // 4, 2, "bf16"), t(m, k // 4, 2, "i8")
    qx, qw = qtype(m, k), qtype(n, k)
    mlir = (
        f"func.func @f(%x: {t(m, k, 'bf16')}, %qw: {qw}, %acc: {y}) -> {y} {{\n"
        f"  %qx = fp4.quantize %x : {t(m, k, 'bf16')} -> {qx}\n"
        f"  %rv, %ri = fp4.residual %x, %qx block 4 top 2 : {t(m, k, 'bf16')}, {qx} -> {rv}, {ri}\n"
        f"  %y0 = fp4.correction_matmul (%qx), (%qw) acc %acc : ({qx}), ({qw}), {y} -> {t(m, n, 'f32')}\n"
        f"  %y1 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y0 : ({rv}, {ri}), ({qw}), {t(m, n, 'f32')} -> {y}\n"
        f"  return %y1 : {y}\n}}\n")
    kernels, manifest = compile_op(mlir)
    assert [(l["name"].rsplit("_", 1)[0], l["variant"]) for l in manifest] == [
        ("fp4_activation_prep", "activation_prep_mxfp4_residual_sparse24"),
        ("fp4_matmul", "prefill_w4a16_smem_sparse24"),
        ("fp4_stacked_epilogue", "stacked_epilogue")], manifest

    rng = np.random.default_rng(11)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    w = ref.round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    q = ref.quantize(w, scheme="mxfp4", block_size=32)
    acc = ref.round_to_bf16(rng.standard_normal((m, n)).astype(np.float32))
    inputs = {"input": bf16_bits(x), "weight.codes": q.codes,
              "weight.scales": q.scales.view(np.uint8), "acc": bf16_bits(acc)}
    got = from_bf16(run_plan(kernels, manifest, inputs)["result"])

    qxr = ref.quantize(x, scheme="mxfp4", block_size=32)
    rvr, rir = ref.sparse_residual(x, "mxfp4", block_size=4, k=2)
    x64 = (ref.dequantize(qxr).astype(np.float64) +
           ref.scatter_sparse(rvr, rir, 4))
    y64 = acc.astype(np.float64) + x64 @ ref.dequantize(q).astype(np.float64).T
    # One bf16 rounding of the f32 sum: within a bf16 ulp of the f64 value.
    assert np.all(np.abs(got - y64) <= 2.0 ** -7 * np.abs(y64) + 1e-30)
    without = acc.astype(np.float64) + (
        ref.dequantize(qxr).astype(np.float64) @
        ref.dequantize(q).astype(np.float64).T)
    assert np.abs(got - without).max() > 10 * np.abs(got - y64).max()
