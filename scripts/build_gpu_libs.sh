#!/usr/bin/env bash
# Builds the two libraries the GPU machine needs without CMake or MLIR (it
# has neither; it has a C++ compiler and the CUDA toolkit):
#   OUT/libFP4Reference.so      the reference quantizers (fp4.reference)
#   OUT/libfp4_cuda_runtime.so  the mgpu* runtime (fp4-run, compiled models)
# The same sources and flags as the CMake targets FP4Reference and
# FP4CudaRuntime; use it when carrying build/lib from this machine is not an
# option. Usage: bash scripts/build_gpu_libs.sh [OUT (default: build/lib)]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/build/lib}
CXX=${CXX:-c++}
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
mkdir -p "$OUT"

# -ffp-contract=off: the numerics rules round once per operation (no FMA).
"$CXX" -std=c++17 -O2 -fPIC -shared -fno-exceptions -fno-rtti -ffp-contract=off \
  -I"$ROOT/include" "$ROOT/lib/CAPI/Numerics.cpp" "$ROOT"/lib/Numerics/*.cpp \
  -Wl,-z,defs -o "$OUT/libFP4Reference.so"
echo "built $OUT/libFP4Reference.so"

if [ ! -f "$CUDA_ROOT/include/cuda.h" ]; then
  echo "no $CUDA_ROOT/include/cuda.h: skipping libfp4_cuda_runtime.so (set CUDA_ROOT)"
  exit 0
fi
STUBS=""
for dir in "$CUDA_ROOT/lib64/stubs" "$CUDA_ROOT/lib/stubs" \
           "$CUDA_ROOT"/targets/*/lib/stubs; do
  if [ -f "$dir/libcuda.so" ]; then STUBS=$dir; break; fi
done
"$CXX" -std=c++17 -O2 -fPIC -shared -fno-exceptions -fno-rtti -fvisibility=hidden \
  -I"$ROOT/include" -isystem "$CUDA_ROOT/include" \
  "$ROOT/lib/Runtime/CUDA/CudaRuntime.cpp" ${STUBS:+-L"$STUBS"} -lcuda \
  -Wl,--as-needed -Wl,-z,defs -o "$OUT/libfp4_cuda_runtime.so"
echo "built $OUT/libfp4_cuda_runtime.so"
