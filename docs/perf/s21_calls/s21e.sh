#!/usr/bin/env bash
# Session 21, call E: (1) the register patch's f16x2 keys (.dev/s21/f16b,
# branch s21-f16x2 d9e7eec) against main's kernels (.dev/s21/main), two
# repetitions alternating, after gpu_check of its recipe cases; (2) what
# the M = 1 tail form's tail costs (timing-only hacks, results wrong:
# m1_skip returns from the outlier tail after its wait, m1_nocopy also
# drops the entry copy; m1_base = main's kernels), with each launch alone;
# (3) the one-run table of the tree (bench/run_h200.sh all on
# .dev/kernels_new: gpu_check of every case, then the benchmark with peers).
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
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2), r.get('kernels',''))"; }
R="bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096"
for rep in 1 2; do
  for v in main f16b; do echo "== $v rep $rep"; python3 bench/gpu_bench.py --kernels .dev/s21/$v --no-peers --recipes-only --only $R --json /tmp/x.json 2>&1 | show; done
done
for v in m1_base m1_skip m1_nocopy; do
  echo "== $v"
  python3 bench/gpu_bench.py --kernels .dev/s21/$v --no-peers --recipes-only --breakdown --only bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096 bench_plain_m1_n14336_k4096 bench_residual_24_m1_n14336_k4096 --json /tmp/x.json 2>&1 | show
done
echo "== run_h200 all (.dev/kernels_new)"
(time KERNELS=$PWD/.dev/kernels_new timeout 440 bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "gpu_check:|real" $OUT/all.txt | tail -3
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/all.txt | head -30
echo done
