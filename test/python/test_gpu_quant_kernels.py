"""The GPU quantize/dequantize kernels, run on the CPU, match the C++
reference byte for byte.

convert-fp4-to-gpu turns fp4.quantize (fused with a preceding fp4.rotate)
and fp4.dequantize into gpu.func kernels (QuantizeKernel.cpp,
DequantizeKernel.cpp). Bit-exactness on the H200 is checked by
bench/gpu_check.py; this test catches every layout bug before that: it
prints the kernels of each configuration in the generic op form, runs them
with gpu_kernel_interp.py (all threads of the launch in lockstep, IEEE f32
arithmetic as the PTX does it: .rn, no FMA, no flush to zero) on inputs with
zeros, subnormals, huge values, infinities and NaNs, and compares every
component with python/fp4/reference.py (the C++ quantizers through the C
API). Shapes include partial last CTAs, multi-lane blocks and rotations,
in-thread blocks, CTA-wide macro blocks and both launches of NVFP4.

Codes of NaN blocks are unspecified (numerics.md 2-4) and are not compared;
their scale bytes are.
"""

import os
import zlib
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402

FP4_OPT = os.path.join(BUILD_DIR, "bin", "fp4-opt")

# (id, rows, cols, input type, scheme attribute, reference scheme + options,
#  rotation (size, seed or None, inverse, rotate result type) or None)
QUANT_CASES = [
    # Large enough for the 32-element chunks of the fast path (Hadamard-32
    # and the MX block in registers); the small shapes below take 8-element
    # chunks with xor-shuffle butterflies and reductions.
    ("mx_hadamard32_large", 512, 4096, "bf16", "#fp4.mxfp4", ("mxfp4", {}),
     (32, 3, False, "bf16")),
    ("nv_large_four_over_six", 256, 4096, "bf16",
     "#fp4.nvfp4<four_over_six = true>",
     ("nvfp4", {"four_over_six": True}), None),
    ("hif4_large", 512, 4096, "f16", "#fp4.hif4", ("hif4", {}), None),
    ("macro_large", 512, 4096, "bf16", "#fp4.mxfp4_macro", ("macro", {}),
     (64, None, False, "f32")),
    ("mx_hadamard32", 40, 512, "bf16", "#fp4.mxfp4", ("mxfp4", {}),
     (32, None, False, "f32")),
    ("mx_hadamard32_rounded", 16, 1024, "bf16", "#fp4.mxfp4", ("mxfp4", {}),
     (32, None, False, "bf16")),
    ("mx_hadamard16_seed", 24, 256, "bf16", "#fp4.mxfp4", ("mxfp4", {}),
     (16, 7, False, "f32")),
    ("mx_hadamard64_seed_inverse", 24, 256, "f32", "#fp4.mxfp4",
     ("mxfp4", {}), (64, 11, True, "f32")),
    ("mx_hadamard128", 12, 512, "bf16",
     "#fp4.mxfp4<scale_rounding = even>",
     ("mxfp4", {"scale_rounding": "even"}), (128, None, False, "f32")),
    ("mx_hadamard256_seed_f16", 9, 512, "f16", "#fp4.mxfp4",
     ("mxfp4", {}), (256, 5, False, "f16")),
    ("mx_floor", 33, 3072, "bf16", "#fp4.mxfp4", ("mxfp4", {}), None),
    ("mx_ceil", 33, 1024, "bf16", "#fp4.mxfp4<scale_rounding = ceil>",
     ("mxfp4", {"scale_rounding": "ceil"}), None),
    ("mx_rceil_f32", 33, 1024, "f32", "#fp4.mxfp4<scale_rounding = rceil>",
     ("mxfp4", {"scale_rounding": "rceil"}), None),
    ("mx_half_away_f16", 17, 1024, "f16", "#fp4.mxfp4<rounding = half_away>",
     ("mxfp4", {"rounding": "half_away"}), None),
    ("mx_stochastic", 33, 1024, "bf16",
     "#fp4.mxfp4<rounding = stochastic, seed = 7>",
     ("mxfp4", {"rounding": "stochastic", "seed": 7}), None),
    ("mx_block16", 33, 1024, "bf16", "#fp4.mxfp4<block_size = 16>",
     ("mxfp4", {"block_size": 16}), None),
    ("mx_block64", 33, 1024, "bf16", "#fp4.mxfp4<block_size = 64>",
     ("mxfp4", {"block_size": 64}), None),
    ("mx_block2", 9, 256, "bf16", "#fp4.mxfp4<block_size = 2>",
     ("mxfp4", {"block_size": 2}), None),
    ("mx_block48", 9, 768, "bf16", "#fp4.mxfp4<block_size = 48>",
     ("mxfp4", {"block_size": 48}), None),
    ("mx_block1024", 5, 2048, "bf16", "#fp4.mxfp4<block_size = 1024>",
     ("mxfp4", {"block_size": 1024}), None),
    ("nv", 48, 512, "bf16", "#fp4.nvfp4", ("nvfp4", {}), None),
    ("nv_four_over_six", 48, 512, "bf16", "#fp4.nvfp4<four_over_six = true>",
     ("nvfp4", {"four_over_six": True}), None),
    ("nv_tile2d", 48, 512, "f32", "#fp4.nvfp4<tile2d = true>",
     ("nvfp4", {"tile2d": True}), None),
    ("nv_tile2d_four_over_six", 48, 256, "bf16",
     "#fp4.nvfp4<four_over_six = true, tile2d = true>",
     ("nvfp4", {"four_over_six": True, "tile2d": True}), None),
    ("nv_stochastic_four_over_six", 24, 512, "bf16",
     "#fp4.nvfp4<four_over_six = true, rounding = stochastic, seed = 3>",
     ("nvfp4", {"four_over_six": True, "rounding": "stochastic",
                "seed": 3}), None),
    ("nv_hadamard32", 48, 512, "bf16", "#fp4.nvfp4", ("nvfp4", {}),
     (32, 9, False, "bf16")),
    ("hif4", 21, 1024, "bf16", "#fp4.hif4", ("hif4", {}), None),
    ("hif4_hadamard128", 7, 512, "bf16", "#fp4.hif4", ("hif4", {}),
     (128, 1, True, "f32")),
    ("macro", 21, 1024, "bf16", "#fp4.mxfp4_macro", ("macro", {}), None),
    ("macro128_f32", 9, 1024, "f32", "#fp4.mxfp4_macro<macro_block = 128>",
     ("macro", {"macro_block": 128}), None),
    ("macro_row", 9, 4096, "bf16", "#fp4.mxfp4_macro<macro_block = 0>",
     ("macro", {"macro_block": 0}), None),
    ("macro_stochastic_even", 9, 512, "bf16",
     "#fp4.mxfp4_macro<scale_rounding = even, rounding = stochastic, "
     "seed = 5>",
     ("macro", {"scale_rounding": "even", "rounding": "stochastic",
                "seed": 5}), None),
]

