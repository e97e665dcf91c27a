#!/usr/bin/env bash
# Session 23, call 1: (a) the sparse weight entries (decode-outliers=sparse,
# branch s23-sparse-outliers; kernels in .dev/s23/, carried): GPU check on
# folded-constant recipes, then timing at 16 x 14336 x 4096 against main's
# patch; (b) gpu_check of the three images the top-2 patch default changes
# (.dev/s22/main, 162bc1c); (c) gpu_check of every case of main
# (.dev/kernels_s22, d4034af) and the one-run table with the peers.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p $OUT
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
date
bash scripts/build_gpu_libs.sh /tmp/fp4lib >/dev/null || exit 1
export FP4_REFERENCE_LIB=/tmp/fp4lib/libFP4Reference.so
echo "== sparse entries check"
python3 bench/sparse_entries_check.py check .dev/s23/check 2>&1 | tail -9
show() { grep '^{' | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(' ', r['case'][:40], r['variant'][:44], round(r['us'],2), r.get('kernels',''))"; }
rc() { python3 bench/gpu_bench.py --kernels .dev/s23/$1 --no-peers --recipes-only --only ${@:2} --json /tmp/x.json 2>&1 | show; }
F=bench_full_m16_n14336_k4096; O=bench_outlier_k2_m16_n14336_k4096
for rep in 1 2; do
  echo "== main rep $rep"; rc main bench_plain_m16_n14336_k4096 $F $O bench_residual_24_m16_n14336_k4096
  for v in spA spC; do echo "== $v rep $rep"; rc $v $F $O; done
done
for v in spB spD spE; do echo "== $v"; rc $v $F $O; done
echo "== breakdown"
for v in main spA spC; do
  python3 bench/gpu_bench.py --kernels .dev/s23/$v --no-peers --recipes-only --breakdown --only $F --json /tmp/x.json 2>&1 | show
done
date
echo "== s22c: gpu_check of the patch-default images"
python3 bench/gpu_check.py --kernels .dev/s22/main --recipes-only --only recipe_outlier_k2_m16_n77_k224 recipe_rot_outl_resid_m8_n77_k224 recipe_w4a16_outlier_k2_m16_n77_k224 2>&1 | tee $OUT/check_patch.txt | tail -8
date
echo "== s22b: gpu_check all + one-run table"
KERNELS=.dev/kernels_s22 bash bench/run_h200.sh all > $OUT/run.txt 2>&1
echo "rc $?"
date
grep -vE "^ok " $OUT/check.txt | tail -8
grep -E "^\| (plain|outlier|static|residual|full)" $OUT/bench.txt | head -30
grep -E "^\| (mm_|w4a4_)" $OUT/bench.txt | head -20
echo done
