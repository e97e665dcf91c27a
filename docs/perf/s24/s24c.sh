#!/usr/bin/env bash
# Session 24, call 3: floors of the 16-row weight outliers. TIMING-ONLY
# ablations (branch s24-ablation, results wrong), built with
# FP4_S23_ABLATION=<a> python3 bench/build_gpu_kernels.py --recipes
#   --only-recipes --chip sm_90a --only bench_full_m16_n14336_k4096
#   --out .dev/s24/ab_<a> [--options ...]:
#  patch1: the register patch with one compare and one predicated permute
#          per pair (the 2-instruction-per-pair floor of a SIMT patch);
#  patch0: one unpredicated permute per pair (an ideal 1 per pair);
#  sphalf: FP4_S23_ABLATION=nostage,half on the sparse form at 128 rows x
#          16 warps: 4 sparse k32 steps per chunk and no padded staging
#          (the tensor route's minimum, its A registers for free).
# Against main aadf844 (patch, .dev/kernels_s24), the residual recipe and
# plain W4A4, the sparse form (spA) and its nostage ablation (.dev/s23).
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
  for v in s24/ab_patch1 s24/ab_patch0 s23/spA s23/ab_nostage_w16 s24/ab_sphalf; do
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show $v
  done
done
echo done
