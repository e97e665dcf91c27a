"""Builds the M = 16 decode recipe bench cases (bench/gpu_recipes.py) with
decode options (kernel-config overrides of the stacked 32-row decode
launch) into OUT/<tag>/recipes/<case>, for
`gpu_bench.py --recipes-only --breakdown --kernels OUT/<tag>`. Run from the
repository root: FP4_BUILD_DIR=build python3 bench/build_recipe_variants.py OUT
(measured: docs/perf/prep2_variants/, docs/Performance.md)."""
import os, sys
sys.path.insert(0, "python"); sys.path.insert(0, "bench")
from fp4 import gpu
import gpu_recipes
OUT = sys.argv[1]
VARIANTS = {
    "rows64": "decode-rows-per-cta=64",
    "rows128": "decode-rows-per-cta=128",
    "rows64_w16": "decode-rows-per-cta=64 decode-warps=16",
    "w16": "decode-warps=16",
    "w4": "decode-warps=4",
    "ku512": "decode-k-unroll=512",
}
CASES = [c for c in gpu_recipes.BENCH_CASES if c["m"] == 16 and
         c["recipe"] in ("full", "full_act", "residual_24")]
for tag, opts in VARIANTS.items():
    for case in CASES:
        d = os.path.join(OUT, tag, "recipes", case["name"])
        gpu.compile(gpu_recipes.bench_mlir(case), chip="sm_90", out_dir=d,
                    options="format=isa " + opts)
        print(tag, case["name"], flush=True)
