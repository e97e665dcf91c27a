"""The prefill medium-class sweep (docs/perf/medium_m_2026-12-04.txt): the
recipe benchmark rows of bench/gpu_recipes.py at M = 4..64 under the
selection's choice ("base") and under explicit prefill tiles (decode-max-m=0
plus the prefill-tile options), each launch also timed alone.

  FP4_BUILD_DIR=build python3 bench/medium_sweep.py build OUT   # here (MLIR)
  python3 bench/medium_sweep.py run OUT                          # device

and the plain matmul rows at M = 96, 128, 256 under prefill tile variants
(docs/perf/prefill_k128_2026-12-04.txt):

  FP4_BUILD_DIR=build python3 bench/medium_sweep.py build-matmul OUT
  python3 bench/medium_sweep.py run-matmul OUT

The run modes need torch and triton (gpu_bench.py) and FP4_REFERENCE_LIB."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

P = ("decode-max-m=0 prefill-warps-m={wm} prefill-warps-n={wn} "
     "prefill-tile-m={tm} prefill-tile-n={tn} prefill-tile-k={tk} "
     "prefill-stages={st}")
RECIPES = ["plain", "full", "outlier_k2", "residual_24", "full_act"]
N, K = 14336, 4096


def pref(tm, tn, tk, wm, wn, st=3):
    return P.format(tm=tm, tn=tn, tk=tk, wm=wm, wn=wn, st=st)


def plan():
    out = []  # (tag, m, options)
    for tag, opts in {"m16n64k128": pref(16, 64, 128, 1, 4),
                      "m16n64k256": pref(16, 64, 256, 1, 4),
                      "m16n32k128": pref(16, 32, 128, 1, 2),
                      "m16n32k256": pref(16, 32, 256, 1, 2),
                      "m16n64k128s4": pref(16, 64, 128, 1, 4, 4),
                      "m16n128k128": pref(16, 128, 128, 1, 8),
                      "m16n64k128w2": pref(16, 64, 128, 1, 2)}.items():
        out.append((tag, 16, opts))
    for m in (4, 8, 16):
        out.append(("base", m, ""))
    for m in (4, 8):
        out.append(("m16n64k128", m, pref(16, 64, 128, 1, 4)))
    for m in (32, 64):
        out.append(("base", m, ""))
        out.append((f"m{m}n128k128", m, pref(m, 128, 128, m // 16, 4)))
        out.append((f"m{m}n64k128", m,
                    pref(m, 64, 128, m // 16, 4 if m == 32 else 2)))
        out.append((f"m{m}n64k64", m, pref(m, 64, 64, m // 16, 2)))
    # The pre-medium prefill defaults, for the same-run comparison.
    for m in (32, 64):
        out.append(("old_default", m, pref(128, 128, 64, 2, 4)))
    # The decode plans at 16 rows (the boundary given: no chain goes to
    # the prefill kernel).
    out.append(("decode_pinned", 16, "decode-max-m=16"))
    return out


def build(root):
    from fp4 import gpu
    import gpu_recipes
    cases = {}
    for tag, m, opts in plan():
        for r in RECIPES:
            case = dict(name=f"bench_{r}_m{m}_n{N}_k{K}", recipe=r, m=m, n=N,
                        k=K)
            d = os.path.join(root, tag, "recipes", case["name"])
            # Forced prefill at decode sizes needs the weight parts proven.
            fold = None if not opts else m > 16 or "decode-max-m=0" in opts
            gpu.compile(gpu_recipes.bench_mlir(case, fold_weight=fold),
                        chip="sm_90", out_dir=d,
                        options=("format=isa " + opts).strip())
            os.remove(os.path.join(d, "input.mlir"))
            cases[case["name"]] = case
        print(tag, m, flush=True)
    json.dump({"cases": list(cases.values()),
               "tags": sorted({t for t, _, _ in plan()})},
              open(os.path.join(root, "plan.json"), "w"))


def run(root):
    import torch
    import gpu_bench
    import gpu_recipes
    spec = json.load(open(os.path.join(root, "plan.json")))
    gpu_recipes.BENCH_CASES = spec["cases"]
    g = torch.Generator(device="cuda").manual_seed(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for tag in spec["tags"]:
        print("==", tag, flush=True)
        gpu_bench.bench_recipes(os.path.join(root, tag), None, g, l2,
                                breakdown=True)


MATMUL_VARIANTS = {
    "default": "",  # the selection's choice
    "k64": "prefill-tile-k=64",  # the family's 128 x 128 x 64 tile
    "k128": "prefill-tile-k=128",
    "k128s4": "prefill-tile-k=128 prefill-stages=4",
    "m64k128": "prefill-tile-m=64 prefill-tile-n=128 prefill-tile-k=128 "
               "prefill-warps-m=2 prefill-warps-n=4",
}


def matmul_cases():
    import gpu_cases
    out = []
    for m in (96, 128, 256):
        for w4a4 in (False, True):
            out.append(gpu_cases.matmul(
                f"{'w4a4' if w4a4 else 'mm'}_m{m}_n{N}_k{K}", m, N, K,
                w4a4=w4a4, bench=True))
    return out


def build_matmul(root):
    from fp4 import gpu
    import gpu_cases
    for tag, opts in MATMUL_VARIANTS.items():
        for case in matmul_cases():
            d = os.path.join(root, tag, case["name"])
            gpu.compile(gpu_cases.mlir(case), chip="sm_90", out_dir=d,
                        options=("format=isa " + opts).strip())
        print(tag, flush=True)


def run_matmul(root):
    import torch
    import gpu_bench
    from fp4 import gpu
    g = torch.Generator(device="cuda").manual_seed(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for rep in range(2):
        for tag in MATMUL_VARIANTS:
            for case in matmul_cases():
                ks = gpu.load(os.path.join(root, tag, case["name"]))
                us, _ = gpu_bench.time_case(ks, case, l2, g)
                print(rep, tag, case["name"], round(us, 1), flush=True)


MODES = {"build": build, "run": run, "build-matmul": build_matmul,
         "run-matmul": run_matmul}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODES:
        sys.exit(__doc__)
    MODES[sys.argv[1]](sys.argv[2])
