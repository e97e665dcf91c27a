#!/usr/bin/env bash
# Next session's first call (prepared in session 21; branch s21-next =
# main + s21-f16x2 + s21-tail-alternate). (1) gpu_check of every case of
# the branch's build (.dev/kernels_new); (2) A/B against main's images,
# two repetitions alternating: the f16x2 compare at 16 rows (.dev/s21next/f16b
# vs .dev/s21next/main), the alternating tail at M = 1 (.dev/s21next/alt_m1 vs
# .dev/s21next/m1_base), top-2 at 16 rows on the patch (f16b_p16; asm_p16 =
# the inline-PTX form of session 21's call B) against the default; (3) the
# M = 1 tail's cost (timing-only hacks m1_skip / m1_nocopy, results wrong,
# the patch docs/perf/s21_calls/tail_hack.patch of commit c3ca16e, removed
# once measured in session 22) with each launch alone; (4) the
# benchmark table of the branch (gpu_bench with the peers).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== gpu_check kernels_new"
python3 bench/gpu_check.py --kernels .dev/kernels_new > $OUT/check.txt 2>&1
echo "rc $?"; grep -vE "^ok " $OUT/check.txt | tail -5
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2), r.get('kernels',''))"; }
rc() { python3 bench/gpu_bench.py --kernels .dev/s21next/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
R16="bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096"
R1="bench_full_m1_n14336_k4096 bench_outlier_k1_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096"
for rep in 1 2; do
  echo "== main rep $rep"; rc main $R16 bench_outlier_k2_m16_n14336_k4096
  echo "== f16b rep $rep"; rc f16b $R16
  echo "== f16b_p16 rep $rep"; rc f16b_p16 bench_outlier_k2_m16_n14336_k4096
  echo "== asm_p16 rep $rep"; rc asm_p16 bench_outlier_k2_m16_n14336_k4096
  echo "== m1_base rep $rep"; rc m1_base $R1 bench_plain_m1_n14336_k4096
  echo "== alt_m1 rep $rep"; rc alt_m1 $R1
done
for v in m1_base m1_skip m1_nocopy alt_m1; do
  echo "== breakdown $v"
  python3 bench/gpu_bench.py --kernels .dev/s21next/$v --no-peers --recipes-only --breakdown --only bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096 --json /tmp/x.json 2>&1 | show
done
echo "== gpu_bench kernels_new (with peers)"
(time timeout 330 python3 bench/gpu_bench.py --kernels .dev/kernels_new > $OUT/bench.txt 2>&1) 2>&1 | grep real
cp .dev/kernels_new/ptxas.txt $OUT/ 2>/dev/null
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/bench.txt | head -30
echo done
