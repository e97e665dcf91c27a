#!/usr/bin/env python3
"""Compile every case of bench/gpu_cases.py to PTX + kernels.json (runs here,
needs fp4-opt; no GPU). Also assembles each image with ptxas -v for sm_90 and
writes the register / spill / shared-memory report to
bench/kernels/ptxas.txt. Usage:

    python3 bench/build_gpu_kernels.py [--out bench/kernels] [--only NAME..]
        [--options "decode-warps=8 ..."]
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

from fp4 import gpu  # noqa: E402
import gpu_cases  # noqa: E402
import gpu_recipes  # noqa: E402


def ptxas_report(ptx, ptxas, chip="sm_90"):
    r = subprocess.run([ptxas, f"-arch={chip}", "-v", ptx, "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"ptxas failed on {ptx}:\n{r.stderr}")
    rows = []
    for func, body in re.findall(r"Compiling entry function '(\w+)'.*?\n(.*?)(?=ptxas info    : Compiling|\Z)",
                                 r.stderr, re.S):
        regs = re.search(r"Used (\d+) registers", body)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", body)
        smem = re.search(r"(\d+) bytes smem", body)
        rows.append((func, int(regs.group(1)) if regs else -1,
                     f"{spill.group(1)}/{spill.group(2)}" if spill else "?",
                     int(smem.group(1)) if smem else 0))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "kernels"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--options", default="",
                    help="more fp4-pipeline-nvvm options for every kernel, "
                         "recipes included (e.g. prefill-residual=sparse)")
    ap.add_argument("--chip", default="sm_90",
                    help="target chip of every kernel (sm_90a: the prefill "
                         "kernels on wgmma)")
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--recipes", action="store_true",
                    help="also build the accuracy-recipe cases "
                         "(bench/gpu_recipes.py) into OUT/recipes/")
    ap.add_argument("--only-recipes", action="store_true",
                    help="build only the recipe cases")
    ap.add_argument("--fold-weights", choices=["auto", "yes", "no"],
                    default="auto",
                    help="recipe bench cases: weight parts as folded "
                         "constants (yes), as arguments (no), or folded "
                         "from gpu_recipes.FOLDED_FROM_M rows (auto)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.recipes or args.only_recipes:
        fp4_opt = os.environ.get("FP4_OPT") or os.path.join(
            os.environ.get("FP4_BUILD_DIR", os.path.join(HERE, "..", "build")),
            "bin", "fp4-opt")
        fp4_run = os.path.join(HERE, "..", "tools", "fp4-run", "fp4-run")
        for case in gpu_recipes.CHECK_CASES:
            if args.only and case["name"] not in args.only:
                continue
            gpu_recipes.build(case, os.path.join(args.out, "recipes",
                                                 case["name"]),
                              fp4_opt, fp4_run, args.chip, args.options)
            print(case["name"], flush=True)
        for case in gpu_recipes.BENCH_CASES:
            if args.only and case["name"] not in args.only:
                continue
            d = os.path.join(args.out, "recipes", case["name"])
            fold = {"auto": None, "yes": True, "no": False}[args.fold_weights]
            gpu.compile(gpu_recipes.bench_mlir(case, fold_weight=fold),
                        chip=args.chip, out_dir=d,
                        options=("format=isa " + args.options).strip())
            # The input holds the folded-weight constants of some rows
            # (tens of MB): the device needs only the kernels.
            os.remove(os.path.join(d, "input.mlir"))
            print(case["name"], flush=True)
        if args.only_recipes:
            return
    report = []
    for case in gpu_cases.CASES:
        if args.only and case["name"] not in args.only:
            continue
        d = os.path.join(args.out, case["name"])
        gpu.compile(gpu_cases.mlir(case), chip=args.chip, out_dir=d,
                    options=("format=isa " + args.options).strip())
        manifest = gpu.read_manifest(d)
        for k in manifest["kernels"]:
            rows = ptxas_report(os.path.join(d, k["image"]), args.ptxas,
                                args.chip)
            for func, regs, spill, smem in rows:
                if func == k["name"]:
                    report.append(f"{case['name']:28s} {k['name']:22s} "
                                  f"{k['variant']:18s} regs {regs:3d} "
                                  f"spill(st/ld) {spill:7s} smem {smem + k['shared_bytes']}")
        print(report[-1] if report else case["name"], flush=True)
    with open(os.path.join(args.out, "ptxas.txt"), "w") as f:
        f.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
