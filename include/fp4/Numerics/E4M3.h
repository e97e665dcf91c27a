//===- E4M3.h - FP8 E4M3 (f8E4M3FN) encode/decode ---------------*- C++ -*-===//
//
// E4M3FN: bias 7, 3 mantissa bits, subnormals k * 2^-9, max 448, byte
// 0x7F / 0xFF NaN, no Inf. Used as the NVFP4 block scale, which is never
// negative, so only a non-negative encoder is provided.
//
// Rounding uses the magic-number trick: for v in [2^E, 2^(E+1)) the sum
// v + 2^(E+20) has ulp 2^(E-3), exactly the E4M3 spacing there, so
// (v + m) - m rounds v to 3 mantissa bits with the f32 adder's ties-to-even.
// Below 2^-6 the E4M3 spacing is fixed at 2^-9, so E is clamped to -6 and the
// same trick rounds to subnormals. m is built from the exponent bits of v.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_E4M3_H
#define FP4_NUMERICS_E4M3_H

#include "fp4/Numerics/F32Bits.h"

namespace mlir::fp4::numerics {

/// Largest finite E4M3 value.
constexpr float kE4M3Max = 448.0f;
/// The E4M3 NaN byte used for a block scale.
constexpr int32_t kE4M3NaN = 0x7F;

/// Round a finite v in [0, 448] to E4M3 (nearest, ties to even) and return
/// its byte 0x00..0x7E. Other inputs give an unspecified byte.
template <typename Ops>
typename Ops::I32 e4m3EncodeNonNegative(const Ops &ops, typename Ops::F32 v) {
  auto bits = ops.bitcastToI32(v);
  // Biased f32 exponent of v, clamped below at that of 2^-6 (127 - 6).
  auto expField = ops.shrui(bits, ops.i32(23));
  expField = ops.selecti(ops.cmpi(IPred::SLT, expField, ops.i32(121)),
                         ops.i32(121), expField);
  auto magic =
      ops.bitcastToF32(ops.shli(ops.addi(expField, ops.i32(20)), ops.i32(23)));
  auto r = ops.subf(ops.addf(v, magic), magic);
  // Subnormal: r = k * 2^-9 with k in 0..7. Normal: the f32 bits hold
  // ((E + 127) << 3 | mantissa) << 20; rebias 127 -> 7 (120 << 3 = 960).
  auto sub = ops.fptosi(ops.mulf(
      ops.selectf(ops.cmpf(FPred::OLT, r, ops.f32(0x1p-6f)), r, ops.f32(0.0f)),
      ops.f32(512.0f)));
  auto normal =
      ops.subi(ops.shrui(ops.bitcastToI32(r), ops.i32(20)), ops.i32(960));
  return ops.selecti(ops.cmpf(FPred::OLT, r, ops.f32(0x1p-6f)), sub, normal);
}

/// E4M3 byte -> f32 (exact); 0x7F and 0xFF are NaN.
template <typename Ops>
typename Ops::F32 e4m3Decode(const Ops &ops, typename Ops::I32 byte) {
  auto b = ops.andi(byte, ops.i32(0xFF));
  auto mag = ops.andi(b, ops.i32(0x7F));
  auto isSub = ops.cmpi(IPred::SLT, mag, ops.i32(8));
  auto sub = ops.mulf(ops.sitofp(mag), ops.f32(0x1p-9f));
  auto normal = ops.bitcastToF32(
      ops.addi(ops.shli(mag, ops.i32(20)), ops.i32(120 << 23)));
  auto value = ops.bitcastToI32(ops.selectf(isSub, sub, normal));
  value = ops.ori(value, ops.shli(ops.andi(b, ops.i32(0x80)), ops.i32(24)));
  value = ops.selecti(ops.cmpi(IPred::EQ, mag, ops.i32(0x7F)),
                      ops.i32(kF32NaNBits), value);
  return ops.bitcastToF32(value);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_E4M3_H
