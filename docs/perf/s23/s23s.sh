#!/usr/bin/env bash
# Session 23, short call: GPU check of the sparse weight entries, then the
# 16-row timing of main's patch against the sparse form (spC: default
# shape; spA: 16 warps), one repetition (see docs/perf/s23/s23a.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
python3 bench/sparse_entries_check.py check s23dev/check 2>&1 | tail -8
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], r['variant'][:44], round(r['us'],2))"; }
rc() { python3 bench/gpu_bench.py --kernels s23dev/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
F=bench_full_m16_n14336_k4096; O=bench_outlier_k2_m16_n14336_k4096
for rep in 1 2; do
  echo "== main rep $rep"; rc main bench_plain_m16_n14336_k4096 $F $O bench_residual_24_m16_n14336_k4096
  for v in spC spA spB spD spE; do echo "== $v rep $rep"; rc $v $F $O; done
done
echo "== breakdown"
for v in main spC; do
  python3 bench/gpu_bench.py --kernels s23dev/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2), r.get('kernels',''))"
done
echo done
