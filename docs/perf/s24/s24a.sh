#!/usr/bin/env bash
# Session 24, call 1: (1) s23n: where the sparse form's time goes (ablation
# kernels from branch s23-sparse-ablation in .dev/s23/ab_*; timing only);
# (2) s22c: gpu_check of the three images the top-2 patch default changes.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
date
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== s22c: gpu_check of the patch-default images"
python3 bench/gpu_check.py --kernels .dev/s22/main --recipes-only --only recipe_outlier_k2_m16_n77_k224 recipe_rot_outl_resid_m8_n77_k224 recipe_w4a16_outlier_k2_m16_n77_k224 2>&1 | tee $OUT/check_patch.txt | tail -8
date
echo "== s23n ablation"
OUT=$OUT/n bash .dev/s23n.sh 2>&1 | grep -v '^done'
date
echo done
