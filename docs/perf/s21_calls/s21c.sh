#!/usr/bin/env bash
# Session 21, call C: the warp-group decode form's weight stream through a
# cp.async ring in shared memory (.dev/s21/ring: decode-prefetch 1 = 2
# stages; ring_pf2 / ring_full_pf2: 3 stages) against main's register
# prefetch (.dev/s21/main), gpu_check first, two repetitions alternating;
# ncu stall reasons of the ring's full-recipe product.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
for v in ring ring_pf2 ring_full_pf2; do
  echo "== gpu_check $v"
  python3 bench/gpu_check.py --kernels .dev/s21/$v 2>&1 | grep -vE "^ok " | tail -4
done
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2))"; }
mm() { python3 bench/gpu_bench.py --kernels .dev/s21/$1 --no-peers --only mm_m16_n14336_k4096 w4a4_m16_n14336_k4096 --json /tmp/x.json 2>&1 | show; }
rc() { python3 bench/gpu_bench.py --kernels .dev/s21/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
R="bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096 bench_full_act_m16_n14336_k4096 bench_static_channels_m16_n14336_k4096"
for rep in 1 2; do
  for v in main ring; do echo "== $v rep $rep"; mm $v; rc $v $R; done
  echo "== ring_pf2 rep $rep"; mm ring_pf2; rc ring_pf2 bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096
  echo "== ring_full_pf2 rep $rep"; rc ring_full_pf2 bench_full_m16_n14336_k4096
done
for vc in "ring bench_full_m16_n14336_k4096" "ring bench_plain_m16_n14336_k4096"; do
  set -- $vc
  echo "== ncu $1 $2"
  timeout 80 ncu --clock-control none --kernel-name regex:fp4_matmul --launch-count 1 --page raw --section ComputeWorkloadAnalysis --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis \
    python3 bench/gpu_bench.py --kernels .dev/s21/$1 --no-peers --recipes-only --only $2 --json /tmp/y.json > $OUT/ncu_$1_$2.txt 2>&1
  grep -E "gpu__time_duration.sum|sm__inst_executed.avg.per_cycle_active |pipe_(alu|fma|lsu).avg.pct_of_peak_sustained_active|issue_stalled_(long_scoreboard|barrier|math_pipe_throttle|wait|short_scoreboard|mio_throttle|lg_throttle|not_selected)_per_issue_active|dram__throughput.avg.pct_of_peak_sustained_elapsed|launch__registers_per_thread " $OUT/ncu_$1_$2.txt | awk '{print "   ",$1,$NF}'
done
echo done
