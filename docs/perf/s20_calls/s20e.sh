#!/usr/bin/env bash
# Session 20, call D: (1) the double-slot register form (branch
# s20-double-slots, .dev/db) checked on the GPU and timed against main's
# kernels of the same cases (.dev/stage_old = main 8cbb606), two
# repetitions alternating; (2) the one-run table of main 8cbb606.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
C="mm_m16_n14336_k4096 w4a4_m16_n14336_k4096"
R="bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096"
K="tail_m9_n200_k160 recipe_rot_outl_resid_m16_n77_k224 recipe_rot_outl_resid_m12_n77_k352 recipe_residual_24_m16_n77_k224 recipe_outlier_k1_m16_n77_k224"
python3 bench/gpu_check.py --kernels .dev/db --only $C $R $K 2>&1 | grep -vE "^ok " | tail -4
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:36], round(r['us'],2))"; }
for rep in 1 2; do
  for v in stage_old db; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --only $C --json /tmp/x.json 2>&1 | show
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only $R --json /tmp/x.json 2>&1 | show
  done
done
echo "== run_h200 all"
(time bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "gpu_check:|real" $OUT/all.txt | tail -3
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/all.txt | head -30
