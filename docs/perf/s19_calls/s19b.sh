#!/usr/bin/env bash
# Session 19, call 2: the M = 1 tail form's CTA shape (balance over the SMs).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
nvidia-smi --query-gpu=name --format=csv,noheader
C="bench_plain_m1_n14336_k4096 bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096"
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:22], round(r['us'],2), {k: v[1] for k, v in (r.get('kernels') or {}).items()})"; }
for rep in 1 2; do
  for v in kernels v/r16 v/r16w8 v/r16u256 v/r16pf1 v/r16u256pf1 v/w4 v/r32u1024; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only $C --breakdown --json /tmp/x.json 2>&1 | show
  done
  for v in kernels v/mm_r32 v/mm_r16; do
    echo "== W4A16 $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --only mm_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep -E '^\| mm_m1_n14336'
  done
done
