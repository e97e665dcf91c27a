"""Runs the decode matmul kernels that fp4-opt generates on the CPU.

test_gpu_decode_layout.py checks a Python port of DecodeMatmulKernel.cpp;
this file checks the IR itself: `fp4-opt -convert-fp4-to-gpu` emits the
kernel, gpu_kernel_interp.py (the interpreter of the elementwise kernels)
runs it with the few extra ops the decode family uses, and the result must
match an f64 product of the dequantized operands to 1e-5 (relative
Frobenius norm, the GPU acceptance bound). The extra ops:
  nvvm.mma.sync    m16n8k16 bf16 -> f32, per warp, in the PTX fragment
                   layouts (f64 products, summed in f64 and rounded to f32)
  nvvm.prmt        default mode byte permute
  llvm.bitcast     i32 <-> vector<2xbf16> (bf16 carried as bits, low half
                   first)
  arith.mulf       on vector<2xbf16>: f32 product (exact for bf16 inputs)
                   rounded to bf16, nearest even, subnormals kept
  arith.extf/truncf with bf16 and f16
  memref.atomic_rmw addf (split-K partial sums), in thread order
  llvm.inline_asm  only the empty side-effecting barrier of the software
                   pipelined main loop (a no-op)
  scf.for          with per-warp lower bounds (warps split K) and per-CTA
                   upper bounds (split-K slices): each thread
                   runs the iterations of its own range
fp4-opt comes from $FP4_BUILD_DIR (default /work/main/build).
"""
import os
import re
import subprocess

import numpy as np
import pytest

import gpu_kernel_interp as interp
from test_gpu_decode_layout import (bf16_to_f64, random_bf16, random_quant)

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
FP4_OPT = os.path.join(BUILD_DIR, "bin", "fp4-opt")


