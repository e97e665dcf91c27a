#!/usr/bin/env python3
"""The next device call, prepared and kept in the repository: kernel
variants that have not run on the GPU yet, each checked (gpu_check) and
timed (gpu_bench, two repetitions, no peers) in one call, next to the main
build's same rows, after the decode products' measured bytes floor
(bench/stream_floor.py). Benchmarks, not tests.

    python3 bench/device_plan.py build [--out .dev/plan]   # here (needs fp4-opt)
    python3 bench/device_plan.py run [--kernels .dev/plan] # on the GPU machine
        [--variants main entries ...]                        # a subset per call

build compiles each variant's cases with bench/build_gpu_kernels.py
(--chip sm_90a --recipes --only ...) into OUT/<variant>/ (a few MB: carry
the folder with the device call); run prints, per variant, the check lines
and the timed rows, writes $OUT/plan_<variant>_<rep>.json, and exits
non-zero if any check failed (a variant whose check fails is not timed).
Every variant states what decides it (docs/Performance.md records the
outcome).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

W4A16_M16 = "mm_m16_n14336_k4096"
W4A4_M16 = "w4a4_m16_n14336_k4096"
# Decode-sized recipe check cases whose weight outliers are split at run
# time (so proven +-0 in the quantized weight): the weight-tile form's
# correctness on the hardware, M = 1 to 16.
ENTRY_CHECKS = ["recipe_outlier_k1_m8_n77_k224", "recipe_outlier_k1_m16_n77_k224",
                "recipe_outlier_k2_m8_n77_k224", "recipe_outlier_k2_m16_n77_k224",
                "recipe_outlier_k2_m1_n200_k1024",
                "recipe_outlier_k4_m8_n77_k224", "recipe_outlier_k4_m16_n77_k224",
                "recipe_rot_outl_resid_m8_n77_k224",
                "recipe_rot_outl_resid_m16_n77_k224",
                "recipe_rot_outl_resid_m12_n77_k352",
                "recipe_rot_outl_resid_m1_n200_k512",
                "recipe_w4a16_outlier_k2_m8_n77_k224",
                "recipe_w4a16_outlier_k2_m16_n77_k224"]
ENTRY_BENCH = ["bench_full_m16_n14336_k4096", "bench_outlier_k1_m16_n14336_k4096",
               "bench_outlier_k2_m16_n14336_k4096",
               "bench_outlier_k4_m16_n14336_k4096"]
# The decode matmul cases from 9 rows (N and K tails included).
DECODE_CHECKS = [W4A16_M16, W4A4_M16, "tail_m9_n200_k160",
                 "tail_w4a4_m5_n45_k352", "tail_m3_n37_k96"]

# The decode tail form at M = 1: its check cases (the lane-banked sum at
# K = 1024, the [K, M] one at K = 512) and the recipes with weight
# outliers.
TAIL_CHECKS = ["recipe_outlier_k2_m1_n200_k1024",
               "recipe_rot_outl_resid_m1_n200_k512"]
TAIL_BENCH = ["bench_full_m1_n14336_k4096", "bench_outlier_k1_m1_n14336_k4096",
              "bench_outlier_k2_m1_n14336_k4096"]

VARIANTS = [
    # The baseline of the same call: today's defaults.
    dict(name="main", options="",
         check=ENTRY_CHECKS + DECODE_CHECKS,
         bench=[W4A16_M16, W4A4_M16, "bench_plain_m16_n14336_k4096",
                "bench_residual_24_m16_n14336_k4096", "mm_m1_n14336_k4096",
                "w4a4_m1_n14336_k4096", "bench_plain_m1_n14336_k4096",
                "bench_full_m1_n14336_k4096",
                "bench_outlier_k1_m1_n14336_k4096",
                "bench_outlier_k2_m1_n14336_k4096"] + ENTRY_BENCH),
    # The weight-tile form (GPU.md, "The decode kernel on warp-group
    # MMA"; decode-outliers=tile): the default for proven weight outliers
    # from 9 rows if the full recipe beats main's (prefill kernel, 52.1 us
    # in session 15). At M = 1 (the check case) by the option only.
    dict(name="entries", options="decode-outliers=tile",
         check=ENTRY_CHECKS, bench=ENTRY_BENCH),
    dict(name="entries_w4", options="decode-outliers=tile decode-warps=4",
         check=["recipe_rot_outl_resid_m16_n77_k224"], bench=ENTRY_BENCH[:1]),
    dict(name="entries_w12", options="decode-outliers=tile decode-warps=12",
         check=["recipe_rot_outl_resid_m16_n77_k224",
                "recipe_rot_outl_resid_m12_n77_k352"],
         bench=ENTRY_BENCH[:1]),
    dict(name="entries_u256",
         options="decode-outliers=tile decode-k-unroll=256",
         check=["recipe_rot_outl_resid_m16_n77_k224"], bench=ENTRY_BENCH[:1]),
    # The wgmma form software pipelined (decode-prefetch on it, session
    # 16): the next group's weight words in flight while a group is staged
    # and multiplied. The default from 9 rows if faster at both M = 16
    # products and the weight-tile form.
    dict(name="pf1", options="decode-mma=wgmma decode-prefetch=1",
         check=DECODE_CHECKS + ["recipe_rot_outl_resid_m16_n77_k224",
                                "recipe_rot_outl_resid_m12_n77_k352",
                                "recipe_residual_24_m16_n77_k224"],
         bench=[W4A16_M16, W4A4_M16, "bench_plain_m16_n14336_k4096",
                "bench_residual_24_m16_n14336_k4096"] + ENTRY_BENCH[:2]),
    dict(name="pf2", options="decode-mma=wgmma decode-prefetch=2",
         check=DECODE_CHECKS + ["recipe_rot_outl_resid_m16_n77_k224"],
         bench=[W4A16_M16, W4A4_M16] + ENTRY_BENCH[:1]),
    # Bytes in flight per SM = resident K warp groups x (prefetch + 1)
    # groups of 4 KB of codes: at 16 rows the form runs at about 1.2 TB/s
    # of 4.25 (session 15), as Little's law predicts for 4 groups of one.
    dict(name="pf1_w12",
         options="decode-mma=wgmma decode-prefetch=1 decode-warps=12",
         check=DECODE_CHECKS + ["recipe_rot_outl_resid_m16_n77_k224"],
         bench=[W4A16_M16, W4A4_M16] + ENTRY_BENCH[:1]),
    dict(name="pf2_w4",
         options="decode-mma=wgmma decode-prefetch=2 decode-warps=4",
         check=DECODE_CHECKS + ["recipe_rot_outl_resid_m16_n77_k224"],
         bench=[W4A16_M16, W4A4_M16] + ENTRY_BENCH[:1]),
    # Two 64-row warp groups per K warp sharing its activation slot
    # (decode-rows-per-cta=128): each CTA stages the [32, K] activations
    # once per 128 weight rows instead of 64 (224 CTAs re-read 57 MB of
    # activations from L2 at 16 x 14336 x 4096 with 32 rows, as much as
    # the weights' DRAM bytes); 112 CTAs on 132 SMs, so 2 K warps.
    dict(name="rows128",
         options="decode-mma=wgmma decode-rows-per-cta=128 decode-warps=16 "
                 "decode-prefetch=1",
         check=DECODE_CHECKS[:2] + ["tail_m9_n200_k160",
                                    "recipe_rot_outl_resid_m16_n77_k224"],
         bench=[W4A16_M16, W4A4_M16, "bench_residual_24_m16_n14336_k4096"] +
         ENTRY_BENCH[:1]),
    dict(name="entries_rows128",
         options="decode-outliers=tile decode-rows-per-cta=128",
         check=["recipe_rot_outl_resid_m16_n77_k224",
                "recipe_outlier_k2_m16_n77_k224"],
         bench=ENTRY_BENCH[:2]),
    # The register form of the weight entries (decode-outliers=patch,
    # session 20): each lane replaces the entries' elements in its own
    # dequantized A fragments, so the warp-group form keeps register-A
    # wgmma and has no shared weight tile (the tile form's 16 x 14336 x
    # 4096 product runs at L1/TEX 85% on its tile traffic, session 19).
    # The default for proven weight outliers from 9 rows if faster than
    # main's tile (full recipe) and prefill entries (outlier-only 16 rows).
    dict(name="patch", options="decode-outliers=patch",
         check=ENTRY_CHECKS, bench=ENTRY_BENCH),
    # At M = 1 the same option moves the recipes with proven weight
    # outliers from the tail form (the activation sum copied into each
    # CTA, gathered after the main loop) to the mma.sync form with the
    # patch (no sum, no tail; session 20's first call had them on the
    # warp-group form instead: +41-49%). Proven needs the weight parts
    # folded (the M = 1 rows otherwise pass them as arguments); m1_folded
    # is the default plan on the same folded constants (the tail form).
    dict(name="patch_m1", options="decode-outliers=patch",
         fold="yes", check=TAIL_CHECKS, bench=TAIL_BENCH),
    dict(name="patch_m1_pf1", options="decode-outliers=patch decode-prefetch=1",
         fold="yes", check=TAIL_CHECKS, bench=TAIL_BENCH),
    dict(name="patch_m1_w8", options="decode-outliers=patch decode-warps=8",
         fold="yes", check=TAIL_CHECKS, bench=TAIL_BENCH),
    dict(name="m1_folded", options="", fold="yes",
         check=TAIL_CHECKS[:1], bench=TAIL_BENCH),
    dict(name="patch_w12", options="decode-outliers=patch decode-warps=12",
         check=["recipe_rot_outl_resid_m16_n77_k224",
                "recipe_rot_outl_resid_m12_n77_k352"],
         bench=ENTRY_BENCH[:2]),
    dict(name="patch_pf2", options="decode-outliers=patch decode-prefetch=2",
         check=["recipe_rot_outl_resid_m16_n77_k224"], bench=ENTRY_BENCH[:2]),
    dict(name="patch_rows128",
         options="decode-outliers=patch decode-rows-per-cta=128 "
                 "decode-warps=16",
         check=["recipe_rot_outl_resid_m16_n77_k224",
                "recipe_outlier_k2_m16_n77_k224"],
         bench=ENTRY_BENCH[:2]),
    # The activation prep reading its codes and scales back from shared
    # copies (prep-readback=shared, session 16): the default if no recipe
    # row gets slower; checked at decode and small prefill sizes (where
    # its codes fit the 40 KB it stages).
    dict(name="prep_shared", options="prep-readback=shared",
         check=ENTRY_CHECKS +
         ["recipe_rot_outl_resid_m130_n77_k224",
          "recipe_residual_24_m130_n77_k224",
          "recipe_rot_outl_resid_m40_n77_k224",
          "recipe_rot_outl_act_resid_m130_n77_k224",
          "recipe_outlier_k4_m8_n77_k2560"],
         bench=["bench_full_m1_n14336_k4096",
                "bench_outlier_k2_m1_n14336_k4096",
                "bench_residual_24_m16_n14336_k4096",
                "bench_full_m16_n14336_k4096"]),
    # M = 1: the mma.sync form pipelined one group ahead, with the decode
    # tail form (its loop carries no outlier entries, so prefetch costs
    # only the weight words' registers; measured slower with the loop
    # form in session 9, never with the tail).
    dict(name="m1_pf1", options="decode-prefetch=1",
         check=["recipe_rot_outl_resid_m1_n200_k512",
                "recipe_outlier_k2_m1_n200_k1024", "tail_m3_n37_k96",
                "tail_w4a4_m5_n45_k352"],
         bench=["mm_m1_n14336_k4096", "w4a4_m1_n14336_k4096",
                "bench_plain_m1_n14336_k4096", "bench_full_m1_n14336_k4096",
                "bench_outlier_k2_m1_n14336_k4096"]),
    # Programmatic dependent launch (fp4-gpu-dependent-launch, session
    # 17): each kernel may start while the one before it finishes, its
    # weight prefetched into L2 meanwhile; at M = 1 the activation prep's
    # (quantizer's) latency overlaps the product's weight stream. The
    # default if faster at both decode sizes for plain and the recipes;
    # pdl_nopf separates the overlap from the prefetch. gpu_check launches
    # them the same way (fp4.gpu.load), so it checks the waits too.
    dict(name="pdl",
         options="dependent-launch=true dependent-prefetch-bytes=67108864",
         check=["recipe_rot_outl_resid_m1_n200_k512",
                "recipe_outlier_k2_m1_n200_k1024",
                "recipe_rot_outl_resid_m16_n77_k224",
                "recipe_rot_outl_resid_m130_n77_k224",
                "tail_m3_n37_k96", "tail_w4a4_m5_n45_k352", W4A4_M16],
         bench=["mm_m1_n14336_k4096", "w4a4_m1_n14336_k4096",
                "bench_plain_m1_n14336_k4096", "bench_full_m1_n14336_k4096",
                "bench_outlier_k2_m1_n14336_k4096",
                "bench_residual_24_m16_n14336_k4096",
                "bench_plain_m16_n14336_k4096",
                "bench_full_m16_n14336_k4096"]),
    dict(name="pdl_nopf",
         options="dependent-launch=true dependent-prefetch-bytes=0",
         check=["recipe_rot_outl_resid_m1_n200_k512", "tail_w4a4_m5_n45_k352"],
         bench=["bench_plain_m1_n14336_k4096", "bench_full_m1_n14336_k4096",
                "bench_plain_m16_n14336_k4096",
                "bench_full_m16_n14336_k4096"]),
    # The decode tail form's CTA shape at M = 1 (session 19, H100): the
    # default is one 16-row group with 8 K warps (full recipe product
    # 23.3 us); tail32 is the earlier two groups of 4 (24.2), tail16w16
    # one group of 16 (23.2, outlier top-1 +10%). The options reach every
    # decode kernel of the recipe, plain W4A4's too, so only the recipes
    # with weight outliers are timed.
    dict(name="tail32", options="decode-rows-per-cta=32 decode-warps=8",
         check=TAIL_CHECKS, bench=TAIL_BENCH),
    dict(name="tail16w16", options="decode-rows-per-cta=16 decode-warps=16",
         check=TAIL_CHECKS, bench=TAIL_BENCH),
    # The default's 256-element groups are two per warp at K = 4096, each
    # waited for in turn; 512 issues all four chunks at once (56
    # registers), 128 runs four groups but fits a fifth CTA per SM (48
    # registers; ptxas, session 19).
    dict(name="tail_u512", options="decode-k-unroll=512",
         check=TAIL_CHECKS, bench=TAIL_BENCH),
    dict(name="tail_u128", options="decode-k-unroll=128",
         check=TAIL_CHECKS, bench=TAIL_BENCH),
    # Three K warp groups on the wgmma form (session 15, call 3: W4A16
    # 16 x 14336 x 4096 22.8 us against 26.2 with two, not checked then):
    # the default for bf16 activations up to 16 rows if it passes and
    # stays faster; W4A4 measured slower with 12 (31.4 against 25.6).
    dict(name="warps12", options="decode-warps=12",
         check=DECODE_CHECKS, bench=[W4A16_M16, W4A4_M16]),
]


def selected(names):
    unknown = set(names or []) - {v["name"] for v in VARIANTS}
    if unknown:
        raise SystemExit(f"device_plan: no variant {' '.join(sorted(unknown))}")
    if not names:
        return list(VARIANTS)
    # In the order given: a call cut off by its time limit has timed the
    # variants named first (each writes its JSON as it goes).
    by_name = {v["name"]: v for v in VARIANTS}
    return [by_name[n] for n in dict.fromkeys(names)]


def build(out, names):
    for v in selected(names):
        d = os.path.join(out, v["name"])
        cmd = [sys.executable, os.path.join(HERE, "build_gpu_kernels.py"),
               "--out", d, "--chip", "sm_90a", "--recipes",
               "--only"] + sorted(set(v["check"] + v["bench"]))
        if v["options"]:
            cmd += ["--options", v["options"]]
        if v.get("fold"):
            cmd += ["--fold-weights", v["fold"]]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def run(kernels, reps, names):
    out = os.environ.get("OUT", "/tmp")
    # gpu_check's CPU reference on the GPU machine (as bench/run_h200.sh).
    if "FP4_REFERENCE_LIB" not in os.environ:
        subprocess.run(["bash", os.path.join(ROOT, "scripts",
                                             "build_gpu_libs.sh"),
                        "/tmp/fp4lib"], check=True, stdout=subprocess.DEVNULL)
        os.environ["FP4_REFERENCE_LIB"] = "/tmp/fp4lib/libFP4Reference.so"
    os.environ["PYTHONUNBUFFERED"] = "1"
    # The decode products' bytes floor on the same GPU (bench/stream_floor.py,
    # $OUT/stream_floor.json): what the recipe-over-plain ratios compare with.
    subprocess.run([sys.executable, os.path.join(HERE, "stream_floor.py"),
                    "--json", os.path.join(out, "stream_floor.json")],
                   check=False)
    failed = []
    for v in selected(names):
        d = os.path.join(kernels, v["name"])
        print(f"== {v['name']} ({v['options'] or 'defaults'})", flush=True)
        r = subprocess.run([sys.executable, os.path.join(HERE, "gpu_check.py"),
                            "--kernels", d, "--only"] + v["check"])
        if r.returncode == 0 and "dependent-launch=true" in v["options"]:
            # The dependent launches against plain ones, bit for bit.
            r = subprocess.run([sys.executable,
                                os.path.join(HERE, "pdl_check.py"),
                                "--kernels", d])
        if r.returncode:
            failed.append(v["name"])
            print(f"== {v['name']}: gpu_check failed, not timed", flush=True)
            continue
        for rep in range(reps):
            # The first repetition also times each launch of a recipe alone
            # (where the time goes: prep, product).
            subprocess.run([sys.executable, os.path.join(HERE, "gpu_bench.py"),
                            "--kernels", d, "--no-peers", "--only"] +
                           v["bench"] + ["--json", os.path.join(
                               out, f"plan_{v['name']}_{rep + 1}.json")] +
                           (["--breakdown"] if rep == 0 else []),
                           check=False)
    summarize(out, reps, [v for v in selected(names)
                          if v["name"] not in failed])
    print(f"device_plan: {len(failed)} variant(s) failing gpu_check: "
          f"{' '.join(failed) or '-'}")
    return 1 if failed else 0


def summarize(out, reps, variants):
    """One table: each variant's rows (mean of the repetitions) next to
    main's same case, and $OUT/plan_summary.json."""
    times = {}
    for v in variants:
        for rep in range(reps):
            path = os.path.join(out, f"plan_{v['name']}_{rep + 1}.json")
            if not os.path.exists(path):
                continue
            for row in json.load(open(path))["rows"]:
                times.setdefault((v["name"], row["case"]), []).append(
                    (row["us"], row.get("variant", ""),
                     row.get("kernels")))
    summary = []
    print()
    print("| variant | case | kernels | us (reps) | main us | vs main |")
    print("|---|---|---|---|---|---|")
    for (name, case), runs in sorted(times.items()):
        us = [r[0] for r in runs]
        mean = sum(us) / len(us)
        base = times.get(("main", case))
        base_mean = sum(r[0] for r in base) / len(base) if base else None
        delta = (f"{100 * (mean / base_mean - 1):+.1f}%"
                 if base_mean and name != "main" else "-")
        print(f"| {name} | {case} | {runs[0][1]} | "
              f"{' / '.join(f'{x:.2f}' for x in us)} | "
              f"{f'{base_mean:.2f}' if base_mean else '-'} | {delta} |")
        summary.append(dict(variant=name, case=case, kernels=runs[0][1],
                            us=us, main_us=base_mean,
                            breakdown=next((r[2] for r in runs if r[2]),
                                           None)))
    json.dump(summary, open(os.path.join(out, "plan_summary.json"), "w"),
              indent=1)


def main():
    ap = argparse.ArgumentParser()
    # summary: the table again from a call's JSONs (--out: the fetched
    # $OUT), for a call cut off before it printed one.
    ap.add_argument("mode", choices=["build", "run", "summary"])
    ap.add_argument("--out", default=os.path.join(ROOT, ".dev", "plan"))
    ap.add_argument("--kernels", default=None)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--variants", nargs="*",
                    help="only these variants (a call is at most 10 min: "
                         "split the plan over calls)")
    args = ap.parse_args()
    if args.mode == "build":
        build(args.out, args.variants)
        return 0
    if args.mode == "summary":
        summarize(args.out, args.reps, selected(args.variants))
        return 0
    return run(args.kernels or args.out, args.reps, args.variants)


if __name__ == "__main__":
    sys.exit(main())
