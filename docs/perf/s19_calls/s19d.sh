#!/usr/bin/env bash
# Session 19, call 4: the weight-tile form's shape at 16 x 14336 x 4096,
# then the one-run table of this tree (gpu_check of every kernel + bench).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
nvidia-smi --query-gpu=name --format=csv,noheader
C="bench_plain_m16_n14336_k4096 bench_full_m16_n14336_k4096"
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:22], round(r['us'],2), {k: v[1] for k, v in (r.get('kernels') or {}).items()})"; }
for v in kernels v3/w12 v3/r128 v3/w4; do
  echo "== $v"
  python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only $C --breakdown --json /tmp/x.json 2>&1 | show
done
echo "== run_h200 all"
(time bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "gpu_check:|real" $OUT/all.txt | tail -3
