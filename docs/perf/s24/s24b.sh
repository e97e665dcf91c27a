#!/usr/bin/env bash
# Session 24, call 2: gpu_check of every case of main aadf844 (kernels in
# .dev/kernels_s24, built here with python3 bench/build_gpu_kernels.py
# --out .dev/kernels_s24 --recipes --chip sm_90a), then the one-run table
# with the peers.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
date
KERNELS=.dev/kernels_s24 bash bench/run_h200.sh all > $OUT/run.txt 2>&1
echo "rc $?"
date
grep -c "^ok " $OUT/check.txt; grep -vE "^ok " $OUT/check.txt | tail -8
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/bench.txt | head -30
echo done
