//===- BF16Pair.h - E2M1 codes and block scales as bf16x2 bits --*- C++ -*-===//
//
// The integer bit tricks that turn packed E2M1 codes and block scale bytes
// into bf16x2 registers (two bf16 values in one i32, element with the lower
// index in the low half) for bf16 tensor cores on chips without FP4
// instructions. Written once over the arithmetic backend (OpsConcept.h):
// ArithOps emits them into GPU kernels, ScalarOps checks them exhaustively
// against the scalar rules (unittests/Numerics/BF16PairTest.cpp).
//
// Code word: an i32 holding 8 consecutive codes of one row, element j in
// nibble j (bits 4j..4j+3), i.e. 4 bytes of the codes buffer read as a
// little-endian word. Pair p (0..3) of a word is the bf16x2 value whose low
// half is element p and whose high half is element p + 4:
//
//   ((w << (6 - 4p)) & 0x01C001C0) | ((w << (12 - 4p)) & 0x80008000)
//
// (a negative shift is a right shift) moves the magnitude bits E E M of each
// code to bf16 bits 8..6 (the low two exponent bits and the top mantissa
// bit) and its sign to bit 15. The bf16 value is then exactly
// e2m1(code) * 2^-126: code 1 (0.5) becomes the subnormal 2^-127, codes
// 2..7 the normal numbers 2^-126 * {1, 1.5, 2, 3, 4, 6}. Multiplying by the
// scale factors below (one IEEE bf16 multiply each) gives the dequantized
// value, exactly whenever it is representable: FP4 values have 2
// significant bits, E4M3 scales 4, bf16 8.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_BF16PAIR_H
#define FP4_NUMERICS_BF16PAIR_H

#include "fp4/Numerics/E4M3.h"
#include "fp4/Numerics/E8M0.h"

#include <cassert>
#include <cstdint>
#include <cstring>

namespace mlir::fp4::numerics {

/// bf16x2 bits of e2m1 * 2^-126 for elements `pair` and `pair` + 4 (pair in
/// 0..3) of the code word `word`.
template <typename Ops>
typename Ops::I32 e2m1PairBits(const Ops &ops, typename Ops::I32 word,
                               int pair) {
  auto shift = [&](int amount) {
    if (amount > 0)
      return ops.shli(word, ops.i32(amount));
    if (amount < 0)
      return ops.shrui(word, ops.i32(-amount));
    return word;
  };
  auto magnitude = ops.andi(shift(6 - 4 * pair), ops.i32(0x01C001C0));
  auto sign = ops.andi(shift(12 - 4 * pair),
                       ops.i32(static_cast<int32_t>(0x80008000u)));
  return ops.ori(magnitude, sign);
}

/// The bf16x2 bits with the bf16 value `value` in both halves (a C++
/// constant; `value` must be exact in bf16).
inline int32_t bf16x2SplatBits(float value) {
  uint32_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  assert((bits & 0xFFFFu) == 0 && "constant not exact in bf16");
  uint32_t half = bits >> 16;
  return static_cast<int32_t>(half | (half << 16));
}

/// Both halves set to the bf16 pattern in the low 16 bits of `bits` (upper
/// bits zero).
template <typename Ops>
typename Ops::I32 splatBF16Bits(const Ops &ops, typename Ops::I32 bits) {
  return ops.muli(bits, ops.i32(0x00010001));
}

/// The upper half of an f32 that is exact in bf16, in both halves.
template <typename Ops>
typename Ops::I32 splatBF16OfF32(const Ops &ops, typename Ops::F32 value) {
  return splatBF16Bits(ops, ops.shrui(ops.bitcastToI32(value), ops.i32(16)));
}

/// 2^(byte - 1) = 2^126 * 2^(byte - 127) in both halves, for an E8M0 byte
/// (0..255) of at most 128 (larger bytes overflow bf16: use 2^126 and
/// e8m0FactorPair as two multiplies). One multiply-add: the bf16 exponent
/// field byte + 126, mantissa 0, is (byte + 126) * 0x00800080.
template <typename Ops>
typename Ops::I32 e8m0FactorTimes2Pow126Pair(const Ops &ops,
                                             typename Ops::I32 byte) {
  return ops.addi(ops.muli(byte, ops.i32(0x00800080)),
                  ops.i32(126 * 0x00800080));
}

/// 2^(byte - 127) exactly in both halves (e8m0Decode, which is exact in
/// bf16): byte 0 is the bf16 subnormal 2^-127, byte 0xFF NaN.
template <typename Ops>
typename Ops::I32 e8m0FactorPair(const Ops &ops, typename Ops::I32 byte) {
  return splatBF16OfF32(ops, e8m0Decode(ops, byte));
}

/// 2^118 * e4m3(byte) in both halves (exact: E4M3 values have 4 significant
/// bits and 2^118 keeps subnormal scales normal). Times an E2M1 pair from
/// e2m1PairBits it gives e2m1 * e4m3 * 2^-8 exactly, for every code and
/// scale (at least 2^-18, at most 10.5). Bytes 0x7F/0xFF give NaN.
template <typename Ops>
typename Ops::I32 e4m3FactorTimes2Pow118Pair(const Ops &ops,
                                             typename Ops::I32 byte) {
  return splatBF16OfF32(ops,
                        ops.mulf(e4m3Decode(ops, byte), ops.f32(0x1p118f)));
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_BF16PAIR_H
