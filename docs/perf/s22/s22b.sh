#!/usr/bin/env bash
# Session 22, call 3 (refused; for the next session): the one-run table of
# main on the H200 (kernels .dev/kernels_s22 = python3
# bench/build_gpu_kernels.py --out .dev/kernels_s22 --recipes --chip sm_90a
# at main after the top-2 default was reverted, byte-identical to call 1's
# .dev/kernels_new): gpu_check of every case, then gpu_bench with the peers
# (bench/run_h200.sh all).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
KERNELS=.dev/kernels_s22 bash bench/run_h200.sh all > $OUT/run.txt 2>&1
echo "rc $?"
grep -vE "^ok " $OUT/check.txt | tail -8
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/bench.txt | head -30
grep -E "^\| (mm_|w4a4_)" $OUT/bench.txt | head -20
echo done
