#!/usr/bin/env bash
# Installs compressed-tensors 0.20 and torch into a cached virtual
# environment for test/python/test_compressed_tensors.py (our checkpoints,
# decompressed by compressed-tensors itself), and prints the environment's
# python on the last line. Not part of scripts/run_tests.sh / CI, because
# of its cost (measured on the 2-core development machine, docs/Checkpoints.md):
#
#  - torch from PyPI is the CUDA build only: the torch wheel is 539 MB and
#    its required nvidia-* / triton / cuda wheels another 3+ GB; 5.6 GB
#    installed, about 21 min to download and unpack here.
#  - `pip install --no-deps torch` is not enough: libtorch_cpu.so itself
#    links libcudart and libcupti, libtorch_cuda.so / libtorch_python.so
#    link cuBLAS, cuDNN, cuFFT, cuSPARSE(Lt), cuFile, NCCL, NVRTC, NVSHMEM,
#    so `import torch` fails ("libcufile.so.0: cannot open shared object
#    file") without them, even for CPU-only use.
#  - PyPI has no CPU-only torch for x86-64 Linux, and no other registry is
#    reachable from this project's machines.
#
# Run once; later runs find the stamp and return at once:
#   bash scripts/install_compressed_tensors.sh
#   FP4_REQUIRE_COMPRESSED_TENSORS=1 python3 -m pytest test/python/test_compressed_tensors.py
set -euo pipefail
VENV=${FP4_CT_VENV:-$HOME/.cache/fp4-mlir/compressed-tensors-venv}
PY=${PYTHON:-python3}
STAMP="$VENV/.fp4-mlir-v1"

if [ -f "$STAMP" ] && "$VENV/bin/python" -c "import compressed_tensors, safetensors, numpy" 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi
start=$(date +%s)
rm -rf "$VENV"
# Debian's python3 needs python3-venv for ensurepip (install_deps.sh has it).
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q torch==2.15.0 compressed-tensors==0.20.0 \
  safetensors numpy >&2
"$VENV/bin/python" -c "import compressed_tensors, torch" >&2
touch "$STAMP"
echo "[deps] compressed-tensors environment installed in $VENV in" \
  "$(( $(date +%s) - start )) s ($(du -sh "$VENV" | cut -f1))" >&2
echo "$VENV/bin/python"
