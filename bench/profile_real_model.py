#!/usr/bin/env python3
"""Times and profiles one recipe's CPU forward on the real model of
bench/eval_real_model.py (the same export, recipe passes and lowering).

    PY=$(bash scripts/install_torch_mlir.sh | tail -n 1)
    FP4_BUILD_DIR=build $PY bench/profile_real_model.py full-correction \
        --forwards 16 --perf build/eval/full-correction.perf

Compiles the recipe (examples/recipes/NAME.json; "fp32": no quantization),
runs one forward, then --forwards more and prints the mean time per
forward. With --perf FILE it records them with `perf record -F 999 -g -p
<this process>` and prints `perf report --sort dso,symbol` (the kernels of
libfp4_cpu_runtime.so show by name; JIT-compiled loops show as addresses).
Needs OUT/minilm_l6.mlir from an eval_real_model.py run (--out).
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import eval_real_model as E  # noqa: E402

sys.path.insert(0, os.path.join(E.ROOT, "python"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("recipe", help="examples/recipes/NAME.json, or fp32")
    p.add_argument("--out", default=os.path.join(E.ROOT, "build", "eval"),
                   help="eval_real_model.py's output folder (the export)")
    p.add_argument("--forwards", type=int, default=10)
    p.add_argument("--perf", metavar="FILE", help="perf record into FILE")
    p.add_argument("--lowering", choices=sorted(E.LOWERINGS),
                   default="fast-serial")
    args = p.parse_args()
    import numpy as np
    from fp4 import ir
    mlir = os.path.join(args.out, "minilm_l6.mlir")
    if not os.path.exists(mlir):
        sys.exit(f"{mlir} not found: run bench/eval_real_model.py --out "
                 f"{args.out} first")
    passes = ""
    if args.recipe != "fp32":
        path = os.path.join(E.ROOT, "examples", "recipes", args.recipe + ".json")
        if not os.path.exists(path):
            sys.exit(f"no recipe {path}")
        passes = (f"fp4-quantize{{recipe={path}}},{E.RECIPE_PASSES}"
                  "fp4-fold-constants,canonicalize")
    _, batches, _ = E.load_model()
    with open(mlir) as f:
        text = f.read()
    _, rec, engine = E.compile_and_run(ir, text, args.recipe, passes,
                                       batches[:1], 1,
                                       E.LOWERINGS[args.lowering], 2)
    print(f"compile total {rec['compile_total_s']:.1f} s", flush=True)
    ids, mask = batches[0]
    perf = None
    if args.perf:
        perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p",
                                 str(os.getpid()), "-o", args.perf])
        time.sleep(1)
    t = time.perf_counter()
    for _ in range(args.forwards):
        engine.invoke("main", ids.numpy(), mask.numpy(),
                      results=(ir.MemRef(np.float32, 3),))
    per = (time.perf_counter() - t) / args.forwards
    if perf:
        perf.send_signal(2)
        perf.wait()
    print(f"{args.recipe}: {per * 1e3:.0f} ms per forward "
          f"({args.forwards} forwards, load {os.getloadavg()})")
    if perf:
        report = subprocess.run(["perf", "report", "-i", args.perf,
                                 "--no-children", "--sort", "dso,symbol",
                                 "--stdio", "-g", "none"],
                                capture_output=True, text=True)
        lines = [l for l in report.stdout.splitlines()
                 if l.strip() and not l.startswith("#")]
        print("\n".join(l[:160].rstrip() for l in lines[:15]))


if __name__ == "__main__":
    main()
