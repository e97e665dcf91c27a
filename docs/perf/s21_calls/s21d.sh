#!/usr/bin/env bash
# Session 21, call D: what the M = 1 tail form's tail costs. Timing-only
# hacks (results wrong; no gpu_check): m1_skip returns from the outlier
# tail right after its wait (no gathers), m1_nocopy also drops the CTA's
# entry copy. Against main's kernels (m1_base, byte-identical to main's);
# with --breakdown each launch alone.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2), {k: v for k,v in r.get('kernels',{}).items()})"; }
for rep in 1 2; do
  for v in m1_base m1_skip m1_nocopy; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/s21/$v --no-peers --recipes-only --breakdown --only bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096 bench_plain_m1_n14336_k4096 bench_residual_24_m1_n14336_k4096 --json /tmp/x.json 2>&1 | show
  done
done
echo done
