#!/usr/bin/env bash
# Session 25, call 3: the packed patch as the default (constant entries, at
# most 2 per unit, from 9 stacked rows, 64-row CTAs). (1) its GPU check:
# bench/sparse_entries_check.py check .dev/s25check (built here: python3
# bench/sparse_entries_check.py build .dev/s25check --only default_; the 4 cases
# of the default); (2) the A/B and the floors at
# 16 x 14336 x 4096, two repetitions: main before (.dev/k24slim, s25a.sh),
# top-1 on the patch (.dev/s25c/pt_k1: --options decode-outliers=patch),
# TIMING-ONLY ablations at 64 rows (.dev/s25c/ab_pk_{patch0,patchnone}_r64,
# branch s25-ablation, FP4_S25_ABLATION=<a>, --options "decode-outliers=packed
# decode-rows-per-cta=64 decode-warps=8"); (3) gpu_check of every case and
# the one-run table with the peers: KERNELS=.dev/kernels_s25 bash
# bench/run_h200.sh all (python3 bench/build_gpu_kernels.py --out
# .dev/kernels_s25 --recipes --chip sm_90a).
set -uo pipefail
root=$(cd "$(dirname "$0")" && pwd)
while [ ! -d "$root/bench" ] && [ "$root" != / ]; do root=$(dirname "$root"); done
cd "$root"
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
date
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== packed entries check (default_* = the new default)"
python3 bench/sparse_entries_check.py check .dev/s25check --only default_ 2>&1 | tail -6
F=bench_full_m16_n14336_k4096; O=bench_outlier_k2_m16_n14336_k4096; O1=bench_outlier_k1_m16_n14336_k4096
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); k=list(r.get('kernels',{}).values()); print(' ', '$1', r['case'][5:18], round(r['us'],2), k[-1] if k else '')"; }
for rep in 1 2; do
  python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F $O --json /tmp/x.json 2>&1 | show before
  python3 bench/gpu_bench.py --kernels .dev/s25c/pt_k1 --no-peers --recipes-only --breakdown --only $O1 --json /tmp/x.json 2>&1 | show before
  python3 bench/gpu_bench.py --kernels .dev/kernels_s25 --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 $F $O $O1 --json /tmp/x.json 2>&1 | show new
  for v in ab_pk_patch0_r64 ab_pk_patchnone_r64; do
    python3 bench/gpu_bench.py --kernels .dev/s25c/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show $v
  done
done
date
KERNELS=.dev/kernels_s25 OUT=$OUT bash bench/run_h200.sh all > $OUT/run.txt 2>&1
echo "rc $?"
date
grep -c "^ok " $OUT/check.txt; grep -vE "^ok " $OUT/check.txt | tail -8
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/bench.txt | head -30
echo done
