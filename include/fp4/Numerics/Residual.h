//===- Residual.h - Sparse residual correction ------------------*- C++ -*-===//
//
// numerics.md 8 (Rollout-ResQ style residual correction): the quantization
// residual of a tensor, r = x - deq(Q(x)), one f32 subtraction per element
// (x extended exactly to f32, deq(Q(x)) as the scheme dequantizes), is kept
// in a structured-sparse form S(r) and added back as a correction product:
//   y = deq(Q(x)) deq(Q(W))^T + S(r) deq(Q(W))^T.
//
// S(r) is the block top-k of Outliers.h applied to r along the blocked axis:
//   2:4   blocks of 4, k = 2: in every 4 consecutive elements the 2 largest
//         |r|, ties to the lower index (the 2:4 pattern of sparse tensor
//         cores);
//   top-k blocks of B (32 by default), the k largest |r|.
// The kept values are stored in the side tensor's type (bf16 by default,
// rounded to nearest even by the caller) with their in-block indices.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_RESIDUAL_H
#define FP4_NUMERICS_RESIDUAL_H

#include "fp4/Numerics/Outliers.h"

#include <cstdint>

namespace mlir::fp4::numerics {

/// Block size and k of the 2:4 pattern.
constexpr int64_t kTwoFourBlock = 4;
constexpr int64_t kTwoFourKeep = 2;

/// r = x - dequantized, one f32 operation.
template <typename Ops>
typename Ops::F32 residualValue(const Ops &ops, typename Ops::F32 x,
                                typename Ops::F32 dequantized) {
  return ops.subf(x, dequantized);
}

/// The sparse residual of one row: r[i] = residualValue(x[i],
/// dequantized[i]), then selectTopKRow(r, n, blockSize, k, values, indices).
void residualRow(const float *x, const float *dequantized, int64_t n,
                 int64_t blockSize, int64_t k, float *values, int32_t *indices);

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_RESIDUAL_H
