#!/usr/bin/env bash
# Session 25, call 5: session 24's open W4A4 1-row repeat, asked for on an
# H200 (run kind nvidia-h200), which the device tool ran on an H100; and
# the 1-row full recipe against plain W4A4 (main d7781ab's images, a subset
# of .dev/kernels_final: .dev/k25h), two repetitions.
set -uo pipefail
root=$(cd "$(dirname "$0")" && pwd)
while [ ! -d "$root/bench" ] && [ "$root" != / ]; do root=$(dirname "$root"); done
cd "$root"
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for rep in 1 2; do
  python3 bench/gpu_bench.py --kernels .dev/k25h --no-peers --only w4a4_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep -E "^\| w4a4_m1"
  python3 bench/gpu_bench.py --kernels .dev/k25h --no-peers --recipes-only --only bench_plain_m1_n14336_k4096 bench_full_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'], round(r['us'],2))"
done
echo done