DEQUANT_CASES = [
    ("mx", 19, 1024, "#fp4.mxfp4", ("mxfp4", {}), "bf16"),
    ("mx_f16", 19, 1024, "#fp4.mxfp4<scale_rounding = ceil>",
     ("mxfp4", {"scale_rounding": "ceil"}), "f16"),
    ("mx_f32", 19, 1024, "#fp4.mxfp4", ("mxfp4", {}), "f32"),
    ("mx_block2", 9, 256, "#fp4.mxfp4<block_size = 2>",
     ("mxfp4", {"block_size": 2}), "bf16"),
    ("mx_block48", 9, 768, "#fp4.mxfp4<block_size = 48>",
     ("mxfp4", {"block_size": 48}), "bf16"),
    ("nv", 19, 1024, "#fp4.nvfp4", ("nvfp4", {}), "bf16"),
    ("nv_tile2d_f32", 32, 512, "#fp4.nvfp4<tile2d = true>",
     ("nvfp4", {"tile2d": True}), "f32"),
    ("hif4", 19, 1024, "#fp4.hif4", ("hif4", {}), "bf16"),
    ("hif4_f32", 19, 1024, "#fp4.hif4", ("hif4", {}), "f32"),
    ("macro", 19, 1024, "#fp4.mxfp4_macro", ("macro", {}), "bf16"),
    ("macro_row", 9, 4096, "#fp4.mxfp4_macro<macro_block = 0>",
     ("macro", {"macro_block": 0}), "f16"),
]

