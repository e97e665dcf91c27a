#!/usr/bin/env bash
# Session 25, call 1: session 24's pending s24f.sh without the ablations
# (branch s24-ablation was lost with the old checkout): (1) the GPU check of
# the packed entries (python3 bench/sparse_entries_check.py build
# .dev/s24/check, here); (2) decode-outliers=packed (.dev/s24/packed:
# build_gpu_kernels.py --recipes --only-recipes --chip sm_90a --only
# bench_full_m16_n14336_k4096 bench_outlier_k2_m16_n14336_k4096 --options
# decode-outliers=packed) against main's patch (.dev/k24slim: --recipes
# --chip sm_90a --only the plain/residual/full/outlier_k2 m16 cases and
# w4a4_m1_n14336_k4096), 3 repetitions; (3) the W4A4 1-row matmul repeat.
set -uo pipefail
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
for rep in 1 2 3; do
  python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F $O --json /tmp/x.json 2>&1 | show main
  python3 bench/gpu_bench.py --kernels .dev/s24/packed --no-peers --recipes-only --breakdown --only $F $O --json /tmp/x.json 2>&1 | show packed
done
for rep in 1 2; do
python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --only w4a4_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep -E "^\| w4a4_m1"
done
echo done
