#!/usr/bin/env bash
# Session 24, last call: s24d.sh trimmed to one repetition (device budget):
# the register patch's floor split into loads and instructions, and the
# entries read lane-contiguous (TIMING-ONLY ablations, branch s24-ablation
# aef230c; built as in s24c.sh with FP4_S23_ABLATION=<a>).
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
python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --recipes-only --breakdown --only bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 $F --json /tmp/x.json 2>&1 | show main
for v in ab_patchnone ab_loadsonly ab_patch1 ab_packedloads ab_packedloads_patch1 ab_patch0; do
  python3 bench/gpu_bench.py --kernels .dev/s24/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show $v
done
python3 bench/gpu_bench.py --kernels .dev/k24slim --no-peers --only w4a4_m1_n14336_k4096 --json /tmp/x.json 2>&1 | grep -E "^\| w4a4_m1"
echo done