MLIR_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32"}


def qtype(rows, cols, scheme):
    elem = "!fp4.s1p2" if "hif4" in scheme else "f4E2M1FN"
    return f"!fp4.tensor<{rows}x{cols}x{elem}, {scheme}, axis = 1>"


def compile_kernels(mlir):
    out = subprocess.run(
        [FP4_OPT, "-", "-convert-fp4-to-gpu=chip=sm_90",
         "-mlir-print-op-generic"], input=mlir, capture_output=True,
        text=True, check=True).stdout
    return interp.parse_kernels(out), interp.parse_manifest(out)


def make_input(rows, cols, seed):
    """f32 data with per-row magnitudes 2^-30 .. 2^30 and special rows."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) *
         np.exp2(rng.integers(-30, 30, (rows, 1)))).astype(np.float32)
    x[0, : cols // 3] = 0.0
    x[1, ::5] = -0.0
    if rows > 2:
        x[2, :] = np.float32(1e-40) * rng.integers(-9, 9, cols)  # subnormal
    if rows > 3:
        x[3, ::7] = np.float32(3.0e38) * rng.choice([-1, 1], len(x[3, ::7]))
    if rows > 4:
        x[4, cols // 2] = np.nan
    if rows > 5:
        x[5, 3] = -np.inf
    if rows > 6:
        x[6, :] = rng.integers(-8, 8, cols) * np.float32(0.25)  # ties
    return x


def to_storage(x, t):
    """(bits or values to put in the input buffer, exact f32 values)."""
    if t == "f32":
        return x.copy(), x.copy()
    if t == "f16":
        with np.errstate(over="ignore"):  # huge values become +-inf
            h = x.astype(np.float16)
        return h, h.astype(np.float32)
    b = ref.round_to_bf16(x)
    return (b.view(np.uint32) >> 16).astype(np.uint16), b


def buffer_for(name, dtype, shape, data=None):
    elem = {"bfloat16": "bf16", "float16": "f16", "float32": "f32",
            "uint8": "i8", "int32": "i32"}[dtype]
    buf = interp.Buffer(shape, elem)
    if data is not None:
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        assert raw.size == buf.bytes.size, (name, raw.size, buf.bytes.size)
        buf.bytes[:] = raw
    else:
        # Poison outputs, so a byte the kernel never writes shows up.
        buf.bytes[:] = 0xA5
    return buf


def run_plan(kernels, manifest, inputs):
    """Runs the launches in order; `inputs` maps buffer names to arrays.
    Returns {name: Buffer}."""
    buffers = {}
    for launch in manifest:
        args = []
        for name, dtype, shape, scratch in launch["args"]:
            if name not in buffers:
                if scratch:
                    buffers[name] = buffer_for(name, dtype, shape,
                                               np.zeros(shape or (1,),
                                                        np.uint32))
                else:
                    buffers[name] = buffer_for(name, dtype, shape,
                                               inputs.get(name))
            args.append(buffers[name])
        interp.run_kernel(kernels[launch["name"]], launch["grid"],
                          launch["block"], args)
    return buffers


def nan_block_elements(q, rows, cols):
    """Boolean [rows, cols]: the element's scale marks a NaN block."""
    s = q.scales.reshape(rows, -1)
    if q.scheme == "hif4":
        bad = (s & 0xFF) == 0xFF
    elif q.scheme == "nvfp4":
        bad = s == 0x7F
    else:
        bad = s == 0xFF
    return np.repeat(bad, cols // bad.shape[1], axis=1)


@pytest.mark.parametrize("case", QUANT_CASES, ids=[c[0] for c in QUANT_CASES])
def test_quantize_kernel_matches_reference(case):
    name, rows, cols, in_t, scheme, (ref_scheme, opts), rot = case
    qt = qtype(rows, cols, scheme)
    t_in = MLIR_TYPES[in_t]
    lines = [f"func.func @f(%x: tensor<{rows}x{cols}x{t_in}>) -> {qt} {{"]
    src, t = "%x", t_in
    if rot:
        size, seed, inverse, rt = rot
        lines.append(
            f"  %r = fp4.rotate %x hadamard {size}" +
            (f" seed {seed}" if seed is not None else "") + " axis 1" +
            (" inverse" if inverse else "") +
            f" : tensor<{rows}x{cols}x{t_in}> -> tensor<{rows}x{cols}x{rt}>")
        src, t = "%r", rt
    lines += [f"  %q = fp4.quantize {src} : tensor<{rows}x{cols}x{t}> -> {qt}",
              f"  return %q : {qt}", "}"]
    kernels, manifest = compile_kernels("\n".join(lines))
    assert manifest and all(l["op"] == "fp4.quantize" for l in manifest)
    if name == "mx_hadamard32_large":
        # The fast path: rotation and block entirely in registers.
        assert interp.count_ops(kernels[manifest[0]["name"]],
                                "gpu.shuffle") == 0

    stored, x = to_storage(make_input(rows, cols, zlib.crc32(name.encode()) % 1000), in_t)
    y = x
    if rot:
        size, seed, inverse, rt = rot
        y = ref.hadamard_rotate(x, size, randomized=seed is not None,
                                seed=seed or 0, inverse=inverse)
        if rt == "bf16":
            y = ref.round_to_bf16(y)
        elif rt == "f16":
            with np.errstate(over="ignore", invalid="ignore"):
                y = y.astype(np.float16).astype(np.float32)
    q = ref.quantize(y, ref_scheme, **opts)

    out = run_plan(kernels, manifest, {"input": stored})
    codes = out["result.codes"].bytes.reshape(rows, cols // 2)
    valid = ~nan_block_elements(q, rows, cols)[:, ::2]
    mismatch = (codes != q.codes) & valid
    assert not mismatch.any(), (
        f"{mismatch.sum()} code bytes differ, first at "
        f"{np.argwhere(mismatch)[0]}")
    if ref_scheme == "hif4":
        meta = out["result.metadata"].bytes.view(np.uint32)
        np.testing.assert_array_equal(meta, q.scales.reshape(-1))
    else:
        np.testing.assert_array_equal(out["result.scales"].bytes,
                                      q.scales.reshape(-1))
    if ref_scheme == "nvfp4":
        ts = out["result.tensor_scale"].bytes.view(np.float32)[0]
        assert ts.view(np.uint32) == np.float32(q.tensor_scale).view(
            np.uint32)
    if ref_scheme == "macro":
        np.testing.assert_array_equal(
            out["result.factors"].bytes.view(np.uint16), q.aux.reshape(-1))


@pytest.mark.parametrize("case", DEQUANT_CASES,
                         ids=[c[0] for c in DEQUANT_CASES])
def test_dequantize_kernel_matches_reference(case):
    name, rows, cols, scheme, (ref_scheme, opts), out_t = case
    qt = qtype(rows, cols, scheme)
    mlir = (f"func.func @f(%q: {qt}) -> tensor<{rows}x{cols}x{out_t}> {{\n"
            f"  %x = fp4.dequantize %q : {qt} -> "
            f"tensor<{rows}x{cols}x{out_t}>\n"
            f"  return %x : tensor<{rows}x{cols}x{out_t}>\n}}")
    kernels, manifest = compile_kernels(mlir)
    q = ref.quantize(make_input(rows, cols, zlib.crc32(name.encode()) % 1000), ref_scheme,
                     **opts)
    inputs = {"input.codes": q.codes}
    if ref_scheme == "hif4":
        inputs["input.metadata"] = q.scales
    else:
        inputs["input.scales"] = q.scales
    if ref_scheme == "nvfp4":
        inputs["input.tensor_scale"] = np.array([q.tensor_scale], np.float32)
    if ref_scheme == "macro":
        inputs["input.factors"] = q.aux
    out = run_plan(kernels, manifest, inputs)["result"].bytes
    want = ref.dequantize(q)
    if out_t == "bf16":
        got = (out.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        want = ref.round_to_bf16(want)
    elif out_t == "f16":
        got = out.view(np.float16).astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            want = want.astype(np.float16).astype(np.float32)
    else:
        got = out.view(np.float32)
    got = got.reshape(rows, cols)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32),
                                  want[~nan].view(np.uint32))
