#!/usr/bin/env bash
# Installs compressed-tensors 0.20 and a CPU-usable torch into a cached
# virtual environment for test/python/test_compressed_tensors.py (our
# checkpoints, decompressed by compressed-tensors itself) and prints the
# environment's python on the last line. scripts/run_tests.sh runs it.
#
# Why not `pip install compressed-tensors`: PyPI's torch for x86-64 Linux is
# the CUDA build only, and its required nvidia-* / triton / cuda-toolkit
# wheels make 5.6 GB installed (21 min on the 2-core machine). Plain
# `--no-deps torch` does not import: libtorch_cpu.so itself links libcudart
# and libcupti, libtorch_cuda.so cuBLAS, cuDNN, NCCL, NVSHMEM, ... So
# every package is installed with --no-deps from the pinned list below (what
# `import compressed_tensors` really imports), and
# scripts/torch_cuda_stubs.py replaces the CUDA libraries by stubs (torch
# calls none of them on the CPU; torch.cuda.is_available() is False).
# 1.6 GB installed; measured times in docs/Checkpoints.md. A later run finds
# the stamp and returns at once.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${FP4_CT_VENV:-$HOME/.cache/fp4-mlir/compressed-tensors-venv}
PY=${PYTHON:-python3}
STAMP="$VENV/.fp4-mlir-stubbed-v1"

PACKAGES=(
  torch==2.15.0
  # torch's own pure-Python imports
  typing_extensions==4.16.0 filelock==4.3.1 sympy==1.14.0 mpmath==1.3.0
  networkx==3.6.1 Jinja2==3.1.6 MarkupSafe==3.0.4 fsspec==2026.9.0
  # compressed-tensors and what it imports (transformers, pydantic, ...)
  compressed-tensors==0.20.0 transformers==5.24.0
  pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0
  typing-inspection==0.4.5 loguru==0.7.3 psutil==7.2.2 tqdm==4.70.1
  huggingface_hub==2.4.0 packaging==26.4 PyYAML==6.0.4 regex==2026.11.19
  safetensors==0.8.0 tokenizers==0.23.3 numpy==2.4.6 ml_dtypes==0.7.0
  httpx2==2.16.2 httpcore2==2.16.2 h11==0.16.0 anyio==4.16.0 idna==3.20
  truststore==0.10.5 hf-xet==1.8.0 typer==0.29.2 click==8.5.1
  shellingham==1.5.4 rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2
  Pygments==2.21.0 annotated-doc==0.0.7
)

# (find_spec, not import: importing torch takes seconds.)
if [ -f "$STAMP" ] && "$VENV/bin/python" -c "import importlib.util as u, sys
sys.exit(u.find_spec('compressed_tensors') is None or u.find_spec('torch') is None)" 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi
start=$(date +%s)
rm -rf "$VENV"
# Debian's python3 needs python3-venv for ensurepip (install_deps.sh has it).
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
  "${PACKAGES[@]}" >&2
TORCH_DIR=$("$VENV/bin/python" -c \
  "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('torch').origin))")
CC=${CC:-$(command -v cc || command -v clang-22)} \
  "$VENV/bin/python" "$ROOT/scripts/torch_cuda_stubs.py" "$TORCH_DIR" >&2
"$VENV/bin/python" -c "import compressed_tensors, torch" >&2
touch "$STAMP"
echo "[deps] compressed-tensors environment in $VENV: $(( $(date +%s) - start )) s," \
  "$(du -sh "$VENV" | cut -f1)" >&2
echo "$VENV/bin/python"
