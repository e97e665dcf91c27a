//===- E2M1.h - FP4 E2M1 element encode/decode ------------------*- C++ -*-===//
//
// E2M1 (f4E2M1FN), numerics.md section 1. Codes 0..7 are
// +{0, 0.5, 1, 1.5, 2, 3, 4, 6}, codes 8..15 the same magnitudes negated.
// The sign bit of the input is always kept (code 8 for -0.0 and for negative
// values that round to zero). Values beyond the grid saturate to 6.
//
// NearestEven is specified as a count of exact threshold comparisons:
//   mag = (a>0.25)+(a>=0.75)+(a>1.25)+(a>=1.75)+(a>2.5)+(a>=3.5)+(a>5)
// Each threshold is a midpoint between two grid points; ">" where the tie goes
// to the lower (even) code, ">=" where it goes to the upper one. Being only
// compares on the exact f32 input, it has no intermediate rounding at all.
// Every backend computes it by e2m1NearestEvenFast (one f32 add rounds the
// step count once), proven equal on every input.
// HalfAway uses ">=" everywhere. NaN compares false everywhere and encodes as
// 0 or 8 by its sign bit (deterministic; callers flag NaN blocks separately).
//
// Stochastic: lo = largest grid point <= a, hi = the next one; round up iff
//   float(bits >> 8) * 2^-24 < (a - lo) / (hi - lo)
// where bits are 32 random bits (counterRandom). a - lo is exact (Sterbenz:
// lo <= a < hi <= 2 lo, or lo = 0) and hi - lo is a power of two, so the
// probability is exact and P(up) = ceil(p * 2^24) / 2^24. Grid points never
// move; a >= 6 saturates.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_E2M1_H
#define FP4_NUMERICS_E2M1_H

#include "fp4/Numerics/F32Bits.h"
#include "fp4/Numerics/RoundingModes.h"

#include <cstddef>

