#!/usr/bin/env bash
# Session 19, call 1: A/B of the lane-banked tail sum at M = 1 (before =
# HEAD b0d016e's kernels, after = this tree's), then the full one-run table.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
C="bench_plain_m1_n14336_k4096 bench_full_m1_n14336_k4096 bench_outlier_k1_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096"
# (gpu_check of every kernel: run_h200.sh below)
for rep in 1 2; do
  for v in before kernels; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only $C --breakdown --json /tmp/ab_${v}_$rep.json 2>&1 | grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(r['case'], round(r['us'],2), r.get('kernels'))"
  done
done
echo "== run_h200 all"
(time bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "passed|failed|FAIL" $OUT/all.txt | tail -5
echo "== ncu: the full recipe's product kernel at 1 x 14336 x 4096 (after)"
timeout 120 ncu --clock-control none --kernel-name regex:fp4_matmul --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  python3 bench/gpu_bench.py --kernels .dev/kernels --no-peers --recipes-only --only bench_full_m1_n14336_k4096 --json /tmp/ncu.json > $OUT/ncu_full_m1.txt 2>&1
echo "ncu rc $?"
