#!/usr/bin/env bash
# Session 19, call 6: a register cap on the M = 1 tail form (5 / 6 CTAs per SM instead of 4).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
for rep in 1 2; do for v in ncu v4/mr48 v4/mr40; do
  echo "== $v rep $rep"
  python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only bench_full_m1_n14336_k4096 --breakdown --json /tmp/x.json 2>&1 | grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:22], round(r['us'],2), {k: v[1] for k, v in (r.get('kernels') or {}).items()})"
done; done
