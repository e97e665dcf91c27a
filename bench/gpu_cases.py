"""The GPU kernels the device scripts check and time: one MLIR function per
case, compiled here by bench/build_gpu_kernels.py (fp4-opt, no GPU needed)
into bench/kernels/<case>/ (kernels.json + PTX), which the device call
carries to the H200 for bench/gpu_check.py and bench/gpu_bench.py.

Each case is one fp4 op on static shapes:
  matmul    C[M,N] = A[M,K] x W[N,K]^T, W quantized along K; A bf16 (W4A16)
            or quantized too (W4A4)
  quantize  bf16 [R,K] -> quantized along K, optionally after fp4.rotate
  dequantize quantized [R,K] -> bf16
"""

SCHEMES = {
    "mxfp4": "#fp4.mxfp4<block_size = 32>",
    "nvfp4": "#fp4.nvfp4",
}


def qtype(rows, cols, scheme):
    return f"!fp4.tensor<{rows}x{cols}xf4E2M1FN, {SCHEMES[scheme]}, axis = 1>"


def matmul(name, m, n, k, scheme="mxfp4", w4a4=False, out="f32", bench=False):
    return dict(name=name, kind="matmul", m=m, n=n, k=k, scheme=scheme,
                w4a4=w4a4, out=out, bench=bench)


def quantize(name, rows, cols, scheme="mxfp4", rotate=0, seed=None,
             bench=False):
    return dict(name=name, kind="quantize", rows=rows, cols=cols,
                scheme=scheme, rotate=rotate, seed=seed, bench=bench)


def dequantize(name, rows, cols, scheme="mxfp4", bench=False):
    return dict(name=name, kind="dequantize", rows=rows, cols=cols,
                scheme=scheme, bench=bench)


CASES = [
    # The peer table's shapes (bench=True: timed by gpu_bench.py).
    matmul("mm_m1_n4096_k4096", 1, 4096, 4096, bench=True),
    matmul("mm_m1_n14336_k4096", 1, 14336, 4096, bench=True),
    matmul("mm_m1_n4096_k14336", 1, 4096, 14336, bench=True),
    matmul("mm_m16_n14336_k4096", 16, 14336, 4096, bench=True),
    # The prefill family's medium class (M 17..64: GPUConfigSelection.cpp).
    matmul("mm_m32_n14336_k4096", 32, 14336, 4096, bench=True),
    matmul("mm_m64_n14336_k4096", 64, 14336, 4096, bench=True),
    matmul("mm_m128_n14336_k4096", 128, 14336, 4096, bench=True),
    matmul("mm_m4096_n4096_k4096", 4096, 4096, 4096, bench=True),
    matmul("w4a4_m1_n14336_k4096", 1, 14336, 4096, w4a4=True, bench=True),
    matmul("w4a4_m16_n14336_k4096", 16, 14336, 4096, w4a4=True, bench=True),
    matmul("w4a4_m32_n14336_k4096", 32, 14336, 4096, w4a4=True, bench=True),
    matmul("w4a4_m4096_n4096_k4096", 4096, 4096, 4096, w4a4=True, bench=True),
    matmul("nv_m1_n14336_k4096", 1, 14336, 4096, scheme="nvfp4", bench=True),
    matmul("nv_m4096_n4096_k4096", 4096, 4096, 4096, scheme="nvfp4",
           bench=True),
    # Tails and odd shapes (correctness only).
    matmul("tail_m3_n37_k96", 3, 37, 96),
    matmul("tail_m9_n200_k160", 9, 200, 160, out="bf16"),
    matmul("tail_m1_n1_k32", 1, 1, 32),
    matmul("tail_m200_n77_k224", 200, 77, 224),
    matmul("tail_m130_n136_k4128", 130, 136, 4128, out="bf16"),
    matmul("tail_w4a4_m5_n45_k352", 5, 45, 352, w4a4=True),
    matmul("tail_w4a4_m150_n70_k96", 150, 70, 96, w4a4=True),
    matmul("tail_nv_m7_n33_k48", 7, 33, 48, scheme="nvfp4"),
    matmul("tail_nv_m140_n40_k80", 140, 40, 80, scheme="nvfp4", out="f16"),
    # Medium-class tails: partial row, column and K (128) tiles.
    matmul("tail_m40_n200_k288", 40, 200, 288, out="bf16"),
    matmul("tail_w4a4_m17_n77_k224", 17, 77, 224, w4a4=True),
    matmul("tail_nv_m50_n40_k80", 50, 40, 80, scheme="nvfp4"),
    # Activation quantizers.
    quantize("q_4096x4096", 4096, 4096, bench=True),
    quantize("q_h32_4096x4096", 4096, 4096, rotate=32, seed=7, bench=True),
    quantize("q_h32_16x4096", 16, 4096, rotate=32, seed=7, bench=True),
    quantize("q_nv_4096x4096", 4096, 4096, scheme="nvfp4", bench=True),
    quantize("q_tail_37x96", 37, 96),
    quantize("q_h16_tail_5x160", 5, 160, rotate=16),
    quantize("q_h128_33x256", 33, 256, rotate=128, seed=3),
    quantize("q_nv_tail_19x48", 19, 48, scheme="nvfp4"),
    dequantize("dq_4096x4096", 4096, 4096, bench=True),
    dequantize("dq_tail_37x96", 37, 96),
    dequantize("dq_nv_tail_19x48", 19, 48, scheme="nvfp4"),
]


def mlir(case):
    """The MLIR function of a case."""
    if case["kind"] == "matmul":
        m, n, k, s = case["m"], case["n"], case["k"], case["scheme"]
        lhs = qtype(m, k, s) if case["w4a4"] else f"tensor<{m}x{k}xbf16>"
        w = qtype(n, k, s)
        out = f"tensor<{m}x{n}x{case['out']}>"
        return (f"func.func @{case['name']}(%a: {lhs}, %w: {w}) -> {out} {{\n"
                f"  %y = fp4.matmul %a, %w : {lhs}, {w} -> {out}\n"
                f"  return %y : {out}\n}}\n")
    if case["kind"] == "quantize":
        r, c, s = case["rows"], case["cols"], case["scheme"]
        x = f"tensor<{r}x{c}xbf16>"
        body, src = "", "%x"
        if case["rotate"]:
            seed = f" seed {case['seed']}" if case["seed"] is not None else ""
            body = (f"  %r = fp4.rotate %x hadamard {case['rotate']}{seed} "
                    f"axis 1 : {x} -> {x}\n")
            src = "%r"
        q = qtype(r, c, s)
        return (f"func.func @{case['name']}(%x: {x}) -> {q} {{\n{body}"
                f"  %q = fp4.quantize {src} : {x} -> {q}\n"
                f"  return %q : {q}\n}}\n")
    r, c, s = case["rows"], case["cols"], case["scheme"]
    q = qtype(r, c, s)
    out = f"tensor<{r}x{c}xbf16>"
    return (f"func.func @{case['name']}(%q: {q}) -> {out} {{\n"
            f"  %y = fp4.dequantize %q : {q} -> {out}\n"
            f"  return %y : {out}\n}}\n")
