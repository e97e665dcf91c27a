//===- Residual.cpp - Sparse residual, C++ reference ----------------------===//

#include "fp4/Numerics/Residual.h"

#include "fp4/Numerics/ScalarOps.h"

#include <vector>

using namespace mlir::fp4::numerics;

void mlir::fp4::numerics::residualRow(const float *x, const float *dequantized,
                                      int64_t n, int64_t blockSize, int64_t k,
                                      float *values, int32_t *indices) {
  constexpr ScalarOps ops{};
  std::vector<float> r(n);
  for (int64_t i = 0; i < n; ++i)
    r[i] = residualValue(ops, x[i], dequantized[i]);
  selectTopKRow(r.data(), n, blockSize, k, values, indices);
}
