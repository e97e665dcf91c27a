//===- HiF4.h - HiFloat4 three-level scaling rules --------------*- C++ -*-===//
//
// HiF4, numerics.md section 4 (public "hifx4" fake-quant). A group of 64
// elements has an E6M2 scale sf, a 1-bit level-2 exponent per 8 elements and
// a 1-bit level-3 exponent per 4 elements; an element is sign + m, m = k/4,
// k in 0..7. Every step is one f32 op rounded to nearest even:
//
//   sf  = bf16(m64 * bf16(1/7));  sf = clamp(sf, 2^-48, 49152)
//   sf  = sf rounded to 2 mantissa bits (E6M2, nearest even)
//   rec = bf16(1 / sf)
//   l2  = (m8 * rec >= 4) ? 2 : 1                       per 8
//   l3  = ((m4 * rec) / l2 >= 2) ? 2 : 1                 per 4
//   t   = ((4 * |x|) * rec) / (l2 * l3)
//   k   = floor(t) + (t - floor(t) >= 0.5); k >= 8 -> 7  (half up, exact:
//         t - floor(t) is exact, so no f32 t + 0.5 rounding creeps in)
//   x'  = sign(x) * (((k/4) * l2) * l3) * sf             (exact)
//
// E6M2: value 2^(E-48) * (1 + M/4), byte E << 2 | M; 0xFF is NaN and marks a
// group with a NaN or Inf. An all-zero group gets byte 0 (sf clamps to
// 2^-48), level bits 0 and codes 0 / 8 by sign, without a special case.
//
// Element code = sign << 3 | k (the E2M1 nibble layout with the HiF4 grid).
//
// Metadata word (our layout), one uint32 per 64-group:
//   bits  0..7   E6M2 byte of sf
//   bits  8..15  level-2 bits: bit 8+i set iff 8-block i has l2 = 2
//   bits 16..31  level-3 bits: bit 16+j set iff 4-block j has l3 = 2
// A NaN/Inf group's word is exactly 0x000000FF.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_HIF4_H
#define FP4_NUMERICS_HIF4_H

#include "fp4/Numerics/BF16.h"

