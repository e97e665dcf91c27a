#!/usr/bin/env bash
# Session 20, call E: the warp-group register form's reordered PTX (the
# 16 pairs of both rows dequantized before the wgmmas, 8a324b6; same
# opcode counts) against session 19's (b6c2819) on the unchanged 16-row
# products, two repetitions alternating. Both kernel sets passed gpu_check
# in their own calls (session 19 call 4, session 20 call D).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
C="mm_m16_n14336_k4096 w4a4_m16_n14336_k4096"
R="bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 bench_full_act_m16_n14336_k4096 bench_static_channels_m16_n14336_k4096"
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], round(r['us'],2))"; }
for rep in 1 2; do
  for v in old new; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/ab19/$v --no-peers --only $C --json /tmp/x.json 2>&1 | show
    python3 bench/gpu_bench.py --kernels .dev/ab19/$v --no-peers --recipes-only --only $R --json /tmp/x.json 2>&1 | show
  done
done
