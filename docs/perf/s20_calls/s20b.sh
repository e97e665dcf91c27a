#!/usr/bin/env bash
# Session 20, call A: the register patch of the weight entries
# (decode-outliers=patch) against main's forms in one call (device_plan,
# two repetitions, gpu_check first), then ncu of the 16-row full recipe's
# product in both forms (bank-conflict metrics included).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
R=$OUT; mkdir -p /tmp/p
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
OUT=/tmp/p timeout 420 python3 bench/device_plan.py run --kernels .dev/plan20 \
  --variants main patch patch_m1 m1_folded patch_pf2 patch_w12 patch_rows128 > $R/plan.txt 2>&1
echo "plan rc $?"
grep -vE '^\{' $R/plan.txt | tail -60
for v in patch main; do
  timeout 70 bash bench/ncu_recipe.sh --kernels .dev/plan20/$v bench_full_m16_n14336_k4096 > $R/ncu_${v}_m16.txt 2>&1
  echo "ncu $v rc $?"
  grep -E "Duration|L1/TEX Cache Throughput|DRAM Throughput|Issue Slots Busy|bank_conflicts|wavefronts_mem_shared" $R/ncu_${v}_m16.txt | head -12
done
tar czf $R/plan_json.tgz -C /tmp/p .
