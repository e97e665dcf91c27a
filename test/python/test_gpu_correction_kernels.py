"""The accuracy-recipe kernels of convert-fp4-to-gpu (CorrectionToGPU.h),
run on the CPU by gpu_kernel_interp.py (all threads in lockstep, IEEE f32),
against the C++ reference (split_outliers, sparse_residual, hadamard_rotate)
and, for fp4.correction_matmul, an f32 oracle that sums in the op's order
(one multiply and one add per entry, as the CPU lowering): bit for bit.
No GPU needed. Each case is one op whose inputs are function arguments, so
the launch plan's buffers are the op's."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402
from test_gpu_quant_kernels import FP4_OPT, buffer_for  # noqa: E402

MX = "#fp4.mxfp4<block_size = 32>"


def qtype(rows, cols):
    return f"!fp4.tensor<{rows}x{cols}xf4E2M1FN, {MX}, axis = 1>"


def compile_op(mlir, chip="sm_90", options=""):
    out = subprocess.run(
        [FP4_OPT, "-", f"-convert-fp4-to-gpu=chip={chip} {options}".strip(),
         "-mlir-print-op-generic"], input=mlir, capture_output=True,
        text=True, check=True)
    assert "stays on the host" not in out.stderr, out.stderr
    return interp.parse_kernels(out.stdout), interp.parse_manifest(out.stdout)


def run(mlir, inputs):
    """Runs the op's launches on `inputs` (by manifest name); returns the
    output buffers as arrays of their manifest dtype."""
    kernels, manifest = compile_op(mlir)
    buffers = {}
    for launch in manifest:
        args = []
        for name, dtype, shape, _ in launch["args"]:
            if name not in buffers:
                buffers[name] = buffer_for(name, dtype, shape, inputs.get(name))
            args.append(buffers[name])
        interp.run_kernel(kernels[launch["name"]], launch["grid"],
                          launch["block"], args)
    return {name: b.bytes.view(b.dtype).reshape(b.shape)
            for name, b in buffers.items() if name not in inputs}, manifest


def kernel_stems(manifest):
    return [l["name"].rsplit("_", 1)[0] for l in manifest]


def bf16_bits(x):
    return (ref.round_to_bf16(x).view(np.uint32) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def data(rows, cols, seed):
    """bf16-exact values with ties, zeros, an outlier channel and specials."""
    rng = np.random.default_rng(seed)
    x = ref.round_to_bf16(rng.standard_normal((rows, cols)).astype(np.float32))
    x[:, 3] *= 64.0
    x[0, :8] = 0.0
    x[1, 4:12] = 0.5                      # ties: lower index first
    x[-1, 0] = -np.inf
    x[-1, 9] = np.nan
    return x


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("elem", ["bf16", "f32"])
def test_split_outliers(k, elem):
    rows, cols = 5, 96
    x = data(rows, cols, k)
    t = f"tensor<{rows}x{cols}x{elem}>"
    v, i = f"tensor<{rows}x{cols // 32}x{k}xbf16>", f"tensor<{rows}x{cols // 32}x{k}xi8>"
    mlir = (f"func.func @f(%x: {t}) -> ({t}, {v}, {i}) {{\n"
            f"  %r, %v, %i = fp4.split_outliers %x block 32 top {k} : {t} -> {v}, {i}\n"
            f"  return %r, %v, %i : {t}, {v}, {i}\n}}\n")
    out, manifest = run(mlir, {"input": bf16_bits(x) if elem == "bf16" else x})
    assert kernel_stems(manifest) == ["fp4_split_outliers"]
    rest, values, indices = ref.split_outliers(x, 32, k)
    got_rest = from_bf16(out["rest"]) if elem == "bf16" else out["rest"]
    assert np.array_equal(got_rest.view(np.uint32), rest.view(np.uint32))
    assert np.array_equal(from_bf16(out["values"]).view(np.uint32),
                          values.view(np.uint32))
    assert np.array_equal(out["indices"].view(np.uint8), indices)


@pytest.mark.parametrize("block,k", [(4, 2), (32, 4)])
def test_residual(block, k):
    rows, cols = 4, 64
    x = data(rows, cols, 7)
    x[-1, 9] = 1.0  # NaN blocks have unspecified codes
    q = ref.quantize(x, scheme="mxfp4", block_size=32)
    t = f"tensor<{rows}x{cols}xbf16>"
    v = f"tensor<{rows}x{cols // block}x{k}xbf16>"
    i = f"tensor<{rows}x{cols // block}x{k}xi8>"
    mlir = (f"func.func @f(%x: {t}, %q: {qtype(rows, cols)}) -> ({v}, {i}) {{\n"
            f"  %v, %i = fp4.residual %x, %q block {block} top {k} : {t}, {qtype(rows, cols)} -> {v}, {i}\n"
            f"  return %v, %i : {v}, {i}\n}}\n")
    out, manifest = run(mlir, {"input": bf16_bits(x), "quantized.codes": q.codes,
                               "quantized.scales": q.scales.view(np.uint8)})
    assert kernel_stems(manifest) == ["fp4_residual"]
    values, indices = ref.sparse_residual(x, "mxfp4", block_size=block, k=k)
    assert np.array_equal(from_bf16(out["values"]).view(np.uint32),
                          values.view(np.uint32))
    assert np.array_equal(out["indices"].view(np.uint8), indices)


def test_split_channels():
    rows, cols, chans = 3, 64, [2, 17, 63]
    x = data(rows, cols, 3)
    t, g = f"tensor<{rows}x{cols}xbf16>", f"tensor<{rows}x3xbf16>"
    mlir = (f"func.func @f(%x: {t}) -> ({t}, {g}) {{\n"
            f"  %r, %g = fp4.split_channels %x channels [2, 17, 63] : {t} -> {g}\n"
            f"  return %r, %g : {t}, {g}\n}}\n")
    out, _ = run(mlir, {"input": bf16_bits(x)})
    rest = x.copy()
    rest[:, chans] = 0.0
    assert np.array_equal(from_bf16(out["rest"]).view(np.uint32),
                          rest.view(np.uint32))
    assert np.array_equal(from_bf16(out["gathered"]).view(np.uint32),
                          x[:, chans].view(np.uint32))


@pytest.mark.parametrize("size,seed,inverse", [(32, 0, False), (16, None, True),
                                               (64, 5, False)])
def test_rotate(size, seed, inverse):
    rows, cols = 3, 128
    x = data(rows, cols, size)
    x[-1, 0] = 1.0
    x[-1, 9] = 2.0
    t, o = f"tensor<{rows}x{cols}xbf16>", f"tensor<{rows}x{cols}xf32>"
    s = f" seed {seed}" if seed is not None else ""
    inv = " inverse" if inverse else ""
    # Two uses: not fused into a quantize.
    mlir = (f"func.func @f(%x: {t}) -> ({o}, {o}) {{\n"
            f"  %r = fp4.rotate %x hadamard {size}{s} axis 1{inv} : {t} -> {o}\n"
            f"  return %r, %r : {o}, {o}\n}}\n")
    out, manifest = run(mlir, {"input": bf16_bits(x)})
    assert kernel_stems(manifest) == ["fp4_rotate"]
    expect = ref.hadamard_rotate(x, size, randomized=seed is not None,
                                 seed=seed or 0, inverse=inverse)
    assert np.array_equal(out["result"].view(np.uint32), expect.view(np.uint32))


def scatter(values, indices, block):
    r, nb, k = values.shape
    out = np.zeros((r, nb * block), np.float32)
    for c in range(nb):
        for s in range(k):
            out[np.arange(r), c * block + np.clip(indices[:, c, s].astype(np.int64), 0, block - 1)] = values[:, c, s]
    return out


def oracle(lhs, rhs, acc, k):
    """acc + lhs rhs^T in f32, one multiply and one add per stored entry,
    in the order of the lhs's (dense: K's) entries; a sparse side is
    (values f32, indices, block)."""
    y = acc.astype(np.float32).copy()

    def entries(side):
        if isinstance(side, tuple):
            v, i, b = side
            for c in range(v.shape[1]):
                for s in range(v.shape[2]):
                    yield v[:, c, s], c * b + np.clip(i[:, c, s].astype(np.int64), 0, b - 1)
        else:
            for kk in range(k):
                yield side[:, kk], np.full(side.shape[0], kk)

    dense_r = scatter(*rhs) if isinstance(rhs, tuple) else rhs
    dense_l = scatter(*lhs) if isinstance(lhs, tuple) else lhs
    if isinstance(lhs, tuple) or not isinstance(rhs, tuple):
        for v, col in entries(lhs):
            other = dense_r[:, None, :].repeat(len(v), 1)[:, np.arange(len(v)), col].T
            if isinstance(lhs, tuple) and isinstance(rhs, tuple):
                # Only the rhs's stored entries count: the dense scatter
                # holds zero elsewhere and rhs entries at col.
                pass
            with np.errstate(invalid="ignore"):
                y = y + (v[:, None] * other).astype(np.float32)
    else:
        for v, col in entries(rhs):
            other = dense_l[:, col]
            with np.errstate(invalid="ignore"):
                y = y + (other * v[None, :]).astype(np.float32)
    return y


@pytest.mark.parametrize("form", ["sparse_q", "q_sparse", "sparse_sparse",
                                  "dense_dense"])
def test_correction_matmul(form):
    m, n, k = 3, 37, 64
    rng = np.random.default_rng(11)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    w = ref.round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    acc = rng.standard_normal((m, n)).astype(np.float32)
    _, xv, xi = ref.split_outliers(x, 32, 2)
    _, wv, wi = ref.split_outliers(w, 32, 1)
    qx = ref.quantize(x, scheme="mxfp4", block_size=32)
    qw = ref.quantize(w, scheme="mxfp4", block_size=32)
    sx = f"(tensor<{m}x2x2xbf16>, tensor<{m}x2x2xi8>)"
    sw = f"(tensor<{n}x2x1xbf16>, tensor<{n}x2x1xi8>)"
    y = f"tensor<{m}x{n}xf32>"
    inputs = {"acc": acc}
    if form == "sparse_q":
        lhs, rhs, types = "(%a, %b block 32)", "(%c)", (sx, f"({qtype(n, k)})")
        args = [f"%a: tensor<{m}x2x2xbf16>", f"%b: tensor<{m}x2x2xi8>", f"%c: {qtype(n, k)}"]
        inputs.update({"lhs.values": bf16_bits(xv), "lhs.indices": xi,
                       "rhs.codes": qw.codes, "rhs.scales": qw.scales.view(np.uint8)})
        expect = oracle((xv, xi, 32), ref.dequantize(qw), acc, k)
    elif form == "q_sparse":
        lhs, rhs, types = "(%a)", "(%b, %c block 32)", (f"({qtype(m, k)})", sw)
        args = [f"%a: {qtype(m, k)}", f"%b: tensor<{n}x2x1xbf16>", f"%c: tensor<{n}x2x1xi8>"]
        inputs.update({"lhs.codes": qx.codes, "lhs.scales": qx.scales.view(np.uint8),
                       "rhs.values": bf16_bits(wv), "rhs.indices": wi})
        expect = oracle(ref.dequantize(qx), (wv, wi, 32), acc, k)
    elif form == "sparse_sparse":
        lhs, rhs, types = "(%a, %b block 32)", "(%c, %d block 32)", (sx, sw)
        args = [f"%a: tensor<{m}x2x2xbf16>", f"%b: tensor<{m}x2x2xi8>",
                f"%c: tensor<{n}x2x1xbf16>", f"%d: tensor<{n}x2x1xi8>"]
        inputs.update({"lhs.values": bf16_bits(xv), "lhs.indices": xi,
                       "rhs.values": bf16_bits(wv), "rhs.indices": wi})
        # The rhs (fewer entries) drives: its entries in order, the lhs
        # block's matching slot.
        expect = oracle(scatter(xv, xi, 32), (wv, wi, 32), acc, k)
    else:
        c = 5
        lhs, rhs = "(%a)", "(%b)"
        types = (f"(tensor<{m}x{c}xbf16>)", f"(tensor<{n}x{c}xbf16>)")
        args = [f"%a: tensor<{m}x{c}xbf16>", f"%b: tensor<{n}x{c}xbf16>"]
        inputs.update({"lhs": bf16_bits(x[:, :c]), "rhs": bf16_bits(w[:, :c])})
        expect = oracle(x[:, :c], w[:, :c], acc, c)
    mlir = (f"func.func @f({', '.join(args)}, %acc: {y}) -> {y} {{\n"
            f"  %y = fp4.correction_matmul {lhs}, {rhs} acc %acc : {types[0]}, {types[1]}, {y} -> {y}\n"
            f"  return %y : {y}\n}}\n")
    out, manifest = run(mlir, inputs)
    assert kernel_stems(manifest) == ["fp4_correction"]
    assert np.array_equal(out["result"].view(np.uint32), expect.view(np.uint32))
