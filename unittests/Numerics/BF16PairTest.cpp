//===- BF16PairTest.cpp - bf16x2 bit tricks against the scalar rules ------===//
//
// The GPU kernels on chips without FP4 instructions dequantize with the
// bit tricks of BF16Pair.h and bf16 multiplies. Here every pair of codes
// (16 x 16, at each of the 4 pair positions of a code word, the other
// nibbles filled with other codes) and every scale byte (0..255) go through
// those tricks and an IEEE bf16 multiply (the f32 product of two bf16 values
// is exact, then rounded to bf16 by roundToBF16), and the result must be
// bit for bit the scalar rule: mxfp4Dequant for E8M0 scales (both the
// two-multiply form and, for bytes up to 128, the one-multiply form) and
// nvfp4Dequant with a decode scale of 2^-8 for E4M3 scales.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/BF16Pair.h"
#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/MXFP4.h"
#include "fp4/Numerics/NVFP4.h"
#include "fp4/Numerics/ScalarOps.h"

#include "FloatBits.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace mlir::fp4::numerics;

namespace {

using fp4test::bitsOf;
using fp4test::fromBits;

const ScalarOps ops;

/// Half `h` (0: low, 1: high) of a bf16x2 value, as the f32 it denotes.
float half(int32_t pair, int h) {
  return fromBits((static_cast<uint32_t>(pair) >> (16 * h)) << 16);
}

/// One IEEE bf16 multiply (mul.rn.bf16x2 lane), as an f32.
float mulBF16(float a, float b) { return roundToBF16(ops, a * b); }

/// The value an fp4 kernel must produce: equal bits, or both NaN.
void expectSame(float got, float want, const char *what, int lo, int hi,
                int pos, int byte) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " codes " << lo << "," << hi
                                 << " pair " << pos << " byte " << byte;
    return;
  }
  EXPECT_EQ(bitsOf(got), bitsOf(want))
      << what << " codes " << lo << "," << hi << " pair " << pos << " byte "
      << byte << ": " << got << " vs " << want;
}

/// A code word with `lo` in nibble `pos`, `hi` in nibble `pos` + 4 and
/// other codes elsewhere (they must not leak into the pair).
int32_t codeWord(int lo, int hi, int pos) {
  uint32_t word = 0;
  for (int j = 0; j < 8; ++j)
    word |= static_cast<uint32_t>((j * 5 + 3) & 15) << (4 * j);
  word &= ~((0xFu << (4 * pos)) | (0xFu << (4 * (pos + 4))));
  word |= (static_cast<uint32_t>(lo) << (4 * pos)) |
          (static_cast<uint32_t>(hi) << (4 * (pos + 4)));
  return static_cast<int32_t>(word);
}

TEST(BF16PairTest, CodePairsAreE2M1Times2PowMinus126) {
  for (int pos = 0; pos < 4; ++pos)
    for (int lo = 0; lo < 16; ++lo)
      for (int hi = 0; hi < 16; ++hi) {
        int32_t pair = e2m1PairBits(ops, codeWord(lo, hi, pos), pos);
        int codes[2] = {lo, hi};
        for (int h = 0; h < 2; ++h) {
          float want = e2m1Decode(ops, codes[h]) * 0x1p-126f;
          EXPECT_EQ(bitsOf(half(pair, h)), bitsOf(want))
              << "code " << codes[h] << " pair " << pos << " half " << h;
        }
      }
}

TEST(BF16PairTest, ScaleFactorsAreSplats) {
  for (int byte = 0; byte < 256; ++byte) {
    for (int32_t f : {e8m0FactorPair(ops, byte),
                      e4m3FactorTimes2Pow118Pair(ops, byte)})
      EXPECT_EQ(static_cast<uint32_t>(f) >> 16,
                static_cast<uint32_t>(f) & 0xFFFFu)
          << "byte " << byte;
    if (byte <= 128) {
      int32_t f = e8m0FactorTimes2Pow126Pair(ops, byte);
      EXPECT_EQ(static_cast<uint32_t>(f) >> 16,
                static_cast<uint32_t>(f) & 0xFFFFu)
          << "byte " << byte;
    }
  }
  EXPECT_EQ(half(bf16x2SplatBits(0x1p126f), 0), 0x1p126f);
  EXPECT_EQ(half(bf16x2SplatBits(0x1p126f), 1), 0x1p126f);
}

/// Runs `check(pairValue, code, byte)` over all code pairs at all positions
/// and all scale bytes.
template <typename Check>
void forAllPairsAndBytes(Check check) {
  for (int pos = 0; pos < 4; ++pos)
    for (int lo = 0; lo < 16; ++lo)
      for (int hi = 0; hi < 16; ++hi) {
        int32_t pair = e2m1PairBits(ops, codeWord(lo, hi, pos), pos);
        int codes[2] = {lo, hi};
        for (int byte = 0; byte < 256; ++byte)
          for (int h = 0; h < 2; ++h)
            check(half(pair, h), codes[h], byte, lo, hi, pos);
      }
}

TEST(BF16PairTest, E8M0TwoMultipliesMatchMXFP4Dequant) {
  float restore = half(bf16x2SplatBits(0x1p126f), 0);
  forAllPairsAndBytes([&](float v, int code, int byte, int lo, int hi,
                          int pos) {
    float factor = half(e8m0FactorPair(ops, byte), 0);
    float got = mulBF16(mulBF16(v, restore), factor);
    expectSame(got, mxfp4Dequant(ops, code, byte), "e8m0", lo, hi, pos, byte);
  });
}

TEST(BF16PairTest, E8M0OneMultiplyMatchesMXFP4DequantUpTo128) {
  forAllPairsAndBytes([&](float v, int code, int byte, int lo, int hi,
                          int pos) {
    if (byte > 128)
      return;
    float factor = half(e8m0FactorTimes2Pow126Pair(ops, byte), 1);
    expectSame(mulBF16(v, factor), mxfp4Dequant(ops, code, byte), "e8m0 fast",
               lo, hi, pos, byte);
  });
}

TEST(BF16PairTest, E4M3MultiplyMatchesNVFP4DequantTimes2PowMinus8) {
  forAllPairsAndBytes([&](float v, int code, int byte, int lo, int hi,
                          int pos) {
    float factor = half(e4m3FactorTimes2Pow118Pair(ops, byte), 1);
    expectSame(mulBF16(v, factor), nvfp4Dequant(ops, code, byte, 0x1p-8f),
               "e4m3", lo, hi, pos, byte);
  });
}

} // namespace
