#!/usr/bin/env bash
# Session 20, call C: (1) the activation staging A/B at 16 rows (old 2-way
# conflicted mapping, .dev/stage_old, against this tree, .dev/kernels; two
# repetitions each, alternating), then (2) the one-run table of this tree:
# gpu_check of every kernel, then gpu_bench with the peers.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
C="mm_m16_n14336_k4096 w4a4_m16_n14336_k4096"
R="bench_plain_m16_n14336_k4096 bench_residual_24_m16_n14336_k4096 bench_full_m16_n14336_k4096 bench_outlier_k1_m16_n14336_k4096"
python3 bench/gpu_check.py --kernels .dev/stage_old --only $C $R 2>&1 | tail -1
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:36], round(r['us'],2))"; }
for rep in 1 2; do
  for v in stage_old kernels; do
    echo "== $v rep $rep"
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --only $C --json /tmp/x.json 2>&1 | show
    python3 bench/gpu_bench.py --kernels .dev/$v --no-peers --recipes-only --only $R --json /tmp/x.json 2>&1 | show
  done
done
echo "== run_h200 all"
(time bash bench/run_h200.sh all) > $OUT/all.txt 2>&1
echo "rc $?"; grep -E "gpu_check:|real" $OUT/all.txt | tail -3
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/all.txt | head -30
