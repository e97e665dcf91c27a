//===- E8M0.h - E8M0 scale byte and the MX shared-exponent rules -*- C++
//-*-===//
//
// E8M0 (f8E8M0FNU), numerics.md section 2: value 2^(byte-127), byte 0xFF NaN,
// no zero, no sign. mxScaleByte picks the MXFP4 shared exponent e from a
// block's amax with one of the four ScaleRounding rules and returns e + 127.
//
// Everything comes from the f32 bit pattern of amax (exponent field E,
// mantissa field M), never from log2, so powers of two are exact everywhere.
// For normal amax = 2^(E-127) * (1 + M/2^23):
//   Floor: e = E - 129
//   Ceil:  e = E - 129 + (M != 0)
//   Even:  e = E - 129 + (M >= 0x600000)        (amax / 2^floor >= 1.75)
//   RCeil: e = E - 129 + (M >  0x400000)        (smallest e: 6*2^e >= amax;
//          amax/6 = 2^(E-129) * (1+f)/1.5 and (1+f)/1.5 is in (1/2, 4/3))
// then e is clamped to [-127, 127]. Subnormal amax (E = 0) always clamps to
// -127 under every rule (the true e is below -128), so no leading-zero count
// is needed; amax = 0 lands on byte 0 the same way. NaN or Inf amax (the
// block holds a NaN or an Inf; see F32Bits.h for the NaN-propagating amax)
// gives byte 0xFF.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_E8M0_H
#define FP4_NUMERICS_E8M0_H

#include "fp4/Numerics/F32Bits.h"
#include "fp4/Numerics/RoundingModes.h"

namespace mlir::fp4::numerics {

/// The E8M0 NaN byte.
constexpr int32_t kE8M0NaN = 0xFF;

/// MXFP4 scale byte (e + 127) for a block with maximum magnitude `amax`.
template <typename Ops>
typename Ops::I32 mxScaleByte(const Ops &ops, typename Ops::F32 amax,
                              ScaleRounding rule) {
  auto bits = absBits(ops, amax);
  auto expField = ops.shrui(bits, ops.i32(23));
  auto mant = ops.andi(bits, ops.i32(0x7FFFFF));
  auto e = ops.subi(expField, ops.i32(129));
  switch (rule) {
  case ScaleRounding::Floor:
    break;
  case ScaleRounding::Ceil:
    e = ops.addi(e, zextBool(ops, ops.cmpi(IPred::NE, mant, ops.i32(0))));
    break;
  case ScaleRounding::Even:
    e = ops.addi(e,
                 zextBool(ops, ops.cmpi(IPred::SGE, mant, ops.i32(0x600000))));
    break;
  case ScaleRounding::RCeil:
    e = ops.addi(e,
                 zextBool(ops, ops.cmpi(IPred::SGT, mant, ops.i32(0x400000))));
    break;
  }
  e = ops.selecti(ops.cmpi(IPred::SLT, e, ops.i32(-127)), ops.i32(-127), e);
  e = ops.selecti(ops.cmpi(IPred::SGT, e, ops.i32(127)), ops.i32(127), e);
  auto byte = ops.addi(e, ops.i32(127));
  return ops.selecti(isNonFiniteAbsBits(ops, bits), ops.i32(kE8M0NaN), byte);
}

/// E8M0 byte -> 2^(byte-127) exactly: byte 0 is the f32 subnormal 2^-127,
/// byte 0xFF is NaN.
template <typename Ops>
typename Ops::F32 e8m0Decode(const Ops &ops, typename Ops::I32 byte) {
  auto b = ops.andi(byte, ops.i32(0xFF));
  auto bits = ops.selecti(ops.cmpi(IPred::EQ, b, ops.i32(0)),
                          ops.i32(0x00400000), ops.shli(b, ops.i32(23)));
  bits = ops.selecti(ops.cmpi(IPred::EQ, b, ops.i32(kE8M0NaN)),
                     ops.i32(kF32NaNBits), bits);
  return ops.bitcastToF32(bits);
}

/// 2^-(byte-127) = 2^(127-byte), the factor that maps a block onto the
/// element grid; NaN for byte 0xFF.
///
/// Multiplying by it is the exact division x / 2^e that the spec asks for:
/// e is in [-127, 127], so 2^-e is itself an exact f32 (2^-127 is the
/// subnormal 0x00400000, 2^127 is normal), and x * 2^-e only shifts the
/// exponent. It can be inexact only if the product underflows below 2^-126,
/// and such a value is far below the first rounding threshold 0.25, so it
/// encodes as 0 / 8 whatever the last bits are (IEEE keeps the sign of an
/// underflowed product). It cannot overflow: every rule gives
/// amax * 2^-e < 8, and the clamp at e = -127 only shrinks the product.
template <typename Ops>
typename Ops::F32 e8m0QuantizeFactor(const Ops &ops, typename Ops::I32 byte) {
  auto b = ops.andi(byte, ops.i32(0xFF));
  auto inv = e8m0Decode(ops, ops.subi(ops.i32(254), b));
  return ops.selectf(ops.cmpi(IPred::EQ, b, ops.i32(kE8M0NaN)),
                     ops.bitcastToF32(ops.i32(kF32NaNBits)), inv);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_E8M0_H
