#!/usr/bin/env python3
"""Compile-time weight quantization speed: fp4-opt -fp4-fold-constants on a
large bf16 weight held as a dense_resource blob.

Generates a [rows, cols] bf16 weight (default 14336 x 4096, an LLM MLP
projection) with a fixed seed, writes it as MLIR with the weight in the
file's dialect_resources section, and for each scheme runs

  direct:  fp4.quantize of the weight, then -fp4-fold-constants
  matmul:  linalg.matmul x * B with B = W^T stored [cols, rows], then
           -fp4-quantize{operands=weights} -fp4-fold-constants (the weight
           is folded through the linalg.transpose fp4-quantize inserts)

under /usr/bin/time -v, printing wall time and peak RSS. A parse-only run
(fp4-opt with no pass) shows what reading and printing the blobs costs.

--verify checks the MXFP4 (direct) output bytes against an independent
numpy + ml_dtypes implementation of numerics.md section 2 (floor rule).

Usage: bench/fold_speed.py [--fp4-opt build/bin/fp4-opt] [--workdir DIR]
       [--rows 14336] [--cols 4096] [--schemes mxfp4,nvfp4,hif4]
       [--modes direct,matmul] [--verify] [--threads-off]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

try:
    import ml_dtypes
except ImportError:  # only --verify needs it
    ml_dtypes = None

SCHEMES = {
    "mxfp4": ("#fp4.mxfp4", "f4E2M1FN"),
    "nvfp4": ("#fp4.nvfp4", "f4E2M1FN"),
    "hif4": ("#fp4.hif4", "!fp4.s1p2"),
    "mxfp4_macro": ("#fp4.mxfp4_macro", "f4E2M1FN"),
}


def bf16_weight(rows, cols, seed):
    """bf16 bits of N(0, 0.02^2) weights (round to nearest even from f32)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02)
    bits = w.view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def write_resource(f, name, array, alignment):
    """Writes `name: "0x<alignment><bytes>"` in hex, in slices so that the
    hex text never exists whole in memory."""
    f.write(f'      {name}: "0x')
    f.write(alignment.to_bytes(4, "little").hex().upper())
    flat = array.reshape(-1).view(np.uint8)
    step = 1 << 24
    for i in range(0, flat.size, step):
        f.write(flat[i:i + step].tobytes().hex().upper())
    f.write('"')


def write_direct(path, bits, scheme, elt):
    rows, cols = bits.shape
    qt = f"!fp4.tensor<{rows}x{cols}x{elt}, {scheme}, axis = 1>"
    with open(path, "w") as f:
        f.write(f"func.func @weights() -> {qt} {{\n"
                f"  %w = arith.constant dense_resource<w0> : "
                f"tensor<{rows}x{cols}xbf16>\n"
                f"  %q = fp4.quantize %w : tensor<{rows}x{cols}xbf16> -> {qt}\n"
                f"  return %q : {qt}\n}}\n\n")
        f.write("{-#\n  dialect_resources: {\n    builtin: {\n")
        write_resource(f, "w0", bits, 2)
        f.write("\n    }\n  }\n#-}\n")


def write_matmul(path, bits):
    """y[16, N] = x[16, K] * B[K, N] with B = W^T as the constant."""
    n, k = bits.shape
    with open(path, "w") as f:
        f.write(f"func.func @mlp(%x: tensor<16x{k}xbf16>) -> tensor<16x{n}xf32> {{\n"
                f"  %b = arith.constant dense_resource<w0> : tensor<{k}x{n}xbf16>\n"
                f"  %zero = arith.constant 0.0 : f32\n"
                f"  %e = tensor.empty() : tensor<16x{n}xf32>\n"
                f"  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x{n}xf32>) "
                f"-> tensor<16x{n}xf32>\n"
                f"  %y = linalg.matmul ins(%x, %b : tensor<16x{k}xbf16>, "
                f"tensor<{k}x{n}xbf16>) outs(%acc : tensor<16x{n}xf32>) "
                f"-> tensor<16x{n}xf32>\n"
                f"  return %y : tensor<16x{n}xf32>\n}}\n\n")
        f.write("{-#\n  dialect_resources: {\n    builtin: {\n")
        write_resource(f, "w0", np.ascontiguousarray(bits.T), 2)
        f.write("\n    }\n  }\n#-}\n")


def timed(cmd):
    """Runs cmd under /usr/bin/time -v; returns (wall seconds, peak RSS MiB)."""
    res = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True,
                         text=True)
    if res.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr[-4000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)",
                     res.stderr)
    h, m, s = wall.groups()
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                        res.stderr).group(1)) / 1024
    return seconds, rss


