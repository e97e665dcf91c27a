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
                rotated="f32"):
    """The bench form of a recipe (weight parts are arguments): x ->
    [rotate] -> [split top-2 of 32] -> quantize -> [2:4 residual], every
    activation part times every weight part."""
    t = lambda *d: "tensor<" + "x".join(str(v) for v in d) + ">"
    y = t(m, n, "f32")
    args = [f"%x: {t(m, k, 'bf16')}", f"%qw: {qtype(n, k)}"]
    body, src, x_ty = [], "%x", t(m, k, "bf16")
    if rotate:
        body.append(f"%xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : {x_ty} -> {t(m, k, rotated)}")
        src, x_ty = "%xr", t(m, k, rotated)
    act, wgt = [("(%qx)", f"({qtype(m, k)})")], [("(%qw)", f"({qtype(n, k)})")]
    if split:
        sv, si = t(m, k // 32, 2, "bf16"), t(m, k // 32, 2, "i8")
        body.append(f"%rest, %xv, %xi = fp4.split_outliers {src} block 32 top 2 : {x_ty} -> {sv}, {si}")
        src = "%rest"
        act.append(("(%xv, %xi block 32)", f"({sv}, {si})"))
    if weight_outliers:
        wv, wi = t(n, k // 32, 2, "bf16"), t(n, k // 32, 2, "i8")
        args += [f"%wv: {wv}", f"%wi: {wi}"]
        wgt.append(("(%wv, %wi block 32)", f"({wv}, {wi})"))
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
    return (f"func.func @f({', '.join(args)}) -> {y} {{\n{lines}\n"
            f"  return {prev} : {y}\n}}\n")


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


@pytest.mark.parametrize(
    "m,rotate,split,residual,weight_outliers,rotated,k", CASES)
def test_activation_prep(m, rotate, split, residual, weight_outliers, rotated,
                         k):
    n = 37
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

    kernels, manifest = compile_op(
        recipe_mlir(m, n, k, rotate, split, residual, weight_outliers, rotated))
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
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
    buffers = {}
    for launch in manifest:
        args = []
        for name, dtype, shape, _ in launch["args"]:
            if name not in buffers:
                buffers[name] = buffer_for(name, dtype, shape, inputs.get(name))
            args.append(buffers[name])
        interp.run_kernel(kernels[launch["name"]], launch["grid"],
                          launch["block"], args)
    got = {name: b.bytes.view(b.dtype).reshape(b.shape)
           for name, b in buffers.items()}

    # The ops' results, bit for bit.
    assert np.array_equal(got["quantized.codes"], qx.codes)
    assert np.array_equal(got["quantized.scales"], qx.scales.view(np.uint8))
    if split:
        assert np.array_equal(got["outliers.values"], bf16_bits(xv))
        assert np.array_equal(got["outliers.indices"], xi)
    if residual:
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
        assert np.array_equal(got["summed_t"].view(np.uint32),
                              summed.T.astype(np.float32).view(np.uint32))
    # The chain's result.
    x64 = sum(p.astype(np.float64) for p in parts)
    w64 = deq_w + (ref.scatter_sparse(wv, wi, 32) if weight_outliers else 0.0)
    y64 = x64 @ w64.T
    # The epilogue's result, or the decode kernel's when it did the
    # epilogue itself; a plain product otherwise.
    y = got["result"] if "result" in got else got["product0"]
    err = np.linalg.norm(y.astype(np.float64) - y64) / np.linalg.norm(y64)
    assert err <= 1e-6, err


def test_prep_declines_when_rest_is_used():
    """x_rest returned as well: the prep cannot produce it, so the chain
    lowers with the ops' own kernels and the stacker."""
    m, n, k = 2, 37, 128
    mlir = recipe_mlir(m, n, k, True, True, True, True).replace(
        "-> tensor<2x37xf32> {", "-> (tensor<2x37xf32>, tensor<2x128xf32>) {").replace(
        "return %y5 : tensor<2x37xf32>",
        "return %y5, %rest : tensor<2x37xf32>, tensor<2x128xf32>")
    _, manifest = compile_op(mlir)
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
    assert "fp4_activation_prep" not in stems, stems
    assert "fp4_stack_activations" in stems and "fp4_split_outliers" in stems
