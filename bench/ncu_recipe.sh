#!/usr/bin/env bash
# ncu of one bench case's kernels on the device (one launch of each kernel
# whose name matches KERNEL_REGEX, default the products fp4_matmul_*), with
# the sections session 19 read (speed of light, warp states, scheduler,
# memory, occupancy, launch, instructions) and the shared-memory bank
# conflicts of loads and stores, which those sections do not show:
#   bash bench/ncu_recipe.sh [--kernels DIR] CASE [KERNEL_REGEX]
# CASE: a recipe bench case (bench_full_m16_n14336_k4096) or a matmul case
# (mm_m16_n14336_k4096). Kernels as for run_h200.sh (default .dev/kernels).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KERNELS=$ROOT/.dev/kernels
if [ "${1:-}" = --kernels ]; then KERNELS=$2; shift 2; fi
CASE=${1:?usage: ncu_recipe.sh [--kernels DIR] CASE [KERNEL_REGEX]}
REGEX=${2:-fp4_matmul}
bash "$ROOT/scripts/build_gpu_libs.sh" /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
ONLY=(--only "$CASE")
case $CASE in bench_*) ONLY+=(--recipes-only) ;; esac
ncu --clock-control none --kernel-name "regex:$REGEX" --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
  --section InstructionStats --section ComputeWorkloadAnalysis \
  --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum \
  python3 "$ROOT/bench/gpu_bench.py" --kernels "$KERNELS" --no-peers \
  "${ONLY[@]}" --json /tmp/ncu_recipe.json 2>&1 | grep -v '^{'
