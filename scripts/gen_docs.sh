#!/usr/bin/env bash
# Regenerates the dialect and pass reference docs (docs/reference/*.md) from
# the ODS definitions. test/python/test_docs.py fails when they are stale.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${FP4_BUILD_DIR:-$ROOT/build}
ninja -C "$BUILD" mlir-doc >/dev/null
mkdir -p "$ROOT/docs/reference"
for f in FP4/FP4Dialect.md FP4/FP4RotationOps.md FP4/FP4CorrectionOps.md FP4TransformsPasses.md FP4ConversionPasses.md FP4GenericPasses.md; do
  cp "$BUILD/docs/$f" "$ROOT/docs/reference/$(basename "$f")"
done
echo "docs/reference updated"
