#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine needs to build and test
# fp4-mlir: LLVM/MLIR 22 from Debian's packages, a build system, GoogleTest,
# and the Python packages the tests and examples use. libclang-rt-22-dev
# holds the sanitizer and libFuzzer runtimes (scripts/run_sanitizers.sh).
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22
              lld-22 ninja-build cmake libgtest-dev python3 python3-pip python3-venv
              binutils libclang-rt-22-dev)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[deps] apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
# safetensors: the checkpoint tests write and read checkpoints with it, the
# reference implementation fp4-quant's own parser is checked against.
# scikit-build-core: the build backend of `pip install .` (pyproject.toml),
# here so the pip route works without build isolation (offline) and
# test/python/test_pip_install.py can run.
# pytest-xdist: run_tests.sh spreads the Python tests over every core.
PIP_PACKAGES=(numpy ml_dtypes pytest pytest-xdist lit matplotlib safetensors scikit-build-core)
if ! "$PY" -c "import numpy, ml_dtypes, pytest, xdist, matplotlib, safetensors, scikit_build_core" 2>/dev/null; then
  echo "[deps] pip install ${PIP_PACKAGES[*]}"
  "$PY" -m pip install -q "${PIP_PACKAGES[@]}" 2>/dev/null ||
    "$PY" -m pip install -q --break-system-packages "${PIP_PACKAGES[@]}"
fi
