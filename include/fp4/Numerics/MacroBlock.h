//===- MacroBlock.h - Macro-block factor rules ------------------*- C++ -*-===//
//
// Macro-block scaling, numerics.md section 5 (our definition). MXFP4 blocks
// are grouped into macro-blocks of Bm elements; each macro-block carries one
// factor m in [1, 2), stored as bf16, so that a value is
//   x' = f32(f32(e2m1(q) * 2^e_i) * m).
// Default m: the significand of f32(amax_macro / 6), rounded to bf16, with
// 2.0 -> 1.0; a zero or non-finite macro-block gets m = 1. The block
// exponents e_i are the MXFP4 rule applied to y = f32(x / m).
// Option search = N: candidates m_j = bf16(1 + f32(j / N)), j = 0..N-1; keep
// the lowest f64 sum of squared errors over the macro-block (ties: smallest
// j). The selection loop belongs to the caller.
//
// max |f32(x_i / m)| == f32(max |x_i| / m) because x -> f32(x / m) is
// monotone, so a block's amax on y can come from the amax on x.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_MACROBLOCK_H
#define FP4_NUMERICS_MACROBLOCK_H

#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/MXFP4.h"

namespace mlir::fp4::numerics {

/// Default macro-block factor m from the macro-block's maximum magnitude.
template <typename Ops>
typename Ops::F32 macroFactorFromAmax(const Ops &ops,
                                      typename Ops::F32 macroAmax) {
  auto y = ops.divf(macroAmax, ops.f32(kE2M1Max));
  // A subnormal y has its significand below the implicit bit: scale by 2^64
  // (exact) so the mantissa field holds it. y = 0 stays 0 and yields m = 1.
  auto ys = ops.selectf(ops.cmpf(FPred::OLT, y, ops.f32(0x1p-126f)),
                        ops.mulf(y, ops.f32(0x1p64f)), y);
  auto sig = ops.bitcastToF32(ops.ori(
      ops.andi(ops.bitcastToI32(ys), ops.i32(0x7FFFFF)), ops.i32(0x3F800000)));
  auto m = roundToBF16(ops, sig);
  m = ops.selectf(ops.cmpf(FPred::OGE, m, ops.f32(2.0f)), ops.f32(1.0f), m);
  return ops.selectf(isNonFinite(ops, macroAmax), ops.f32(1.0f), m);
}

/// Search candidate m_j = bf16(1 + f32(j / N)).
template <typename Ops>
typename Ops::F32 macroSearchFactor(const Ops &ops, int32_t j, int32_t n) {
  auto q =
      ops.divf(ops.f32(static_cast<float>(j)), ops.f32(static_cast<float>(n)));
  return roundToBF16(ops, ops.addf(ops.f32(1.0f), q));
}

/// y = f32(x / m), the value the block exponents are computed on.
template <typename Ops>
typename Ops::F32 macroScaledInput(const Ops &ops, typename Ops::F32 x,
                                   typename Ops::F32 m) {
  return ops.divf(x, m);
}

/// x' = f32(f32(e2m1(code) * 2^e) * m).
template <typename Ops>
typename Ops::F32 macroDequant(const Ops &ops, typename Ops::I32 code,
                               typename Ops::I32 scaleByte,
                               typename Ops::F32 m) {
  return ops.mulf(mxfp4Dequant(ops, code, scaleByte), m);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_MACROBLOCK_H
