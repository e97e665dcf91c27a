//===- F16.h - IEEE half precision as generic scalar rules ------*- C++ -*-===//
//
// f16 values are kept in f32 registers, like bf16 (BF16.h). f16Decode widens
// storage bits exactly; roundToF16 is arith.truncf f32 -> f16 (round to
// nearest even, overflow to Inf, NaN stays a quiet NaN with its sign), so the
// constant folder can apply a truncf at compile time bit for bit, and
// f16StorageBits gives the bits to store.
//
//   decode: the 15 magnitude bits shifted left by 13 are the f32 pattern of
//           value * 2^-112 for every finite f16 (a subnormal f16 lands on an
//           f32 subnormal), so one exact multiply by 2^112 finishes it.
//   round:  |x| >= 2^-14 rounds the f32 mantissa to 10 bits on the bit
//           pattern (a carry into the exponent is correct); |x| < 2^-14 has
//           the fixed f16 spacing 2^-24, which (|x| + 0.5) - 0.5 produces
//           with the f32 adder's ties-to-even (ulp of [0.5, 1) is 2^-24).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_F16_H
#define FP4_NUMERICS_F16_H

#include "fp4/Numerics/F32Bits.h"

namespace mlir::fp4::numerics {

/// f16 storage bits (in the low 16 bits) -> f32, exact.
template <typename Ops>
typename Ops::F32 f16Decode(const Ops &ops, typename Ops::I32 bits16) {
  auto mag = ops.andi(bits16, ops.i32(0x7FFF));
  auto sign = ops.shli(ops.andi(bits16, ops.i32(0x8000)), ops.i32(16));
  auto shifted = ops.shli(mag, ops.i32(13));
  auto finite =
      ops.bitcastToI32(ops.mulf(ops.bitcastToF32(shifted), ops.f32(0x1p112f)));
  // Inf and NaN: exponent field all ones, payload kept.
  auto special = ops.ori(shifted, ops.i32(kF32InfBits));
  auto isSpecial = ops.cmpi(IPred::SGE, mag, ops.i32(0x7C00));
  return ops.bitcastToF32(
      ops.ori(ops.selecti(isSpecial, special, finite), sign));
}

/// f32 -> nearest f16 (ties to even), returned as an f32.
template <typename Ops>
typename Ops::F32 roundToF16(const Ops &ops, typename Ops::F32 x) {
  auto bits = ops.bitcastToI32(x);
  auto a = absBits(ops, x);
  auto lsb = ops.andi(ops.shrui(a, ops.i32(13)), ops.i32(1));
  auto normal = ops.andi(ops.addi(a, ops.addi(ops.i32(0xFFF), lsb)),
                         ops.i32(static_cast<int32_t>(0xFFFFE000u)));
  // Above 65504 (0x477FE000) only Inf is left.
  normal = ops.selecti(ops.cmpi(IPred::SGT, normal, ops.i32(0x477FE000)),
                       ops.i32(kF32InfBits), normal);
  auto half = ops.f32(0.5f);
  auto sub =
      ops.bitcastToI32(ops.subf(ops.addf(ops.bitcastToF32(a), half), half));
  auto r =
      ops.selecti(ops.cmpi(IPred::SLT, a, ops.i32(0x38800000)), sub, normal);
  // NaN: truncate the payload to f16's 10 bits and force quiet.
  auto nan = ops.ori(ops.andi(a, ops.i32(static_cast<int32_t>(0xFFFFE000u))),
                     ops.i32(0x00400000));
  r = ops.selecti(ops.cmpi(IPred::SGT, a, ops.i32(kF32InfBits)), nan, r);
  return ops.bitcastToF32(
      ops.ori(r, ops.andi(bits, ops.i32(static_cast<int32_t>(0x80000000u)))));
}

/// The 16 storage bits of an f32 that already has f16 precision (a value of
/// roundToF16): exponent rebias for normals, value * 2^24 for subnormals.
template <typename Ops>
typename Ops::I32 f16StorageBits(const Ops &ops, typename Ops::F32 x) {
  auto a = absBits(ops, x);
  auto normal = ops.shrui(ops.subi(a, ops.i32(112 << 23)), ops.i32(13));
  auto sub = ops.fptosi(ops.mulf(ops.bitcastToF32(a), ops.f32(0x1p24f)));
  // Inf and NaN keep the top 10 payload bits (a NaN's quiet bit included).
  auto special = ops.ori(ops.i32(0x7C00),
                         ops.andi(ops.shrui(a, ops.i32(13)), ops.i32(0x3FF)));
  auto mag =
      ops.selecti(ops.cmpi(IPred::SLT, a, ops.i32(0x38800000)), sub, normal);
  mag =
      ops.selecti(ops.cmpi(IPred::SGE, a, ops.i32(kF32InfBits)), special, mag);
  auto sign =
      ops.andi(ops.shrui(ops.bitcastToI32(x), ops.i32(16)), ops.i32(0x8000));
  return ops.ori(mag, sign);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_F16_H