def bf16_round(x):
    """float32 array -> bf16 bits, round to nearest even (NaN kept)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(nan, (bits >> 16) | 0x40, rounded).astype(np.uint16)


def bf16_value(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


class DecodeLaunch(interp.Launch):
    def exec(self, op, mask):
        name, ins = op.name, [self.val(o) for o in op.operands]
        tin = op.types_in[0] if op.types_in else None
        tout = op.types_out[0] if op.types_out else None
        with np.errstate(all="ignore"):
            if name == "nvvm.prmt":
                assert "permute_mode<default>" in op.props
                lo, hi, sel = ins
                pool = (hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)
                out = np.zeros(self.n, np.uint64)
                for i in range(4):
                    s = (sel.astype(np.uint64) >> np.uint64(4 * i)) & np.uint64(0xF)
                    assert np.all(s < 8), "sign-replicate selectors are not used"
                    out |= ((pool >> (np.uint64(8) * s)) & np.uint64(0xFF)) << np.uint64(8 * i)
                return self.set(op, [out.astype(np.uint32)])
            if name == "llvm.bitcast":
                a = np.ascontiguousarray(ins[0])
                if tout == "vector<2xbf16>":
                    return self.set(op, [a.astype(np.uint32).view(np.uint16).reshape(self.n, 2)])
                assert tout == "i32" and tin == "vector<2xbf16>", (tin, tout)
                return self.set(op, [a.astype(np.uint16).view(np.uint32).reshape(self.n)])
            if name == "arith.mulf" and tout == "vector<2xbf16>":
                a, b = ins
                return self.set(op, [bf16_round(bf16_value(a) * bf16_value(b))])
            if name == "arith.extf" and tin == "bf16":
                return self.set(op, [bf16_value(ins[0]).astype(np.float32)])
            if name == "arith.truncf" and tout in ("bf16", "f16"):
                x = ins[0].astype(np.float32)
                return self.set(op, [bf16_round(x) if tout == "bf16" else x.astype(np.float16)])
            if name == "nvvm.mma.sync":
                return self.set(op, [self.mma(ins)])
            if name == "llvm.inline_asm" and not op.results:
                # The empty side-effecting statement that keeps LLVM from
                # sinking pipelined loads into the loop (no PTX); with
                # results, the warp-group form's wgmma (the base class).
                assert 'asm_string = ""' in op.props, op.props
                return None
            if name == "llvm.extractvalue":
                pos = int(re.search(r"array<i64: (\d+)>", op.props).group(1))
                return self.set(op, [ins[0][pos]])
            if name == "memref.atomic_rmw" and re.search(r"kind = 0 : i64", op.props):
                buf = ins[1]
                assert buf.dtype == np.float32 and not buf.per_cta
                off = self.address(buf, op.operands[2:])
                np.add.at(buf.bytes.view(np.float32), off[mask] // 4,
                          ins[0][mask].astype(np.float32))
                return self.set(op, [ins[0]])
            if name == "scf.for" and not (np.all(ins[0] == ins[0][0]) and
                                          np.all(ins[1] == ins[1][0])):
                return self.nonuniform_for(op, ins, mask)
        return super().exec(op, mask)

    def mma(self, ins):
        """mma.m16n8k16.row.col f32.bf16.bf16.f32 for every warp."""
        assert len(ins) == 10
        warps = self.n // 32
        lane = np.arange(32)
        g, t = lane // 4, lane % 4

        def halves(v):
            w = v.reshape(warps, 32).astype(np.uint32)
            return (bf16_value(w & 0xFFFF).astype(np.float64),
                    bf16_value(w >> 16).astype(np.float64))

        A = np.zeros((warps, 16, 16))
        B = np.zeros((warps, 16, 8))
        for reg, (row, col) in enumerate([(g, 2 * t), (g + 8, 2 * t),
                                          (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
            lo, hi = halves(ins[reg])
            A[:, row, col], A[:, row, col + 1] = lo, hi
        for reg, k in enumerate([2 * t, 2 * t + 8]):
            lo, hi = halves(ins[4 + reg])
            B[:, k, g], B[:, k + 1, g] = lo, hi
        D = np.einsum("wmk,wkn->wmn", A, B)
        out = []
        for reg, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1),
                                          (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            c = ins[6 + reg].reshape(warps, 32).astype(np.float64)
            out.append((D[:, row, col] + c).astype(np.float32).reshape(self.n))
        return out

    def nonuniform_for(self, op, ins, mask):
        lb, ub, step = (x.astype(np.int64) for x in ins[:3])
        assert np.all(step == step[0])
        carried = list(ins[3:])
        args, body = op.regions[0]
        for i in range(int(lb.min()), int(ub.max())):
            active = mask & (i >= lb) & (i < ub) & ((i - lb) % step == 0)
            if not active.any():
                continue
            self.env[args[0][0]] = np.full(self.n, i, np.uint64)
            for (a, _), v in zip(args[1:], carried):
                self.env[a] = v
            new = self.block_ops(body, active)
            carried = [interp.select_threads(active, n, c)
                       for n, c in zip(new, carried)]
        self.set(op, carried)


def matmul_ir(lhs_type, rhs_type, result_type, options="", chip="sm_90"):
    m = re.match(r"(?:tensor|!fp4.tensor)<(\d+)x(\d+)x", lhs_type)
    n = re.match(r"!fp4.tensor<(\d+)x", rhs_type).group(1)
    res = f"tensor<{m.group(1)}x{n}x{result_type}>"
    src = (f"func.func @f(%x: {lhs_type}, %w: {rhs_type}) -> {res} {{\n"
           f"  %y = fp4.matmul %x, %w : {lhs_type}, {rhs_type} -> {res}\n"
           f"  return %y : {res}\n}}\n")
    if not os.path.exists(FP4_OPT):
        pytest.skip(f"fp4-opt not built at {FP4_OPT}")
    out = subprocess.run(
        [FP4_OPT, "-", f"-convert-fp4-to-gpu=chip={chip} {options}".strip(),
         "-mlir-print-op-generic"],
        input=src, capture_output=True, text=True, check=True).stdout
    kernels = interp.parse_manifest(out)
    funcs = interp.parse_kernels(out)
    variants = re.findall(r'variant = "(\w+)"', out)
    for kernel, variant in zip(kernels, variants):
        kernel["variant"] = variant
        kernel["func"] = funcs[kernel["name"]]
    return kernels


def buffer(arg, data):
    _, dtype, shape, _ = arg
    shape = tuple(shape)
    elem = {"bfloat16": "bf16", "uint8": "i8", "float32": "f32", "float16": "f16"}[dtype]
    buf = interp.Buffer(shape, elem)
    if data is not None:
        raw = np.ascontiguousarray(np.asarray(data).astype(buf.dtype)).view(np.uint8).ravel()
        buf.bytes = raw.copy()
    return buf


def quant_type(kind, rows, k, block=32, macro=256):
    scheme = {"mxfp4": f"#fp4.mxfp4<block_size = {block}>", "nvfp4": "#fp4.nvfp4",
              "macro": f"#fp4.mxfp4_macro<macro_block = {macro}>"}[kind]
    return f"!fp4.tensor<{rows}x{k}xf4E2M1FN, {scheme}, axis = 1>"


def components(q):
    out = [q.codes, q.scales]
    if q.kind == "nvfp4":
        out.append(np.array([q.extra], np.float32))
    if q.kind == "macro":
        out.append(q.extra.astype(np.uint16))
    return out


def run(m, n, k, wkind, akind=None, result="f32", options="", block=32, macro=256,
        wscale=(110, 140), chip="sm_90", variant=None):
    rng = np.random.default_rng(m * 7919 + n * 31 + k)
    w = random_quant(rng, wkind, n, k, block=block, macro=macro, scale_range=wscale)
    if akind is None:
        x = random_bf16(rng, m, k)
        lhs_type, lhs_data, a = f"tensor<{m}x{k}xbf16>", [x.astype(np.uint16)], bf16_to_f64(x)
    else:
        xq = random_quant(rng, akind, m, k)
        lhs_type, lhs_data, a = quant_type(akind, m, k), components(xq), xq.dequantize()
    kernels = matmul_ir(lhs_type, quant_type(wkind, n, k, block, macro), result, options,
                        chip)
    assert kernels[0]["variant"] == (
        variant or ("decode_w4a4" if akind else "decode_w4a16"))
    # The plan's buffers by name: inputs and the result in ABI order (the
    # union over the launches), scratch zero-filled like the host does.
    data = lhs_data + components(w) + [None]
    names, args = [], {}
    for kernel in kernels:
        for arg in kernel["args"]:
            if arg[0] not in args:
                args[arg[0]] = arg
                if not arg[3]:
                    names.append(arg[0])
    buffers = {}
    for name, d in zip(names, data):
        buffers[name] = buffer(args[name], d)
    for name, arg in args.items():
        if arg[3]:
            buffers[name] = buffer(arg, None)  # zero-filled
    out = buffers[names[-1]]
    out.bytes[:] = 0xFF  # poison: every element must be written (NaN)
    for kernel in kernels:
        DecodeLaunch(kernel["func"], kernel["grid"], kernel["block"],
                     [buffers[a[0]] for a in kernel["args"]]).run()
    # Split-K: the finalize kernel leaves the scratch zeroed for the next call.
    for name, arg in args.items():
        if arg[3]:
            assert not buffers[name].bytes.any(), f"{name} not zeroed again"
    got = out.bytes.view(out.dtype).reshape(m, n)
    got = bf16_value(got) if result == "bf16" else got.astype(np.float64)
    want = a @ w.dequantize().T
    assert not np.any(np.isnan(got)), "an output was not written"
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    tol = {"f32": 1e-5, "bf16": 8e-3, "f16": 2e-3}[result]
    assert err < tol, err


@pytest.mark.parametrize("m,n,k", [(1, 20, 160), (3, 40, 544), (8, 16, 256),
                                   (13, 33, 288), (16, 17, 1088)])
def test_w4a16_mxfp4(m, n, k):
    run(m, n, k, "mxfp4")


def test_w4a16_mxfp4_tile_options():
    run(5, 24, 1184, "mxfp4", options="decode-warps=4 decode-k-unroll=384")
    run(2, 16, 1024, "mxfp4", options="decode-warps=1 decode-k-unroll=128")


def test_w4a16_extreme_scales_and_bf16_result():
    run(4, 16, 512, "mxfp4", wscale=(0, 250))
    run(9, 18, 640, "mxfp4", result="bf16")


def test_w4a16_nvfp4_f16_result():
    run(3, 20, 416, "nvfp4", result="f16")


def test_w4a16_mxfp4_block_sizes():
    run(2, 16, 448, "mxfp4", block=16)
    run(2, 16, 448, "mxfp4", block=64)


def test_w4a16_macro():
    run(6, 16, 512, "macro", macro=256)
    run(6, 16, 384, "macro", macro=128)


def test_w4a4():
    run(4, 24, 416, "mxfp4", akind="mxfp4")
    run(11, 17, 640, "nvfp4", akind="nvfp4")


def test_split_k_and_rows_per_cta():
    # Split-K slices (atomic partial sums + the finalize kernel) with the
    # K tail (full tail chunks and a partial chunk on the last slice), the N
    # tail, several row groups per CTA sharing the activations, every
    # scheme and result type.
    run(16, 40, 1184, "mxfp4", options="decode-split-k=3 decode-rows-per-cta=32 decode-warps=4")
    run(1, 33, 1056, "mxfp4", options="decode-split-k=2 decode-k-unroll=128")
    run(9, 48, 1024, "mxfp4", result="bf16",
        options="decode-split-k=4 decode-rows-per-cta=48 decode-warps=3 decode-k-unroll=128")
    run(3, 20, 1440, "nvfp4", result="f16", options="decode-split-k=2 decode-warps=2")
    run(6, 32, 1024, "macro", macro=256,
        options="decode-split-k=2 decode-rows-per-cta=32 decode-warps=2")
    run(11, 17, 1184, "nvfp4", akind="nvfp4", options="decode-split-k=2 decode-rows-per-cta=32 decode-warps=4")
    run(4, 24, 1024, "mxfp4", akind="mxfp4", options="decode-split-k=4 decode-k-unroll=128")


def test_split_k_is_a_second_launch():
    lhs, rhs = "tensor<2x1024xbf16>", quant_type("mxfp4", 32, 1024)
    kernels = matmul_ir(lhs, rhs, "f32", "decode-split-k=2 decode-warps=2")
    assert [k["variant"] for k in kernels] == ["decode_w4a16", "decode_splitk_finalize"]
    assert kernels[0]["grid"] == 2 * 2  # row CTAs x slices
    assert [a[0] for a in kernels[1]["args"]] == ["scratch.partial", "result"]
    assert interp.count_ops(kernels[0]["func"], "memref.atomic_rmw") > 0
    (single,) = matmul_ir(lhs, rhs, "f32", "decode-split-k=1")
    assert interp.count_ops(single["func"], "memref.atomic_rmw") == 0


def test_prefetch_depths():
    # Software pipelining of the weight loads (decode-prefetch): none, one
    # and two groups ahead; warps with several, one and no main-loop
    # iterations (the clamped look-ahead loads must never be used), split-K
    # slices whose last group is not the row's last, K tails, every scheme.
    for depth in (0, 1, 2):
        p = f"decode-prefetch={depth}"
        run(3, 40, 1184, "mxfp4", options=f"{p} decode-warps=2 decode-k-unroll=128")
        run(1, 16, 1024, "mxfp4", options=f"{p} decode-warps=3 decode-k-unroll=128")
        run(16, 40, 1440, "mxfp4", options=f"{p} decode-split-k=3 decode-rows-per-cta=32 decode-warps=4 decode-k-unroll=128")
        run(6, 32, 1024, "macro", macro=256, options=f"{p} decode-split-k=2 decode-warps=1 decode-k-unroll=128")
        run(11, 17, 1184, "nvfp4", akind="nvfp4", options=f"{p} decode-warps=2 decode-k-unroll=128")
        run(4, 24, 1024, "mxfp4", akind="mxfp4", options=f"{p} decode-split-k=2 decode-k-unroll=256")


def test_prefetch_loads_ahead():
    # The main loop carries the weight words and scale bytes of `depth`
    # groups ahead as i32 iter_args (2 chunks x 2 rows x (4 words + 1 scale
    # byte) per group), loaded before the current group is converted, and
    # is followed by the empty asm barrier that keeps LLVM from sinking the
    # loads back into the iteration that uses them.
    if not os.path.exists(FP4_OPT):
        pytest.skip(f"fp4-opt not built at {FP4_OPT}")
    src = ("func.func @f(%x: tensor<1x2048xbf16>, %w: !fp4.tensor<32x2048xf4E2M1FN,"
           " #fp4.mxfp4<block_size = 32>, axis = 1>) -> tensor<1x32xf32> {\n"
           "  %y = fp4.matmul %x, %w : tensor<1x2048xbf16>, !fp4.tensor<32x2048xf4E2M1FN,"
           " #fp4.mxfp4<block_size = 32>, axis = 1> -> tensor<1x32xf32>\n"
           "  return %y : tensor<1x32xf32>\n}\n")
    for depth in (0, 1, 2):
        out = subprocess.run(
            [FP4_OPT, "-", "-convert-fp4-to-gpu=chip=sm_90 decode-warps=2 "
             f"decode-split-k=1 decode-k-unroll=256 decode-prefetch={depth}"],
            input=src, capture_output=True, text=True, check=True).stdout
        loops = re.findall(r"scf\.for .*?-> \(([^)]*)\)", out)
        assert len(loops) == 1, loops
        assert loops[0].count("i32") == depth * 2 * 2 * 5, (depth, loops[0])
        assert out.count("llvm.inline_asm") == (2 if depth else 0)


WGMMA = "decode-mma=wgmma"


@pytest.mark.parametrize("args,kw", [
    # M = 16 with a K tail (2 chunks + 96), M = 1 and 13 (N padded to 8 and
    # 16 columns), 32 rows (n32: the stacked products) with a partial chunk,
    # 130 weight rows (3 row CTAs, the last partial) with 4 warps (one K
    # warp group) and bf16 results, extreme scales (E8M0 0 .. 250), blocks
    # of 16, NVFP4 with an f16 result, and k-unroll 256 (two chunks per
    # group, 4 atoms per slot).
    ((16, 77, 352, "mxfp4"), {}),
    ((1, 64, 256, "mxfp4"), {}),
    ((13, 33, 288, "mxfp4"), {}),
    ((32, 70, 1088, "mxfp4"), dict(options=WGMMA + " decode-max-m=32")),
    ((9, 130, 640, "mxfp4"), dict(result="bf16", options=WGMMA + " decode-warps=4")),
    ((4, 16, 512, "mxfp4"), dict(wscale=(0, 250))),
    ((2, 16, 448, "mxfp4"), dict(block=16)),
    ((3, 20, 416, "nvfp4"), dict(result="f16")),
    ((16, 70, 1184, "mxfp4"), dict(options=WGMMA + " decode-k-unroll=256 decode-warps=12")),
    # Software pipelined (decode-prefetch): the next group's weight words
    # in flight while a group's activations are staged and multiplied;
    # depth 1 with two chunks per group and a tail, depth 2 with three K
    # warp groups (groups past the end load clamped, unused words).
    ((16, 77, 1184, "mxfp4"), dict(options=WGMMA + " decode-prefetch=1 decode-k-unroll=256")),
    ((5, 40, 1536, "mxfp4"), dict(options=WGMMA + " decode-prefetch=2 decode-warps=12")),
    # Two 64-row warp groups per K warp sharing its activation slot
    # (decode-rows-per-cta=128): 200 rows (2 CTAs, the second partial), one
    # and two K warps, 32 rows, pipelined.
    ((16, 200, 352, "mxfp4"), dict(options=WGMMA + " decode-rows-per-cta=128")),
    ((10, 130, 1184, "mxfp4"), dict(options=WGMMA + " decode-rows-per-cta=128 decode-warps=16 decode-k-unroll=256")),
    ((32, 70, 640, "mxfp4"), dict(options=WGMMA + " decode-max-m=32 decode-rows-per-cta=128 decode-prefetch=1")),
])
def test_w4a16_wgmma(args, kw):
    # sm_90a's warp-group form: the dequantized weights as wgmma's register
    # A operand, the activations staged into shared memory in the weight
    # fragments' K order (the interpreter models the inline PTX per warp
    # group, the descriptors and the 128-byte swizzle).
    kw.setdefault("options", WGMMA)
    run(*args, chip="sm_90a", variant="decode_w4a16_wgmma", **kw)


@pytest.mark.parametrize("args,kw", [
    ((4, 24, 416, "mxfp4"), dict(akind="mxfp4")),
    ((11, 17, 640, "nvfp4"), dict(akind="nvfp4")),
    ((16, 70, 1184, "mxfp4"), dict(akind="mxfp4")),
    ((12, 70, 1184, "mxfp4"), dict(akind="mxfp4",
                                   options=WGMMA + " decode-prefetch=1")),
    ((16, 150, 416, "mxfp4"), dict(akind="mxfp4",
                                   options=WGMMA + " decode-rows-per-cta=128 decode-warps=16")),
])
def test_w4a4_wgmma(args, kw):
    # W4A4: the activation codes dequantized into the staged B operand with
    # the weights' pairing; from 9 rows the selection's default on sm_90a.
    kw.setdefault("options", WGMMA if args[0] < 9 else "")
    run(*args, chip="sm_90a", variant="decode_w4a4_wgmma", **kw)


def test_wgmma_form_falls_back_for_macro_weights():
    # Macro factors scale per-chunk f32 partial sums: mma.sync only.
    run(6, 16, 512, "macro", chip="sm_90a", options=WGMMA, variant="decode_w4a16")
