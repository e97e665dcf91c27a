//===- ScaleRulesTest.cpp - E8M0 / MX scale, E4M3 and bf16 rules ----------===//

#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/E4M3.h"
#include "fp4/Numerics/MXFP4.h"
#include "fp4/Numerics/Reference.h"
#include "fp4/Numerics/ScalarOps.h"

#include "FloatBits.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

using fp4test::bitsOf;

const ScalarOps ops;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMax = std::numeric_limits<float>::max();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

int32_t byteOf(float amax, ScaleRounding r) {
  return mxScaleByte(ops, amax, r);
}

/// Shared exponent from the definitions in numerics.md 2, computed in double
/// with frexp / ldexp (independent of the bit-pattern implementation).
int32_t expectedByte(float amaxF, ScaleRounding rule) {
  double amax = amaxF;
  if (amax == 0)
    return 0;
  int ex;
  double m = std::frexp(amax, &ex); // amax = m * 2^ex, m in [0.5, 1)
  int fl = ex - 1;                  // floor(log2 amax)
  int e = 0;
  switch (rule) {
  case ScaleRounding::Floor:
    e = fl - 2;
    break;
  case ScaleRounding::Ceil:
    e = (m == 0.5 ? fl : fl + 1) - 2;
    break;
  case ScaleRounding::Even:
    // amax rounded to one mantissa bit, ties up: 1.75 * 2^fl rounds to 2^(fl+1)
    e = (m * 2 >= 1.75 ? fl + 1 : fl) - 2;
    break;
  case ScaleRounding::RCeil:
    e = fl - 4;
    while (6.0 * std::ldexp(1.0, e) < amax)
      ++e;
    break;
  }
  e = std::max(-127, std::min(127, e));
  return e + 127;
}

const ScaleRounding kRules[4] = {ScaleRounding::Floor, ScaleRounding::Ceil,
                                 ScaleRounding::Even, ScaleRounding::RCeil};

