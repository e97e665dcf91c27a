#!/usr/bin/env bash
# Session 19, call 5: ncu of the two decode recipe product kernels at the
# new defaults (M = 1 tail form, 16-row CTAs; M = 16 weight-tile form) and
# the residual recipe's product (the same rows without the entries).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section InstructionStats --section ComputeWorkloadAnalysis"
for c in bench_full_m1_n14336_k4096 bench_full_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096; do
  echo "== $c"
  timeout 100 ncu --clock-control none --kernel-name regex:fp4_matmul --launch-count 1 $S \
    python3 bench/gpu_bench.py --kernels .dev/ncu --no-peers --recipes-only --only $c --json /tmp/n.json 2>&1 | grep -v '^{' | sed -n '/fp4_matmul_1 (/,$p'
done
