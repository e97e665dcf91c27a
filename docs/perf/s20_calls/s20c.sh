#!/usr/bin/env bash
# Session 20, call B: the register patch with predicated permutes (inline
# PTX, .dev/plan21) against the select form of call A (.dev/plan20) and
# main's forms, in one call; the patch on mma.sync at M = 1; SASS counts of
# both patch forms; ncu of the 128-row patch product at 16 rows.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
R=$OUT; mkdir -p /tmp/p21 /tmp/p20
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
OUT=/tmp/p21 timeout 330 python3 bench/device_plan.py run --kernels .dev/plan21 \
  --variants main patch patch_rows128 patch_m1 patch_m1_pf1 patch_m1_w8 > $R/plan21.txt 2>&1
echo "plan21 rc $?"
OUT=/tmp/p20 timeout 100 python3 bench/device_plan.py run --kernels .dev/plan20 \
  --variants patch patch_rows128 > $R/plan20.txt 2>&1
echo "plan20 rc $?"
grep -E '^\| (main|patch)' $R/plan21.txt $R/plan20.txt | grep -v '^\{' | cut -c1-220
grep -E "failing|FAIL|mismatch" $R/plan21.txt $R/plan20.txt | head
CU=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
PX=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
echo "tools: $CU $PX"
for d in .dev/plan20/patch .dev/plan21/patch .dev/plan21/patch_m1; do
  for c in bench_full_m16_n14336_k4096 bench_full_m1_n14336_k4096; do
    f=$d/recipes/$c/fp4_kernels.ptx; [ -f $f ] || continue
    $PX -arch=sm_90a $f -o /tmp/k.cubin 2>/dev/null && $CU -sass -fun fp4_matmul_1 /tmp/k.cubin > /tmp/k.sass 2>/dev/null
    printf "%s %s total %s" $d $c $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' /tmp/k.sass)
    for op in PRMT SEL ISETP LOP3 HMUL2 IMAD LDG BRA; do printf " %s=%s" $op $(grep -cE "\s$op[ .]" /tmp/k.sass); done; echo
  done
done
timeout 70 bash bench/ncu_recipe.sh --kernels .dev/plan21/patch_rows128 bench_full_m16_n14336_k4096 > $R/ncu_patch128_m16.txt 2>&1
grep -E "Duration|L1/TEX Cache Throughput|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|No Eligible" $R/ncu_patch128_m16.txt | head -8
tar czf $R/plan_json.tgz -C /tmp p21 p20
