//===- F32Bits.h - Bit-level f32 helpers shared by the rules ----*- C++ -*-===//
//
// Small building blocks of the scalar rules that look at the f32 bit pattern.
// Generic over the arithmetic backend (OpsConcept.h).
//
// Block maxima are taken over |x| *bit patterns* as signed integers: for
// non-negative floats the integer order is the float order, and NaN patterns
// sort above +Inf, so a NaN anywhere in a block makes the block's amax NaN
// (a float max built from ordered compares would silently drop it).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_F32BITS_H
#define FP4_NUMERICS_F32BITS_H

#include "fp4/Numerics/OpsConcept.h"

#include <cstdint>

namespace mlir::fp4::numerics {

/// Bit pattern of +Inf; |x| bits at or above it mean Inf or NaN.
constexpr int32_t kF32InfBits = 0x7F800000;
/// A quiet NaN, used wherever a rule produces NaN.
constexpr int32_t kF32NaNBits = 0x7FC00000;
/// Largest finite f32 (FLT_MAX).
constexpr float kF32Max = 3.40282346638528859811704183484516925440e+38f;

/// 1 if `b` else 0.
template <typename Ops>
typename Ops::I32 zextBool(const Ops &ops, typename Ops::Bool b) {
  return ops.selecti(b, ops.i32(1), ops.i32(0));
}

/// The bit pattern of |x| (sign cleared), a non-negative i32.
template <typename Ops>
typename Ops::I32 absBits(const Ops &ops, typename Ops::F32 x) {
  return ops.andi(ops.bitcastToI32(x), ops.i32(0x7FFFFFFF));
}

/// Signed max of two |x| bit patterns: the float max, NaN-propagating.
template <typename Ops>
typename Ops::I32 maxAbsBits(const Ops &ops, typename Ops::I32 a,
                             typename Ops::I32 b) {
  return ops.selecti(ops.cmpi(IPred::SGT, a, b), a, b);
}

/// True if the |x| bit pattern is Inf or NaN.
template <typename Ops>
typename Ops::Bool isNonFiniteAbsBits(const Ops &ops, typename Ops::I32 bits) {
  return ops.cmpi(IPred::SGE, bits, ops.i32(kF32InfBits));
}

/// True if x is Inf or NaN.
template <typename Ops>
typename Ops::Bool isNonFinite(const Ops &ops, typename Ops::F32 x) {
  return isNonFiniteAbsBits(ops, absBits(ops, x));
}

/// 8 if the sign bit of x is set (negative values, -0.0, negative NaN), else
/// 0: the sign half of an E2M1 / HiF4 code.
template <typename Ops>
typename Ops::I32 signCodeBit(const Ops &ops, typename Ops::F32 x) {
  return ops.shli(ops.shrui(ops.bitcastToI32(x), ops.i32(31)), ops.i32(3));
}

/// min(v, limit) for a non-NaN limit; a NaN v stays NaN.
template <typename Ops>
typename Ops::F32 minWithLimit(const Ops &ops, typename Ops::F32 v,
                               float limit) {
  auto l = ops.f32(limit);
  return ops.selectf(ops.cmpf(FPred::OGT, v, l), l, v);
}

/// max(v, limit) for a non-NaN limit; a NaN v stays NaN.
template <typename Ops>
typename Ops::F32 maxWithLimit(const Ops &ops, typename Ops::F32 v,
                               float limit) {
  auto l = ops.f32(limit);
  return ops.selectf(ops.cmpf(FPred::OLT, v, l), l, v);
}

/// Squared difference (x - y)^2 in f64: one term of the sums of squared errors
/// that choose between scale candidates. The caller accumulates the terms
/// sequentially in element order with addd.
template <typename Ops>
typename Ops::F64 squaredErrorF64(const Ops &ops, typename Ops::F32 x,
                                  typename Ops::F32 y) {
  auto d = ops.subd(ops.extf(x), ops.extf(y));
  return ops.muld(d, d);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_F32BITS_H