TEST(E8M0, Decode) {
  EXPECT_EQ(bitsOf(e8m0Decode(ops, 0)), 0x00400000u); // 2^-127, subnormal
  EXPECT_EQ(e8m0Decode(ops, 0), std::ldexp(1.0f, -127));
  EXPECT_EQ(e8m0Decode(ops, 1), std::ldexp(1.0f, -126));
  EXPECT_EQ(e8m0Decode(ops, 127), 1.0f);
  EXPECT_EQ(e8m0Decode(ops, 254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(e8m0Decode(ops, 255)));
  EXPECT_TRUE(std::isnan(e8m0QuantizeFactor(ops, 255)));
  for (int32_t b = 0; b < 255; ++b) {
    EXPECT_EQ(e8m0Decode(ops, b), std::ldexp(1.0f, b - 127)) << b;
    EXPECT_EQ(e8m0QuantizeFactor(ops, b), std::ldexp(1.0f, 127 - b)) << b;
  }
}

TEST(E8M0, SpecialAmax) {
  for (ScaleRounding r : kRules) {
    EXPECT_EQ(byteOf(0.0f, r), 0);
    EXPECT_EQ(byteOf(-0.0f, r), 0);
    EXPECT_EQ(byteOf(kInf, r), 0xFF);
    EXPECT_EQ(byteOf(kNaN, r), 0xFF);
    EXPECT_EQ(byteOf(-kNaN, r), 0xFF);
    // Subnormal amax always clamps to e = -127.
    for (float s : {1e-45f, 1e-40f, std::ldexp(1.0f, -127),
                    std::nextafter(std::ldexp(1.0f, -126), 0.0f)})
      EXPECT_EQ(byteOf(s, r), 0) << s;
  }
}

TEST(E8M0, PowersOfTwoAndRuleBoundaries) {
  // Exact powers of two: floor = ceil = even = log2 - 2.
  for (int k = -124; k <= 127; ++k) {
    float a = std::ldexp(1.0f, k);
    EXPECT_EQ(byteOf(a, ScaleRounding::Floor), k - 2 + 127) << k;
    EXPECT_EQ(byteOf(a, ScaleRounding::Ceil), k - 2 + 127) << k;
    EXPECT_EQ(byteOf(a, ScaleRounding::Even), k - 2 + 127) << k;
    // amax/6 = 2^k/6 in (2^(k-3), 2^(k-2)) -> ceil = k-2.
    EXPECT_EQ(byteOf(a, ScaleRounding::RCeil), k - 2 + 127) << k;
    // Just above: ceil goes up, floor does not.
    float up = std::nextafter(a, kInf);
    EXPECT_EQ(byteOf(up, ScaleRounding::Floor), k - 2 + 127) << k;
    if (k < 127) {
      EXPECT_EQ(byteOf(up, ScaleRounding::Ceil), k - 1 + 127) << k;
    }
  }
  // Even: amax / 2^floor = 1.75 is the boundary (ties up).
  for (int k = -120; k <= 120; k += 7) {
    float t = std::ldexp(1.75f, k);
    EXPECT_EQ(byteOf(t, ScaleRounding::Even), k - 1 + 127) << k;
    EXPECT_EQ(byteOf(std::nextafter(t, 0.0f), ScaleRounding::Even), k - 2 + 127)
        << k;
    // RCeil: 1.5 * 2^k / 6 = 2^(k-2) exactly.
    float r = std::ldexp(1.5f, k);
    EXPECT_EQ(byteOf(r, ScaleRounding::RCeil), k - 2 + 127) << k;
    EXPECT_EQ(byteOf(std::nextafter(r, kInf), ScaleRounding::RCeil),
              k - 1 + 127)
        << k;
  }
  EXPECT_EQ(byteOf(6.0f, ScaleRounding::Floor), 127);
  EXPECT_EQ(byteOf(6.0f, ScaleRounding::Ceil), 128);
  EXPECT_EQ(byteOf(6.0f, ScaleRounding::Even), 127);
  EXPECT_EQ(byteOf(6.0f, ScaleRounding::RCeil), 127);
  EXPECT_EQ(byteOf(kMax, ScaleRounding::Floor), 252);
  EXPECT_EQ(byteOf(kMax, ScaleRounding::Ceil), 253);
  EXPECT_EQ(byteOf(kMax, ScaleRounding::Even), 253);
  EXPECT_EQ(byteOf(kMax, ScaleRounding::RCeil), 253);
}

TEST(E8M0, RandomAgainstDefinition) {
  std::mt19937 gen(99);
  std::uniform_int_distribution<uint32_t> bits(0, 0x7F7FFFFF);
  for (int i = 0; i < 300000; ++i) {
    uint32_t b = bits(gen);
    float a;
    std::memcpy(&a, &b, 4);
    for (ScaleRounding r : kRules)
      ASSERT_EQ(byteOf(a, r), expectedByte(a, r))
          << a << " rule " << static_cast<int>(r);
  }
}

TEST(MXFP4, FloorClipsAboveSix) {
  // amax = 7.5: floor gives X = 1, so values in (6, 8) clip to 6.
  float x[32] = {7.5f, 6.5f, -7.0f, 5.0f, 0.25f, -0.2f};
  uint8_t codes[16], scale;
  quantizeMXFP4Row(MXFP4Params{}, x, 32, codes, &scale);
  EXPECT_EQ(scale, 127);
  EXPECT_EQ(codes[0], 0x77); // 7.5, 6.5 -> 6
  EXPECT_EQ(codes[1], 0x6F); // -7 -> -6 (15), 5 -> 4 (6)
  EXPECT_EQ(codes[2], 0x80); // 0.25 -> 0, -0.2 -> -0 (8)
  for (int i = 3; i < 16; ++i)
    EXPECT_EQ(codes[i], 0);
}

TEST(MXFP4, AllZeroAndNaNBlocks) {
  float x[64] = {};
  x[1] = -0.0f;
  x[33] = kNaN;
  x[40] = 1.0f;
  uint8_t codes[32], scales[2];
  quantizeMXFP4Row(MXFP4Params{}, x, 64, codes, scales);
  EXPECT_EQ(scales[0], 0);
  EXPECT_EQ(codes[0], 0x80);
  EXPECT_EQ(scales[1], 0xFF);
  float out[64];
  dequantizeMXFP4Row(MXFP4Params{}, codes, scales, 64, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_TRUE(std::signbit(out[1]));
  for (int i = 32; i < 64; ++i)
    EXPECT_TRUE(std::isnan(out[i]));
  x[33] = -kInf;
  quantizeMXFP4Row(MXFP4Params{}, x, 64, codes, scales);
  EXPECT_EQ(scales[1], 0xFF);
}

TEST(MXFP4, ExtremeScales) {
  // e = -127 (byte 0): quantize by 2^127, dequantize through the subnormal
  // 2^-127 exactly.
  float x[32] = {std::ldexp(1.0f, -126), std::ldexp(1.5f, -127),
                 -std::ldexp(1.0f, -128), std::ldexp(1.0f, -140)};
  uint8_t codes[16], scale;
  quantizeMXFP4Row(MXFP4Params{}, x, 32, codes, &scale);
  EXPECT_EQ(scale, 0);
  float out[32];
  dequantizeMXFP4Row(MXFP4Params{}, codes, &scale, 32, out);
  EXPECT_EQ(out[0], x[0]);
  EXPECT_EQ(out[1], x[1]);
  EXPECT_EQ(out[2], x[2]);
  EXPECT_EQ(out[3], 0.0f);
  // Huge values: floor keeps 6 * 2^125 finite.
  float y[32] = {kMax, -kMax / 3};
  quantizeMXFP4Row(MXFP4Params{}, y, 32, codes, &scale);
  EXPECT_EQ(scale, 252);
  dequantizeMXFP4Row(MXFP4Params{}, codes, &scale, 32, out);
  EXPECT_EQ(out[0], std::ldexp(1.5f, 127));
  EXPECT_EQ(out[1], -std::ldexp(1.5f, 126)); // -2.67 * 2^125 -> -3 * 2^125
}

TEST(E4M3, DecodeEncodeRoundTrip) {
  for (int32_t b = 0; b < 0x7F; ++b) {
    float v = e4m3Decode(ops, b);
    EXPECT_EQ(e4m3EncodeNonNegative(ops, v), b) << b;
    EXPECT_EQ(e4m3Decode(ops, b | 0x80), -v) << b;
  }
  EXPECT_TRUE(std::isnan(e4m3Decode(ops, 0x7F)));
  EXPECT_TRUE(std::isnan(e4m3Decode(ops, 0xFF)));
  EXPECT_EQ(e4m3Decode(ops, 0x7E), 448.0f);
  EXPECT_EQ(e4m3Decode(ops, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3Decode(ops, 0x07), std::ldexp(7.0f, -9));
  EXPECT_EQ(e4m3Decode(ops, 0x08), std::ldexp(1.0f, -6));
}

TEST(E4M3, Subnormals) {
  EXPECT_EQ(e4m3EncodeNonNegative(ops, 0.0f), 0);
  EXPECT_EQ(e4m3EncodeNonNegative(ops, std::ldexp(1.0f, -10)), 0); // tie->even
  EXPECT_EQ(
      e4m3EncodeNonNegative(ops, std::nextafter(std::ldexp(1.0f, -10), 1.0f)),
      1);
  EXPECT_EQ(e4m3EncodeNonNegative(ops, std::ldexp(3.0f, -10)), 2);  // tie
  EXPECT_EQ(e4m3EncodeNonNegative(ops, std::ldexp(5.0f, -10)), 2);  // tie
  EXPECT_EQ(e4m3EncodeNonNegative(ops, std::ldexp(15.0f, -10)), 8); // tie->2^-6
  EXPECT_EQ(e4m3EncodeNonNegative(ops, 1e-30f), 0);
  EXPECT_EQ(e4m3EncodeNonNegative(ops, 1e-45f), 0);
  EXPECT_EQ(e4m3EncodeNonNegative(ops, 448.0f), 0x7E);
  EXPECT_EQ(e4m3EncodeNonNegative(ops, 432.0f), 0x7E); // tie 416|448 -> even
  EXPECT_EQ(e4m3EncodeNonNegative(ops, 400.0f), 0x7C); // tie 384|416 -> even
}

TEST(E4M3, RandomAgainstNearestEven) {
  std::vector<double> grid;
  for (int32_t b = 0; b < 0x7F; ++b)
    grid.push_back(e4m3Decode(ops, b));
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> logu(-12.0, std::log2(448.0));
  for (int i = 0; i < 200000; ++i) {
    float v = static_cast<float>(std::exp2(logu(gen)));
    if (i % 5 == 0) {
      size_t k = gen() % (grid.size() - 1);
      v = static_cast<float>((grid[k] + grid[k + 1]) / 2); // exact tie
    }
    int32_t best = 0;
    for (int32_t b = 1; b < 0x7F; ++b) {
      double db = std::fabs(v - grid[best]), dc = std::fabs(v - grid[b]);
      if (dc < db || (dc == db && b % 2 == 0))
        best = b;
    }
    ASSERT_EQ(e4m3EncodeNonNegative(ops, v), best) << v;
  }
}

TEST(BF16, RoundingAndSpecials) {
  auto r = [](float v) { return bitsOf(roundToBF16(ops, v)); };
  EXPECT_EQ(r(1.0f / 7.0f), 0x3E120000u);
  float tieEven, tieOdd;
  uint32_t te = 0x3F808000u, to = 0x3F818000u;
  std::memcpy(&tieEven, &te, 4);
  std::memcpy(&tieOdd, &to, 4);
  EXPECT_EQ(r(tieEven), 0x3F800000u);
  EXPECT_EQ(r(tieOdd), 0x3F820000u);
  EXPECT_EQ(r(-tieOdd), 0xBF820000u);
  EXPECT_EQ(r(kInf), 0x7F800000u);
  EXPECT_EQ(r(kMax), 0x7F800000u); // overflows to Inf, as IEEE rounding does
  EXPECT_TRUE(std::isnan(roundToBF16(ops, kNaN)));
  uint32_t sigNaN = 0x7F800001u; // payload only in the low bits
  float sn;
  std::memcpy(&sn, &sigNaN, 4);
  EXPECT_TRUE(std::isnan(roundToBF16(ops, sn)));
  EXPECT_EQ(r(-0.0f), 0x80000000u);
}

} // namespace
