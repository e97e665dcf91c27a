#!/usr/bin/env bash
# Session 24's prepared call (for the next session): (1) the GPU check of
# the packed entries, decode-outliers=sparse and =packed
# (python3 bench/sparse_entries_check.py build .dev/s24/check, here);
# (2) decode-outliers=packed timed against main's patch (kernels:
# python3 bench/build_gpu_kernels.py --recipes --only-recipes --chip
# sm_90a --only bench_full_m16_n14336_k4096 bench_outlier_k2_m16_n14336_k4096
# --out .dev/s24/packed --options "decode-outliers=packed"; main's in
# .dev/k24slim, a subset of .dev/kernels_s24); (3) TIMING-ONLY ablations
# (branch s24-ablation aef230c, results wrong; built with
# FP4_S23_ABLATION=<a> python3 bench/build_gpu_kernels.py --recipes
# --only-recipes --chip sm_90a --only bench_full_m16_n14336_k4096 --out
# .dev/s24/ab_<a with , as _>): patchnone (the patch form without entries:
# their loads die), loadsonly (the loads and keys folded by xor into one
# pair), patch1 / patch0 (as in s24c.sh), packedloads (main's patch with
# the entries read lane-contiguous) and packedloads,patch1: the patch's
# floor split into loads and instructions. Carry [".dev/k24slim",
# ".dev/s24", ".dev/s24f.sh"].
set -uo pipefail
# The repository root, from .dev/ or docs/perf/s24/ alike.
root=$(cd "$(dirname "$0")" && pwd)
while [ ! -d "$root/bench" ] && [ "$root" != / ]; do root=$(dirname "$root"); done
cd "$root"
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== packed entries check"
python3 bench/sparse_entries_check.py check .dev/s24/check 2>&1 | tail -13
F=bench_full_m16_n14336_k4096; O=bench_outlier_k2_m16_n14336_k4096
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', '$1', r['case'][:36], round(r['us'],2), r.get('kernels',''))"; }
for rep in 1 2; do
  python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F $O --json /tmp/x.json 2>&1 | show main
  python3 bench/gpu_bench.py --kernels .dev/s24/packed --no-peers --recipes-only --breakdown --only $F $O --json /tmp/x.json 2>&1 | show packed
done
for v in ab_patchnone ab_loadsonly ab_patch1 ab_packedloads ab_packedloads_patch1 ab_patch0; do
  python3 bench/gpu_bench.py --kernels .dev/s24/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show $v
done
python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --only w4a4_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep -E "^\| w4a4_m1"
echo done
