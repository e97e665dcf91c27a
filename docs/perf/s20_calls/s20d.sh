#!/usr/bin/env bash
# Session 20, call C: the one-run table of this tree (register patch the
# default for proven weight outliers from 9 / above 16 stacked rows):
# gpu_check of every kernel, then gpu_bench with the peers.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
(time bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "gpu_check:|real|FAIL" $OUT/all.txt | tail -5
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/all.txt | head -40
