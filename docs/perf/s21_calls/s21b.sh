#!/usr/bin/env bash
# Session 21, call B: the register patch as one inline-PTX block per pair
# (f16x2 compare + predicated bf16x2 adds, .dev/s21/asm*) checked on the GPU,
# then timed against main (.dev/s21/main) and the f16x2-compare + permute
# form (.dev/f16x2), two repetitions alternating; M = 1 patch vs the tail
# form on the same folded constants; top-2/top-4 at 16 rows on the patch
# against main's defaults; ncu pipes of the new full-recipe product.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== gpu_check asm (16 rows)"
python3 bench/gpu_check.py --kernels .dev/s21/asm --recipes-only --only recipe_outlier_k1_m16_n77_k224 recipe_rot_outl_resid_m12_n77_k352 recipe_rot_outl_resid_m16_n77_k224 2>&1 | grep -vE "^ok " | tail -4
echo "== gpu_check asm_m1"
python3 bench/gpu_check.py --kernels .dev/s21/asm_m1 --recipes-only --only recipe_outlier_k2_m1_n200_k1024 recipe_rot_outl_resid_m1_n200_k512 2>&1 | grep -vE "^ok " | tail -4
echo "== gpu_check asm_p16"
python3 bench/gpu_check.py --kernels .dev/s21/asm_p16 --recipes-only --only recipe_outlier_k2_m16_n77_k224 2>&1 | grep -vE "^ok " | tail -4
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2))"; }
b() { python3 bench/gpu_bench.py --kernels .dev/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
R="bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096"
for rep in 1 2; do
  for v in s21/main f16x2 s21/asm; do echo "== $v rep $rep"; b $v $R; done
  echo "== s21/main 16-row k2 k4 rep $rep"; b s21/main bench_outlier_k2_m16_n14336_k4096 bench_outlier_k4_m16_n14336_k4096
  echo "== s21/asm_p16 rep $rep"; b s21/asm_p16 bench_outlier_k2_m16_n14336_k4096 bench_outlier_k4_m16_n14336_k4096
  echo "== M=1 s21/main (args, tail) rep $rep"; b s21/main bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096
  echo "== M=1 s21/tail_m1 (folded, tail) rep $rep"; b s21/tail_m1 bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096
  echo "== M=1 s21/asm_m1 (folded, patch) rep $rep"; b s21/asm_m1 bench_full_m1_n14336_k4096 bench_outlier_k2_m1_n14336_k4096
done
echo "== ncu asm full"
timeout 80 ncu --clock-control none --kernel-name regex:fp4_matmul --launch-count 1 --page raw --section ComputeWorkloadAnalysis --section WarpStateStats --section SpeedOfLight \
  python3 bench/gpu_bench.py --kernels .dev/s21/asm --no-peers --recipes-only --only bench_full_m16_n14336_k4096 --json /tmp/y.json > $OUT/ncu_asm_full.txt 2>&1
grep -E "gpu__time_duration.sum|sm__inst_executed.avg.per_cycle_active |pipe_(alu|fma|fma_type_fp16|fmaheavy|lsu).avg.pct_of_peak_sustained_active" $OUT/ncu_asm_full.txt | awk '{print "   ",$1,$NF}'
echo done
