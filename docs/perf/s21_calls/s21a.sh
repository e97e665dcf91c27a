#!/usr/bin/env bash
# Session 21, call A: the f16x2 compare of the register patch (branch
# s20-patch-f16x2-compare, .dev/f16x2) checked on the GPU and timed against
# main's kernels of the same cases (.dev/s21/main), two repetitions
# alternating; then ncu pipe utilization of the 16-row products (main full,
# f16x2 full, residual, plain W4A4).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
K="recipe_outlier_k1_m16_n77_k224 recipe_rot_outl_resid_m12_n77_k352 recipe_rot_outl_resid_m16_n77_k224"
python3 bench/gpu_check.py --kernels .dev/f16x2 --recipes-only --only $K 2>&1 | tail -5
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2))"; }
R="bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096"
for rep in 1 2; do
  for v in s21/main f16x2; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only $R --json /tmp/x.json 2>&1 | show
  done
done
echo "== main residual/plain"
python3 bench/gpu_bench.py --kernels .dev/s21/main --no-peers --recipes-only --only bench_residual_24_m16_n14336_k4096 bench_plain_m16_n14336_k4096 --json /tmp/x.json 2>&1 | show
for vc in "s21/main bench_full_m16_n14336_k4096" "f16x2 bench_full_m16_n14336_k4096" "s21/main bench_residual_24_m16_n14336_k4096" "s21/main bench_plain_m16_n14336_k4096"; do
  set -- $vc
  echo "== ncu $1 $2"
  timeout 80 ncu --clock-control none --kernel-name regex:fp4_matmul --launch-count 1 --page raw --section ComputeWorkloadAnalysis --section WarpStateStats --section SpeedOfLight \
    python3 bench/gpu_bench.py --kernels .dev/$1 --no-peers --recipes-only --only $2 --json /tmp/y.json 2>&1 \
    > $OUT/ncu_$(echo $1 | tr / _)_$2.txt 2>&1
  grep -E "pipe_(alu|fma|fmaheavy|fmalite|fp16|shared|tensor|lsu|xu|uniform|adu|cbu).*(pct|ratio)|issue_stalled_[a-z_]+_per_warp_active|gpu__time_duration.sum|sm__inst_executed.avg.per_cycle_active |sm__throughput.avg.pct" $OUT/ncu_$(echo $1 | tr / _)_$2.txt | awk '$NF+0 > 0.5 || /time/ {print "   ",$1,$(NF-1),$NF}' | head -40
done
