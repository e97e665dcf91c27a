//===- Outliers.cpp - Block top-k selection, C++ reference ----------------===//
//
// The element of rank j is found as the first element (in the selection
// order of Outliers.h) among those not yet taken, for j = 0 .. k-1; the
// lowering computes every element's rank instead. Both use outlierPrecedes,
// and the order is total, so they select the same elements in the same
// order.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/Outliers.h"

#include "fp4/Numerics/ScalarOps.h"

#include <cassert>

using namespace mlir::fp4::numerics;

namespace {
constexpr ScalarOps ops{};

void selectTopKBlock(const float *x, int64_t blockSize, int64_t k,
                     float *values, int32_t *indices) {
  int32_t bits[kMaxSparseBlock];
  bool taken[kMaxSparseBlock] = {};
  for (int64_t i = 0; i < blockSize; ++i)
    bits[i] = absBits(ops, x[i]);
  for (int64_t j = 0; j < k; ++j) {
    int32_t best = -1;
    for (int32_t i = 0; i < blockSize; ++i) {
      if (taken[i])
        continue;
      if (best < 0 || outlierPrecedes(ops, bits[i], i, bits[best], best))
        best = i;
    }
    taken[best] = true;
    values[j] = x[best];
    indices[j] = best;
  }
}
} // namespace

void mlir::fp4::numerics::selectTopKRow(const float *x, int64_t n,
                                        int64_t blockSize, int64_t k,
                                        float *values, int32_t *indices) {
  assert(blockSize >= 1 && blockSize <= kMaxSparseBlock && k >= 1 &&
         k <= blockSize && n % blockSize == 0);
  for (int64_t b = 0; b < n / blockSize; ++b)
    selectTopKBlock(x + b * blockSize, blockSize, k, values + b * k,
                    indices + b * k);
}

void mlir::fp4::numerics::splitOutliersRow(const float *x, int64_t n,
                                           int64_t blockSize, int64_t k,
                                           float *rest, float *values,
                                           int32_t *indices) {
  selectTopKRow(x, n, blockSize, k, values, indices);
  for (int64_t i = 0; i < n; ++i)
    rest[i] = x[i];
  for (int64_t b = 0; b < n / blockSize; ++b)
    for (int64_t j = 0; j < k; ++j)
      rest[b * blockSize + indices[b * k + j]] = 0.0f;
}
