#!/usr/bin/env bash
# Builds fp4-mlir and runs every test suite: lit (dialect, passes,
# conversions, CPU integration, tools), the C++ unit tests (ctest), the
# Python tests (pytest), a fixed-seed fuzz campaign of fp4-opt
# (tools/fp4-fuzz), and the sanitizer suites (scripts/run_sanitizers.sh: an
# ASan + UBSan build running lit and ctest, and the libFuzzer targets).
# Prints one summary line `N passed, N failed` and exits non-zero if
# anything failed. FP4_SKIP_SANITIZERS=1 leaves out the sanitizer build
# (quicker local runs; CI runs everything).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export FP4_BUILD_DIR=${FP4_BUILD_DIR:-$ROOT/build}
export FP4_LIB_DIR=$FP4_BUILD_DIR/lib
PY=${PYTHON:-python3}

bash "$ROOT/scripts/install_deps.sh" || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }
# compressed-tensors (with a CPU-only torch) in its own cached environment,
# for test_compressed_tensors.py; required here, so its absence fails. Its
# first install is mostly download and unpacking (about 8 min), the build
# is CPU: the install runs in the background during the build.
CT_LOG=$(mktemp)
bash "$ROOT/scripts/install_compressed_tensors.sh" >"$CT_LOG" 2>&1 &
CT_PID=$!
if ! bash "$ROOT/scripts/build.sh"; then
  kill "$CT_PID" 2>/dev/null
  echo "build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
if ! wait "$CT_PID"; then
  cat "$CT_LOG"
  echo "compressed-tensors installation failed"; echo "0 passed, 1 failed"; exit 1
fi
FP4_CT_PYTHON=$(tail -n 1 "$CT_LOG")
rm -f "$CT_LOG"
export FP4_CT_PYTHON FP4_REQUIRE_COMPRESSED_TENSORS=1

REPORTS=$FP4_BUILD_DIR/test-reports
rm -rf "$REPORTS"; mkdir -p "$REPORTS"

echo "== lit =="
/usr/lib/llvm-22/bin/lit -sv "$FP4_BUILD_DIR/test" --xunit-xml-output "$REPORTS/lit.xml"
echo "== ctest =="
ctest --test-dir "$FP4_BUILD_DIR" --output-on-failure --output-junit "$REPORTS/ctest.xml"
echo "== pytest =="
# On every core (pytest-xdist, installed by install_deps.sh): the suite is
# mostly single-threaded JIT runs and emulations. --dist loadfile keeps a
# file's tests on one worker, so a module-scoped fixture (a JIT-compiled
# library, an installed package) is built once. (loadgroup would spread
# finer, but xdist 3.8 cannot group under pytest 9: it renames items through
# Node._nodeid, which pytest 9 no longer has.)
( cd "$ROOT" && "$PY" -m pytest test/python -q -p no:cacheprovider \
    -n "$(nproc)" --dist loadfile --junitxml="$REPORTS/pytest.xml" )

echo "== fuzz campaign =="
# 300 mutants, fixed seed: the same campaign on every run (about 1-2 min).
"$PY" "$ROOT/tools/fp4-fuzz/fp4-fuzz" campaign --seed 20261201 --mutants 300 \
  --jobs "$(nproc)" --fp4-opt "$FP4_BUILD_DIR/bin/fp4-opt" \
  --out "$FP4_BUILD_DIR/fuzz" --junit "$REPORTS/fuzz.xml"

SUITES=("$REPORTS/lit.xml" "$REPORTS/ctest.xml" "$REPORTS/pytest.xml" "$REPORTS/fuzz.xml")
if [ "${FP4_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== sanitizers =="
  bash "$ROOT/scripts/run_sanitizers.sh" "$REPORTS"
  SUITES+=("$REPORTS/sanitize-lit.xml" "$REPORTS/sanitize-ctest.xml"
           "$REPORTS/sanitize-fuzz.xml" "$REPORTS/libfuzzer.xml")
fi

"$PY" "$ROOT/scripts/summarize_tests.py" "${SUITES[@]}"
