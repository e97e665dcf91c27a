#!/usr/bin/env bash
# The main job: builds fp4-mlir, then takes the examples/mlp SwiGLU block
# through fp4-quantize -> fp4-fold-constants -> fp4-pipeline-cpu -> execution
# for every format and scale rule, printing each matmul's relative error
# against the f32 computation.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export FP4_BUILD_DIR=${FP4_BUILD_DIR:-$ROOT/build}
export FP4_LIB_DIR=$FP4_BUILD_DIR/lib
bash "$ROOT/scripts/install_deps.sh"
bash "$ROOT/scripts/build.sh"
exec "${PYTHON:-python3}" "$ROOT/examples/mlp/run_mlp.py" "$@"