namespace mlir::fp4::numerics {

/// HiF4 group size and its sub-blocks.
constexpr int64_t kHiF4GroupSize = 64;
constexpr int64_t kHiF4Level2Size = 8;
constexpr int64_t kHiF4Level3Size = 4;
/// bf16(1/7) = 0x3E12 (checked against roundToBF16(1/7) in the unit tests).
constexpr float kHiF4OneSeventhBF16 = 0.142578125f;
/// The E6M2 NaN byte.
constexpr int32_t kE6M2NaN = 0xFF;

/// E6M2 byte of the level-1 scale of a group with maximum magnitude
/// `groupAmax` (NaN-propagating amax; NaN/Inf -> 0xFF).
template <typename Ops>
typename Ops::I32 hif4ScaleByte(const Ops &ops, typename Ops::F32 groupAmax) {
  auto sf = roundToBF16(ops, ops.mulf(groupAmax, ops.f32(kHiF4OneSeventhBF16)));
  sf = maxWithLimit(ops, sf, 0x1p-48f);
  sf = minWithLimit(ops, sf, 49152.0f);
  // Round the (normal, positive) f32 to 2 mantissa bits, ties to even, on the
  // bits; a carry into the exponent is the correct result.
  auto bits = ops.bitcastToI32(sf);
  auto lsb = ops.andi(ops.shrui(bits, ops.i32(21)), ops.i32(1));
  auto rounded = ops.addi(bits, ops.addi(ops.i32(0xFFFFF), lsb));
  // E6M2 exponent = f32 exponent - 127 + 48, so byte = (bits >> 21) - 79*4.
  auto byte = ops.subi(ops.shrui(rounded, ops.i32(21)), ops.i32(79 << 2));
  return ops.selecti(isNonFinite(ops, groupAmax), ops.i32(kE6M2NaN), byte);
}

/// E6M2 byte -> f32 (exact); 0xFF is NaN.
template <typename Ops>
typename Ops::F32 e6m2Decode(const Ops &ops, typename Ops::I32 byte) {
  auto b = ops.andi(byte, ops.i32(0xFF));
  auto bits = ops.addi(ops.shli(b, ops.i32(21)), ops.i32(79 << 23));
  return ops.bitcastToF32(ops.selecti(ops.cmpi(IPred::EQ, b, ops.i32(kE6M2NaN)),
                                      ops.i32(kF32NaNBits), bits));
}

/// rec = bf16(1 / sf).
template <typename Ops>
typename Ops::F32 hif4Reciprocal(const Ops &ops, typename Ops::F32 sf) {
  return roundToBF16(ops, ops.divf(ops.f32(1.0f), sf));
}

/// Level-2 bit of an 8-block with maximum magnitude m8: 1 iff l2 = 2.
template <typename Ops>
typename Ops::I32 hif4Level2Bit(const Ops &ops, typename Ops::F32 m8,
                                typename Ops::F32 rec) {
  return zextBool(ops, ops.cmpf(FPred::OGE, ops.mulf(m8, rec), ops.f32(4.0f)));
}

/// Level-3 bit of a 4-block with maximum magnitude m4 inside an 8-block with
/// level-2 bit `l2Bit`: 1 iff l3 = 2.
template <typename Ops>
typename Ops::I32 hif4Level3Bit(const Ops &ops, typename Ops::F32 m4,
                                typename Ops::F32 rec,
                                typename Ops::I32 l2Bit) {
  auto l2 = ops.selectf(ops.cmpi(IPred::NE, l2Bit, ops.i32(0)), ops.f32(2.0f),
                        ops.f32(1.0f));
  return zextBool(ops, ops.cmpf(FPred::OGE, ops.divf(ops.mulf(m4, rec), l2),
                                ops.f32(2.0f)));
}

/// l2 * l3 as an f32 (1, 2 or 4) from the two level bits.
template <typename Ops>
typename Ops::F32 hif4LevelScale(const Ops &ops, typename Ops::I32 l2Bit,
                                 typename Ops::I32 l3Bit) {
  auto shift =
      ops.addi(ops.andi(l2Bit, ops.i32(1)), ops.andi(l3Bit, ops.i32(1)));
  // 2^shift built from the exponent field: (127 + shift) << 23.
  return ops.bitcastToF32(ops.shli(ops.addi(shift, ops.i32(127)), ops.i32(23)));
}

/// Element code sign << 3 | k of x (round half up, k <= 7).
template <typename Ops>
typename Ops::I32 hif4ElementCode(const Ops &ops, typename Ops::F32 x,
                                  typename Ops::F32 rec,
                                  typename Ops::F32 levelScale) {
  auto t =
      ops.divf(ops.mulf(ops.mulf(ops.f32(4.0f), ops.absf(x)), rec), levelScale);
  auto fl = ops.floorf(t);
  auto half = ops.cmpf(FPred::OGE, ops.subf(t, fl), ops.f32(0.5f));
  auto k = ops.selectf(half, ops.addf(fl, ops.f32(1.0f)), fl);
  // m >= 2 -> 1.75; NaN (only in NaN groups) also lands on 7.
  k = ops.selectf(ops.cmpf(FPred::OLT, k, ops.f32(8.0f)), k, ops.f32(7.0f));
  return ops.ori(ops.fptosi(k), signCodeBit(ops, x));
}

/// x' = sign * (((k/4) * l2) * l3) * sf.
template <typename Ops>
typename Ops::F32 hif4Dequant(const Ops &ops, typename Ops::I32 code,
                              typename Ops::F32 levelScale,
                              typename Ops::F32 sf) {
  auto m = ops.mulf(ops.sitofp(ops.andi(code, ops.i32(7))), ops.f32(0.25f));
  auto mag = ops.mulf(ops.mulf(m, levelScale), sf);
  auto sign = ops.shli(ops.andi(code, ops.i32(8)), ops.i32(28));
  return ops.bitcastToF32(ops.ori(ops.bitcastToI32(mag), sign));
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_HIF4_H