def read_resource(path, name):
    """Bytes of blob `name` (alignment word dropped) from printed MLIR."""
    pattern = re.compile(rf'^\s*{name}: "0x([0-9A-F]+)"', re.M)
    with open(path) as f:
        m = pattern.search(f.read())
    if not m:
        sys.exit(f"no resource {name} in {path}")
    return bytes.fromhex(m.group(1))[4:]


def mxfp4_oracle(bits):
    """numerics.md 2, floor rule, from scratch: codes [rows, cols/2] and E8M0
    bytes [rows, cols/32]."""
    x = (bits.astype(np.uint32) << 16).view(np.float32)
    blocks = x.reshape(x.shape[0], -1, 32)
    amax = np.abs(blocks).max(axis=2)
    field = (amax.view(np.uint32) >> 23).astype(np.int64)
    e = np.clip(field - 129, -127, 127)  # floor(log2 amax) - 2; amax 0 -> -127
    scale = (e + 127).astype(np.uint8)
    factor = np.ldexp(np.float64(1), -e).astype(np.float32)[:, :, None]
    codes = (blocks * factor).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    codes = codes.reshape(x.shape[0], -1) & 0xF
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    return packed, scale


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fp4-opt", default=os.path.join(
        os.path.dirname(__file__), "..", "build", "bin", "fp4-opt"))
    p.add_argument("--workdir", default=None)
    p.add_argument("--rows", type=int, default=14336)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--schemes", default="mxfp4,nvfp4,hif4")
    p.add_argument("--modes", default="direct,matmul")
    p.add_argument("--verify", action="store_true")
    p.add_argument("--threads-off", action="store_true",
                   help="also time with --mlir-disable-threading")
    args = p.parse_args()

    workdir = args.workdir or tempfile.mkdtemp(prefix="fold_speed_")
    os.makedirs(workdir, exist_ok=True)
    fp4_opt = os.path.abspath(args.fp4_opt)
    bits = bf16_weight(args.rows, args.cols, args.seed)
    print(f"weight {args.rows}x{args.cols} bf16 ({bits.nbytes / 2**20:.0f} MiB), "
          f"workdir {workdir}, {os.cpu_count()} cores")
    print(f"{'scheme':<12}{'mode':<8}{'threads':<9}{'wall s':>8}{'peak RSS MiB':>14}")

    modes = args.modes.split(",")
    matmul_path = os.path.join(workdir, "matmul.mlir")
    if "matmul" in modes:
        write_matmul(matmul_path, bits)
    for name in args.schemes.split(","):
        scheme, elt = SCHEMES[name]
        direct_path = os.path.join(workdir, f"direct_{name}.mlir")
        out_path = os.path.join(workdir, f"out_{name}.mlir")
        runs = []
        if "direct" in modes:
            write_direct(direct_path, bits, scheme, elt)
            runs.append(("parse", [fp4_opt, direct_path, "-o", os.devnull]))
            runs.append(("direct", [fp4_opt, direct_path, "-fp4-fold-constants",
                                    "-o", out_path]))
        if "matmul" in modes:
            runs.append(("matmul", [fp4_opt, matmul_path,
                                    f"-fp4-quantize=scheme={name} operands=weights",
                                    "-fp4-fold-constants", "-o",
                                    os.path.join(workdir, f"out_mm_{name}.mlir")]))
        for mode, cmd in runs:
            variants = [("on", cmd)]
            if args.threads_off and mode != "parse":
                variants.append(("off", cmd + ["--mlir-disable-threading"]))
            for threads, c in variants:
                wall, rss = timed(c)
                print(f"{name:<12}{mode:<8}{threads:<9}{wall:>8.2f}{rss:>14.0f}",
                      flush=True)
        if args.verify and name == "mxfp4" and "direct" in modes:
            if ml_dtypes is None:
                sys.exit("--verify needs ml_dtypes")
            codes, scales = mxfp4_oracle(bits)
            got_codes = read_resource(out_path, "fp4_w0_codes")
            got_scales = read_resource(out_path, "fp4_w0_scales")
            ok = (got_codes == codes.tobytes() and got_scales == scales.tobytes())
            print(f"verify mxfp4 against the numpy/ml_dtypes oracle: "
                  f"{'bit-exact' if ok else 'MISMATCH'}")
            if not ok:
                sys.exit(1)


if __name__ == "__main__":
    main()
