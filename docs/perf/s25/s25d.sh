#!/usr/bin/env bash
# Session 25, call 4: (1) the patch's floors with the packed loads at
# 16 x 14336 x 4096 (full recipe, 64-row CTAs, two repetitions): main's
# default (.dev/kernels_final), TIMING-ONLY ablations (branch s25-ablation,
# results wrong; FP4_S25_ABLATION=<a> python3 bench/build_gpu_kernels.py
# --recipes --only-recipes --chip sm_90a --only bench_full_m16_n14336_k4096
# --options "decode-outliers=packed decode-rows-per-cta=64 decode-warps=8"):
# patch2 (.dev/s25d: set.eq.u32.f16x2 + lop3 per pair, two instructions),
# patch0, patchnone (.dev/s25c); (2) gpu_check of every case and the
# one-run table with the peers on main's final build: KERNELS=
# .dev/kernels_final bash bench/run_h200.sh all (python3
# bench/build_gpu_kernels.py --out .dev/kernels_final --recipes --chip
# sm_90a).
set -uo pipefail
root=$(cd "$(dirname "$0")" && pwd)
while [ ! -d "$root/bench" ] && [ "$root" != / ]; do root=$(dirname "$root"); done
cd "$root"
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
date
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
F=bench_full_m16_n14336_k4096
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); k=list(r.get('kernels',{}).values()); print(' ', '$1', r['case'][5:18], round(r['us'],2), k[-1] if k else '')"; }
for rep in 1 2; do
  python3 bench/gpu_bench.py --kernels .dev/kernels_final --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F --json /tmp/x.json 2>&1 | show main
  python3 bench/gpu_bench.py --kernels .dev/s25d/ab_pk_patch2_r64 --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show patch2
  for v in ab_pk_patch0_r64 ab_pk_patchnone_r64; do
    python3 bench/gpu_bench.py --kernels .dev/s25c/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show $v
  done
done
date
KERNELS=.dev/kernels_final OUT=$OUT bash bench/run_h200.sh all > $OUT/run.txt 2>&1
echo "rc $?"
date
grep -c "^ok " $OUT/check.txt; grep -vE "^ok " $OUT/check.txt | tail -8
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/bench.txt | head -30
echo done
