#!/usr/bin/env bash
# One device call: correctness check, then (unless "check") the benchmark
# with the peers, logs in $OUT. The kernels come from
# bench/build_gpu_kernels.py --out .dev/kernels on the MLIR machine, carried
# with the call (device tool: carry [".dev"]):
#   bash bench/run_h200.sh [check|bench|all] [gpu_check/gpu_bench args...]
set -uo pipefail
MODE=${1:-all}; shift || true
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/fp4-out}; mkdir -p "$OUT"
KERNELS=${KERNELS:-$ROOT/.dev/kernels}
export PYTHONUNBUFFERED=1
bash "$ROOT/scripts/build_gpu_libs.sh" /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
status=0
if [ "$MODE" != bench ]; then
  python3 "$ROOT/bench/gpu_check.py" --kernels "$KERNELS" "$@" 2>&1 | tee "$OUT/check.txt"
  status=${PIPESTATUS[0]}
fi
if [ "$MODE" != check ]; then
  python3 "$ROOT/bench/gpu_bench.py" --kernels "$KERNELS" "$@" 2>&1 | tee "$OUT/bench.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
cp "$KERNELS/ptxas.txt" "$OUT/" 2>/dev/null || true
exit $status
