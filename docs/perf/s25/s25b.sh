#!/usr/bin/env bash
# Session 25, call 2: CTA shapes of the 16-row weight-outlier kernels, patch
# (main) and packed, at 16 x 14336 x 4096, full recipe and top-2. Each
# .dev/s25/<v> is python3 bench/build_gpu_kernels.py --recipes
# --only-recipes --chip sm_90a --only bench_full_m16_n14336_k4096
# bench_outlier_k2_m16_n14336_k4096 --options "<v's options>"; pk = packed,
# pt = patch, rN = decode-rows-per-cta=N, wN = decode-warps=N, pfN =
# decode-prefetch=N; ab_pk_* are TIMING-ONLY ablations of the packed form
# (branch s25-ablation, results wrong; FP4_S25_ABLATION=patch0|patchnone).
# Baselines: .dev/k24slim (main, see s25a.sh).
set -uo pipefail
root=$(cd "$(dirname "$0")" && pwd)
while [ ! -d "$root/bench" ] && [ "$root" != / ]; do root=$(dirname "$root"); done
cd "$root"
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
F=bench_full_m16_n14336_k4096; O=bench_outlier_k2_m16_n14336_k4096
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); k=list(r.get('kernels',{}).values()); print(' ', '$1', r['case'][5:18], round(r['us'],2), k[-1] if k else '')"; }
for rep in 1 2; do
  python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F $O --json /tmp/x.json 2>&1 | show main
  for v in $(ls .dev/s25); do
    [ -d .dev/s25/$v ] || continue
    python3 bench/gpu_bench.py --kernels .dev/s25/$v --no-peers --recipes-only --breakdown --only $F $O --json /tmp/x.json 2>&1 | show $v
  done
done
echo done
