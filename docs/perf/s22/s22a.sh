#!/usr/bin/env bash
# Session 22, call 2: (1) gpu_check of the cases the register-patch default
# changed (top-2 from 9 stacked rows); (2) programmatic dependent launch with
# an L2 prefetch budget sized to the prep's window (0, 4, 8, 16 MiB) against
# the defaults, plain W4A4 and the recipes at 1 and 16 rows; pdl_check first;
# (3) decode-prefetch=1 at M = 1 (plain W4A4's best known form); (4) the
# per-launch breakdown of plain, full, full_act at 1 and 16 rows.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== gpu_check changed cases"
python3 bench/gpu_check.py --kernels .dev/s22/main --recipes-only 2>&1 | grep -vE "^ok " | tail -6
echo "== pdl_check 8 MiB and 0"
python3 bench/pdl_check.py --kernels .dev/s22/pdl_8388608 --reps 5 2>&1 | tail -4
python3 bench/pdl_check.py --kernels .dev/s22/pdl_0 --reps 5 2>&1 | tail -2
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2), r.get('kernels',''))"; }
rc() { python3 bench/gpu_bench.py --kernels .dev/s22/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
M1="bench_plain_m1_n14336_k4096 bench_full_m1_n14336_k4096 bench_full_act_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096"
M16="bench_plain_m16_n14336_k4096 bench_full_m16_n14336_k4096"
for rep in 1 2; do
  for v in main pdl_0 pdl_4194304 pdl_8388608 pdl_16777216; do
    echo "== $v rep $rep"; rc $v $M1 $M16
  done
  echo "== pf1 rep $rep"; rc pf1 $M1
done
echo "== main: outlier_k2 16 rows, residual 1 row"
rc main bench_outlier_k2_m16_n14336_k4096 bench_residual_24_m1_n14336_k4096
for v in main pdl_0 pdl_8388608; do
  echo "== breakdown $v"
  python3 bench/gpu_bench.py --kernels .dev/s22/$v --no-peers --recipes-only --breakdown --only $M1 $M16 --json /tmp/x.json 2>&1 | show
done
echo done
