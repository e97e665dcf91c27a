#!/usr/bin/env bash
# Session 23, minimal call: GPU check of the sparse entries, then main's
# patch against the sparse form (spC, the default shape) at 16 x 14336 x
# 4096, plain W4A4 for the ratio; main again last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
python3 bench/sparse_entries_check.py check .dev/s23/check 2>&1 | tail -8
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], r['variant'][:44], round(r['us'],2))"; }
rc() { python3 bench/gpu_bench.py --kernels .dev/s23/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
F=bench_full_m16_n14336_k4096
echo "== main"; rc main bench_plain_m16_n14336_k4096 $F
echo "== spC"; rc spC $F
echo "== spA"; rc spA $F
echo "== main again"; rc main $F
echo done
