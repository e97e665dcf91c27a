#!/usr/bin/env bash
# Installs a built fp4-mlir into a fresh prefix, builds test/consumer (a
# separate CMake project: find_package(FP4MLIR), C++ and C embedders) against
# that prefix only, runs both and the installed Python package and fp4-opt,
# and checks their output.
#
#   test/consumer/run.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR defaults to $FP4_BUILD_DIR, then build/; WORK_DIR to a new
# temporary directory (removed on success unless KEEP_WORK=1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-${FP4_BUILD_DIR:-$ROOT/build}}" && pwd)
WORK=${2:-$(mktemp -d "${TMPDIR:-/tmp}/fp4-consumer.XXXXXX")}
PREFIX=$WORK/prefix
PY=${PYTHON:-python3}

fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect FILE TEXT: TEXT must occur literally in FILE
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }
}

echo "== install $BUILD -> $PREFIX"
rm -rf "$PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log"
[ -f "$PREFIX/lib/cmake/fp4mlir/FP4MLIRConfig.cmake" ] || fail "no package config installed"
[ -f "$PREFIX/include/fp4/Dialect/FP4/IR/FP4Attrs.h.inc" ] || fail "generated headers not installed"
[ -f "$PREFIX/include/fp4-c/Dialects.h" ] || fail "C API headers not installed"

echo "== configure and build the consumer"
GEN=()
command -v ninja > /dev/null && GEN=(-G Ninja)
COMPILERS=()
if command -v clang++-22 > /dev/null; then
  COMPILERS=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22)
fi
cmake "${GEN[@]}" -S "$HERE" -B "$WORK/build" "${COMPILERS[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DFP4MLIR_DIR="$PREFIX/lib/cmake/fp4mlir" > "$WORK/configure.log" \
  || { cat "$WORK/configure.log" >&2; fail "consumer configure"; }
cmake --build "$WORK/build" > "$WORK/build.log" 2>&1 \
  || { cat "$WORK/build.log" >&2; fail "consumer build"; }
# The consumer must have used the installed package, not the build tree.
expect "$WORK/configure.log" "Using FP4MLIRConfig.cmake in: $PREFIX/lib/cmake/fp4mlir"

echo "== C++ consumer"
"$WORK/build/fp4-consumer" > "$WORK/cpp.out" || { cat "$WORK/cpp.out"; fail "fp4-consumer exited non-zero"; }
expect "$WORK/cpp.out" "type: !fp4.tensor<16x128xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>"
expect "$WORK/cpp.out" "components: 3"
expect "$WORK/cpp.out" "fp4.dequantize"
if grep -qF "fp4-quantize" "$WORK/cpp.out"; then
  expect "$WORK/cpp.out" "fp4.matmul"
  expect "$WORK/cpp.out" "#fp4.nvfp4"
fi
expect "$WORK/cpp.out" "consumer: ok"

echo "== C consumer"
"$WORK/build/fp4-consumer-c" > "$WORK/c.out" || { cat "$WORK/c.out"; fail "fp4-consumer-c exited non-zero"; }
expect "$WORK/c.out" "dialect: fp4"
expect "$WORK/c.out" "type: !fp4.tensor<?x256xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>"
expect "$WORK/c.out" "axis: 1, block: 32, components: 2"
expect "$WORK/c.out" "rejected: #fp4.mxfp4: block_size must be an even number"
expect "$WORK/c.out" "does not match the element type"
expect "$WORK/c.out" "!fp4.tensor<4x256x!fp4.s1p2, #fp4.hif4, axis = 1>"
expect "$WORK/c.out" "consumer-c: ok"

echo "== installed fp4-opt"
"$PREFIX/bin/fp4-opt" "$ROOT/test/Dialect/FP4/ops.mlir" -split-input-file > "$WORK/opt.out" \
  || fail "installed fp4-opt failed"
expect "$WORK/opt.out" "fp4.quantize"

echo "== installed Python package"
( cd "$WORK" && env -u FP4_LIB_DIR -u FP4_BUILD_DIR PYTHONPATH="$PREFIX/python" \
  "$PY" - "$PREFIX" > "$WORK/py.out" 2>&1 <<'PYEOF'
import os, sys
from fp4 import _lib, ir
prefix = os.path.realpath(sys.argv[1])
lib = os.path.realpath(_lib.load()._name)
assert lib.startswith(prefix + os.sep), f"loaded {lib}, not from {prefix}"
ctx = ir.Context()
t = ctx.parse_type("!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>")
print("python:", t, t.scheme.format_name)
PYEOF
) || { cat "$WORK/py.out" >&2; fail "installed Python package"; }
expect "$WORK/py.out" "python: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> mxfp4"

echo "consumer test passed"
if [ -z "${2:-}" ] && [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; fi
