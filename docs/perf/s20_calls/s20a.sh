#!/usr/bin/env bash
# Session 20, call 1: the one-run table of main (b6c2819) on the lent card,
# then ncu of the 16-row full recipe's product with the bank-conflict metrics.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "== run_h200 all"
(time bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "gpu_check:|real|failing" $OUT/all.txt | tail -4
echo "== ncu m16 full"
timeout 150 bash bench/ncu_recipe.sh bench_full_m16_n14336_k4096 > $OUT/ncu_m16.txt 2>&1
echo "rc $?"; grep -E "bank_conflicts|wavefronts_mem_shared|Duration|L1/TEX Hit|Mem Busy|Max Bandwidth" $OUT/ncu_m16.txt | head -20
