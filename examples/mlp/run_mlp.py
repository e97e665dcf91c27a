#!/usr/bin/env python3
"""The main job: an LLM MLP block through the fp4 compiler, end to end.

For each recipe it runs

    fp4-opt mlp.mlir -fp4-quantize{scheme=...} -fp4-fold-constants -fp4-pipeline-cpu

on the SwiGLU block written by gen_mlp.py (bf16 weights in PyTorch layout),
JIT-compiles the resulting LLVM dialect through the project's C API
(python/fp4/ir.py), runs it on fixed activations and prints, per matmul, the
relative Frobenius error against the f32 computation done in numpy (f64
accumulation):

  own  - the matmul against the f32 product of the *same* inputs
         (the error this matmul adds by itself);
  e2e  - against the all-f32 block (errors of earlier layers included).

The first row runs the same pipeline without fp4-quantize: it checks the CPU
lowering itself (its error is f32 rounding only).

Then (unless --no-accuracy) the accuracy table of docs/Accuracy.md: the same
block with realistic channel outliers in its activations, through the
accuracy recipes (macro-scaling, rotations, outlier fallback, residual
correction, other formats), with the error components of fp4-error-report
per recipe and the end-to-end errors (examples/mlp/accuracy.py).

Usage: run_mlp.py [--tokens T --hidden D --intermediate F --seed S]
                  [--json OUT.json] [--workdir DIR]
                  [--no-accuracy] [--accuracy-json OUT.json] [--accuracy-plot OUT.png]
"""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "examples" / "mlp"))
import accuracy  # noqa: E402
from fp4 import ir  # noqa: E402

BUILD = pathlib.Path(os.environ.get("FP4_BUILD_DIR", ROOT / "build"))
FP4_OPT = BUILD / "bin" / "fp4-opt"

RECIPES = [
    ("f32 (no fp4)", None),
    ("MXFP4 floor", "#fp4.mxfp4"),
    ("MXFP4 ceil", "#fp4.mxfp4<scale_rounding = ceil>"),
    ("MXFP4 even", "#fp4.mxfp4<scale_rounding = even>"),
    ("MXFP4 rceil", "#fp4.mxfp4<scale_rounding = rceil>"),
    ("NVFP4", "#fp4.nvfp4"),
    ("NVFP4 4/6", "#fp4.nvfp4<four_over_six = true>"),
    ("HiF4", "#fp4.hif4"),
    ("MXFP4 macro-256", "#fp4.mxfp4_macro"),
    ("MXFP4 macro search=8", "#fp4.mxfp4_macro<search = 8>"),
]
MATMULS = ("gate", "up", "down")


def fmt(v):
    return f"{v:>11.5f}" if v >= 1e-3 else f"{v:>11.1e}"


def rel_err(y, ref):
    ref = ref.astype(np.float64)
    return float(np.linalg.norm(y.astype(np.float64) - ref) / np.linalg.norm(ref))


def silu_mul(g, u):
    g = g.astype(np.float64)
    return g / (1.0 + np.exp(-g)) * u


def compile_recipe(src, scheme, out):
    passes = []
    if scheme is not None:
        passes += [f'-fp4-quantize=scheme="{scheme}"', "-fp4-fold-constants"]
    passes += ["-fp4-pipeline-cpu"]
    cmd = [str(FP4_OPT), str(src), *passes, "-o", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {shlex.join(cmd)} failed:\n{proc.stderr}")
    return cmd, time.perf_counter() - t0


def run_compiled(path, x, shapes):
    ctx = ir.Context()
    module = ctx.parse_module(pathlib.Path(path).read_text())
    engine = ir.ExecutionEngine(module, opt_level=2)
    outs = engine.invoke("mlp", x, results=[ir.MemRef(np.float32, 2)] * 4)
    for out, shape in zip(outs, shapes):
        assert out.shape == shape, (out.shape, shape)
    return outs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--intermediate", type=int, default=768)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--workdir", help="keep the generated IR here")
    ap.add_argument("--no-accuracy", action="store_true",
                    help="skip the accuracy table (docs/Accuracy.md)")
    ap.add_argument("--accuracy-json", help="write the accuracy figures here")
    ap.add_argument("--accuracy-plot", help="write the accuracy plot (PNG) here")
    args = ap.parse_args()

    work = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="fp4-mlp-"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / "mlp.mlir"
    subprocess.run([sys.executable, str(ROOT / "examples/mlp/gen_mlp.py"), str(src),
                    "--tokens", str(args.tokens), "--hidden", str(args.hidden),
                    "--intermediate", str(args.intermediate), "--seed", str(args.seed)],
                   check=True)
    data = np.load(work / "mlp.npz")
    x = np.ascontiguousarray(data["x"])
    wg, wu, wd = (data[k].astype(np.float64) for k in ("w_gate", "w_up", "w_down"))
    T, D, F = args.tokens, args.hidden, args.intermediate
    shapes = [(T, F), (T, F), (T, F), (T, D)]

    # The f32 computation (f64 accumulation of the bf16-valued weights).
    g_ref = x.astype(np.float64) @ wg.T
    u_ref = x.astype(np.float64) @ wu.T
    h_ref = silu_mul(g_ref, u_ref)
    d_ref = h_ref @ wd.T

    print(f"SwiGLU MLP block: tokens={T} hidden={D} intermediate={F}, "
          f"bf16 weights (seed {args.seed}), activations N(0,1); W4A4: both "
          f"operands of every matmul quantized along K.")
    print(f"IR: {src}")
    header = (f"{'recipe':<22}" + "".join(f"{m + ' own':>11}{m + ' e2e':>11}" for m in MATMULS)
              + f"{'compile s':>11}")
    print(header)
    print("-" * len(header))
    results = []
    for name, scheme in RECIPES:
        out = work / f"mlp.{len(results)}.llvm.mlir"
        cmd, seconds = compile_recipe(src, scheme, out)
        gate, up, h, down = run_compiled(out, x, shapes)
        own = {"gate": rel_err(gate, g_ref), "up": rel_err(up, u_ref),
               "down": rel_err(down, h.astype(np.float64) @ wd.T)}
        e2e = {"gate": own["gate"], "up": own["up"], "down": rel_err(down, d_ref)}
        results.append({"recipe": name, "scheme": scheme, "own": own, "e2e": e2e,
                        "compile_seconds": seconds, "command": shlex.join(cmd)})
        print(f"{name:<22}" + "".join(fmt(own[m]) + fmt(e2e[m]) for m in MATMULS)
              + f"{seconds:>11.2f}")
    print(f"\nReproduce one row: {results[1]['command']}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))

    if not args.no_accuracy:
        acc = accuracy.run_all(T, D, F, args.seed, workdir=work / "accuracy")
        print()
        print(accuracy.format_table(acc))
        if args.accuracy_json:
            pathlib.Path(args.accuracy_json).write_text(json.dumps(acc, indent=2))
        if args.accuracy_plot:
            accuracy.plot(acc, args.accuracy_plot)


if __name__ == "__main__":
    main()