namespace mlir::fp4::numerics {

/// Largest finite E2M1 magnitude.
constexpr float kE2M1Max = 6.0f;

namespace detail {
/// The midpoints between consecutive grid points (the rounding thresholds).
inline constexpr float kE2M1Midpoints[7] = {0.25f, 0.75f, 1.25f, 1.75f,
                                            2.5f,  3.5f,  5.0f};

/// Sum of [a pred t] over thresholds t (each 0/1).
template <typename Ops, size_t N>
typename Ops::I32 countThresholds(const Ops &ops, typename Ops::F32 a,
                                  const float (&thresholds)[N],
                                  const FPred (&preds)[N]) {
  auto sum = zextBool(ops, ops.cmpf(preds[0], a, ops.f32(thresholds[0])));
  for (size_t i = 1; i < N; ++i)
    sum = ops.addi(
        sum, zextBool(ops, ops.cmpf(preds[i], a, ops.f32(thresholds[i]))));
  return sum;
}
} // namespace detail

/// Decode the magnitude code 0..7 (upper bit ignored) to a non-negative f32.
template <typename Ops>
typename Ops::F32 e2m1DecodeMagnitude(const Ops &ops, typename Ops::I32 code) {
  auto m = ops.andi(code, ops.i32(7));
  // m >= 2 is normal: exponent field (m >> 1), mantissa bit (m & 1), so the
  // f32 bits are (m << 22) + (126 << 23). m = 1 is 0.5, m = 0 is 0.
  auto normal = ops.addi(ops.shli(m, ops.i32(22)), ops.i32(126 << 23));
  auto small = ops.muli(m, ops.i32(126 << 23));
  return ops.bitcastToF32(
      ops.selecti(ops.cmpi(IPred::SLT, m, ops.i32(2)), small, normal));
}

/// Decode an E2M1 code 0..15 to f32 (code 8 is -0.0).
template <typename Ops>
typename Ops::F32 e2m1Decode(const Ops &ops, typename Ops::I32 code) {
  auto mag = ops.bitcastToI32(e2m1DecodeMagnitude(ops, code));
  auto sign = ops.shli(ops.andi(code, ops.i32(8)), ops.i32(28));
  return ops.bitcastToF32(ops.ori(mag, sign));
}

/// NearestEven's magnitude code by the threshold count above: the rule as
/// specified, and the reference the faster form below is tested against.
template <typename Ops>
typename Ops::I32 e2m1NearestEvenByThresholds(const Ops &ops,
                                              typename Ops::F32 a) {
  // ">" sends a tie down (to the even code), ">=" up.
  static constexpr FPred nearestEven[7] = {FPred::OGT, FPred::OGE, FPred::OGT,
                                           FPred::OGE, FPred::OGT, FPred::OGE,
                                           FPred::OGT};
  return detail::countThresholds(ops, a, detail::kE2M1Midpoints, nearestEven);
}

/// NearestEven's magnitude code in about half the instructions of the seven
/// compares (the quantizers' per-element cost; docs/Performance.md). The
/// grid's step is 0.5 below 2, 1 in [2, 4), 2 from 4 on: with t =
/// clamp(exponent(a), 0, 2), a * 2^(1-t) (exact: a power-of-two factor, no
/// underflow at the factor 1/2 because then a >= 4) counts steps, and adding
/// 2^23 rounds it to an integer r once, to nearest even (f32's ulp is 1 in
/// [2^23, 2^24)). The code is r + 2t (r reaches the next binade's first
/// point exactly where its code continues), saturated at 7; NaN is 0.
/// E2M1Test proves it equal to e2m1NearestEvenByThresholds on every
/// non-negative f32 bit pattern.
template <typename Ops>
typename Ops::I32 e2m1NearestEvenFast(const Ops &ops, typename Ops::F32 a) {
  auto bits = ops.bitcastToI32(a);
  auto exponent = ops.subi(ops.shrui(bits, ops.i32(23)), ops.i32(127));
  auto t = ops.selecti(ops.cmpi(IPred::SLT, exponent, ops.i32(0)), ops.i32(0),
                       ops.selecti(ops.cmpi(IPred::SGT, exponent, ops.i32(2)),
                                   ops.i32(2), exponent));
  // 2^(1 - t): biased exponent 128 - t.
  auto factor =
      ops.bitcastToF32(ops.shli(ops.subi(ops.i32(128), t), ops.i32(23)));
  auto rounded = ops.addf(ops.mulf(a, factor), ops.f32(0x1p23f));
  // rounded >= 2^23 (bits 0x4B000000), or Inf / NaN: r >= 0.
  auto code = ops.addi(ops.subi(ops.bitcastToI32(rounded), ops.i32(0x4B000000)),
                       ops.shli(t, ops.i32(1)));
  auto saturated =
      ops.selecti(ops.cmpi(IPred::SGT, code, ops.i32(7)), ops.i32(7), code);
  return ops.selecti(ops.cmpi(IPred::SGT, bits, ops.i32(0x7F800000)),
                     ops.i32(0), saturated);
}

/// Magnitude code 0..7 of a = |v| (a may be NaN: code 0).
template <typename Ops>
typename Ops::I32 e2m1EncodeMagnitude(const Ops &ops, typename Ops::F32 a,
                                      ElementRounding mode,
                                      typename Ops::I32 randomBits) {
  if (mode == ElementRounding::Stochastic) {
    static constexpr float grid[7] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    static constexpr FPred ge[7] = {FPred::OGE, FPred::OGE, FPred::OGE,
                                    FPred::OGE, FPred::OGE, FPred::OGE,
                                    FPred::OGE};
    auto loCode = detail::countThresholds(ops, a, grid, ge);
    auto lo = e2m1DecodeMagnitude(ops, loCode);
    // 1 / (hi - lo): steps are 0.5 below 2, 1 below 4, 2 below 6.
    auto invStep =
        ops.selectf(ops.cmpi(IPred::SLT, loCode, ops.i32(4)), ops.f32(2.0f),
                    ops.selectf(ops.cmpi(IPred::SLT, loCode, ops.i32(6)),
                                ops.f32(1.0f), ops.f32(0.5f)));
    auto frac = ops.mulf(ops.subf(a, lo), invStep);
    auto r = ops.mulf(ops.sitofp(ops.shrui(randomBits, ops.i32(8))),
                      ops.f32(0x1p-24f));
    auto up = ops.andb(ops.cmpf(FPred::OLT, r, frac),
                       ops.cmpi(IPred::SLT, loCode, ops.i32(7)));
    return ops.addi(loCode, zextBool(ops, up));
  }
  if (mode == ElementRounding::NearestEven)
    return e2m1NearestEvenFast(ops, a);
  // ">=" sends every tie up.
  static constexpr FPred halfAway[7] = {FPred::OGE, FPred::OGE, FPred::OGE,
                                        FPred::OGE, FPred::OGE, FPred::OGE,
                                        FPred::OGE};
  return detail::countThresholds(ops, a, detail::kE2M1Midpoints, halfAway);
}

/// Encode v to an E2M1 code 0..15 with saturation at 6 and the sign kept.
/// `randomBits` is only read for ElementRounding::Stochastic.
template <typename Ops>
typename Ops::I32 e2m1Encode(const Ops &ops, typename Ops::F32 v,
                             ElementRounding mode,
                             typename Ops::I32 randomBits) {
  auto mag = e2m1EncodeMagnitude(ops, ops.absf(v), mode, randomBits);
  return ops.ori(mag, signCodeBit(ops, v));
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_E2M1_H
