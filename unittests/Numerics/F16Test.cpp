//===- F16Test.cpp - f16 rules against the compiler's _Float16 ------------===//
//
// The constant folder applies arith.truncf f32 -> f16 and reads f16
// constants with these rules; the compiler's IEEE half conversions are the
// oracle (every f16 bit pattern, and a stride over all f32 patterns plus the
// rounding boundaries).
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/ScalarOps.h"

#include "FloatBits.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mlir::fp4::numerics;

namespace {

using fp4test::bitsOf;
using fp4test::fromBits;

const ScalarOps ops;

uint16_t halfBits(_Float16 h) {
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

TEST(F16, DecodeEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    uint16_t hh = static_cast<uint16_t>(h);
    _Float16 v;
    std::memcpy(&v, &hh, 2);
    float expected = static_cast<float>(v);
    float got = f16Decode(ops, static_cast<int32_t>(h));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
      EXPECT_EQ(std::signbit(got), std::signbit(expected)) << std::hex << h;
      continue;
    }
    EXPECT_EQ(bitsOf(got), bitsOf(expected)) << std::hex << h;
    // Storage bits round-trip for every non-NaN pattern.
    EXPECT_EQ(f16StorageBits(ops, got), static_cast<int32_t>(h))
        << std::hex << h;
  }
}

/// roundToF16(x) and its storage bits equal the compiler's conversion.
void expectRoundsLikeCompiler(uint32_t u) {
  float x = fromBits(u);
  _Float16 h = static_cast<_Float16>(x);
  float got = roundToF16(ops, x);
  if (std::isnan(x)) {
    EXPECT_TRUE(std::isnan(got)) << std::hex << u;
    EXPECT_EQ(std::signbit(got), std::signbit(x)) << std::hex << u;
    return;
  }
  EXPECT_EQ(bitsOf(got), bitsOf(static_cast<float>(h))) << std::hex << u;
  EXPECT_EQ(f16StorageBits(ops, got), halfBits(h)) << std::hex << u;
}

TEST(F16, RoundStrideOverAllFloats) {
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 997)
    expectRoundsLikeCompiler(static_cast<uint32_t>(u));
}

TEST(F16, RoundBoundaries) {
  // Ties and their neighbours at every f16 exponent (normal ties sit on bit
  // 12, subnormal ties below 2^-14), the overflow threshold 65520, and the
  // smallest subnormal's half.
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t e = 100; e <= 143; ++e) {
      for (uint32_t m :
           {0x000000u, 0x000FFFu, 0x001000u, 0x001001u, 0x002FFFu, 0x003000u,
            0x003001u, 0x7FEFFFu, 0x7FF000u, 0x7FFFFFu}) {
        expectRoundsLikeCompiler(sign | (e << 23) | m);
        for (int32_t d = -2; d <= 2; ++d)
          expectRoundsLikeCompiler(sign | ((e << 23) + m + d));
      }
    }
    expectRoundsLikeCompiler(sign | bitsOf(65520.0f));
    expectRoundsLikeCompiler(sign | (bitsOf(65520.0f) - 1));
    expectRoundsLikeCompiler(sign | bitsOf(0x1p-25f));
    expectRoundsLikeCompiler(sign | (bitsOf(0x1p-25f) + 1));
    expectRoundsLikeCompiler(sign | 0x7F800000u);
    expectRoundsLikeCompiler(sign | 0x7FC00001u);
  }
}

} // namespace
