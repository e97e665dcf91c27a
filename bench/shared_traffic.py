#!/usr/bin/env python3
"""Shared-memory traffic of the full recipe's kernels, counted on the CPU.

Runs the full recipe (rotate + outlier top-2 + 2:4 residual, weight
outliers split from the weight) at M x N x K through the kernel interpreter
(test/python/gpu_kernel_interp.py with COUNT_SHARED) and prints, per launch
and access kind (ld / st / cp.async by width, wgmma operand reads), the
requests, bytes, wavefronts (the bank model: a phase of 32 / 16 / 8 lanes
for 4 / 8 / 16-byte accesses, one distinct word per bank per wavefront)
and the conflict-free minimum. Exact counts of the kernel's access
pattern, no timing: a kernel form can be compared before it reaches a
GPU. The interpreter runs every thread, so keep N and K small (N = 256,
K = 4096: about a second); wavefronts per weight element carry over to
the large shapes.

    python3 bench/shared_traffic.py 16 128 1024 [--options "..."]
        [--json FILE]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from test_gpu_interp_shared_stats import recipe_stats  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("m", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("--options", default="",
                    help="convert-fp4-to-gpu options (chip is sm_90a)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    stats = recipe_stats(args.m, args.n, args.k, args.options)
    elements = args.n * args.k
    print(f"full recipe {args.m} x {args.n} x {args.k}, sm_90a, options "
          f"'{args.options}'")
    print("| launch | access | requests | bytes | wavefronts | minimum | "
          "x minimum | wavefronts per 1K weight elements |")
    print("|---|---|---|---|---|---|---|---|")
    for variant, kinds in stats.items():
        for kind, st in sorted(kinds.items()):
            print(f"| {variant} | {kind} | {st['requests']} | {st['bytes']} "
                  f"| {st['wavefronts']} | {st['ideal']} | "
                  f"{st['wavefronts'] / max(1, st['ideal']):.2f} | "
                  f"{1000 * st['wavefronts'] / elements:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"m": args.m, "n": args.n, "k": args.k,
                       "options": args.options, "stats": stats}, f, indent=1)


if __name__ == "__main__":
    main()
