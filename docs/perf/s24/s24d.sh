#!/usr/bin/env bash
# Session 24, call 4: what the 16-row register patch's floor is made of.
# TIMING-ONLY ablations (branch s24-ablation, results wrong; built as in
# s24c.sh): patchnone (the patch form without entries: their loads die),
# loadsonly (the entries' loads and keys, folded by xor into one pair),
# patch0 (one unpredicated permute per pair), patch1 (one compare and one
# predicated permute per pair); main aadf844's full, residual and plain.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
F=bench_full_m16_n14336_k4096
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', '$1', r['case'][:36], round(r['us'],2), r.get('kernels',''))"; }
for rep in 1 2; do
  python3 bench/gpu_bench.py --kernels .dev/kernels_s24 --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F --json /tmp/x.json 2>&1 | show main
  for v in ab_patchnone ab_loadsonly ab_patch0 ab_patch1; do
    python3 bench/gpu_bench.py --kernels .dev/s24/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show $v
  done
done
echo "== w4a4 1-row matmul (23.0 us in call 2 against 19.7 in session 22, byte-identical image)"
for rep in 1 2 3; do
  python3 bench/gpu_bench.py --kernels .dev/kernels_s24 --no-peers --only w4a4_m1_n14336_k4096 mm_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep -E "^\| (w4a4|mm)_m1"
done
echo done
