#!/usr/bin/env bash
# Session 22, call 3 (short; refused, for the next session): gpu_check of
# the cases whose kernels the register patch as the default for 2 entries
# per unit from 9 stacked rows changes (.dev/s22/main: built at 162bc1c,
# where it was the default; main reverted it until this check passes).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
python3 bench/gpu_check.py --kernels .dev/s22/main --recipes-only --only recipe_outlier_k2_m16_n77_k224 recipe_rot_outl_resid_m8_n77_k224 recipe_w4a16_outlier_k2_m16_n77_k224 2>&1 | tail -8
echo done
