//===- MacroBlockTest.cpp - Macro-block factor and search -----------------===//

#include "fp4/Numerics/MacroBlock.h"
#include "fp4/Numerics/Reference.h"
#include "fp4/Numerics/ScalarOps.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

const ScalarOps ops;
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(MacroBlock, DefaultFactor) {
  EXPECT_EQ(macroFactorFromAmax(ops, 9.0f), 1.5f); // 9/6 = 1.5
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f), 1.0f);
  EXPECT_EQ(macroFactorFromAmax(ops, 0.75f), 1.0f);  // 0.125
  EXPECT_EQ(macroFactorFromAmax(ops, 10.5f), 1.75f); // 1.75
  EXPECT_EQ(macroFactorFromAmax(ops, 0.0f), 1.0f);
  EXPECT_EQ(macroFactorFromAmax(ops, kNaN), 1.0f);
  EXPECT_EQ(macroFactorFromAmax(ops, kInf), 1.0f);
  // Significand rounds to bf16 2.0 -> factor 1.0.
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f * 1.998f), 1.0f);
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f * 1.99609375f), 1.0f); // tie -> 2
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f * 1.9921875f), 1.9921875f);
  // bf16 rounding of the significand: 1 + 2^-8 ties to 1.
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f * (1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f * (1.0f + 0x1.8p-7f)), 1.015625f);
  // Subnormal amax / 6: 1.25 * 2^-130 is exact in f32 subnormals.
  EXPECT_EQ(macroFactorFromAmax(ops, 6.0f * std::ldexp(1.25f, -130)), 1.25f);
}

TEST(MacroBlock, SearchCandidates) {
  for (int j = 0; j < 8; ++j)
    EXPECT_EQ(macroSearchFactor(ops, j, 8), 1.0f + j / 8.0f);
  // 1 + 1/3 rounded to bf16.
  EXPECT_EQ(macroSearchFactor(ops, 1, 3), 1.3359375f);
}

TEST(MacroBlock, DefaultRowUsesScaledBlocks) {
  MacroParams p;
  p.macroBlock = 64;
  std::vector<float> x(128);
  std::mt19937 gen(2);
  std::normal_distribution<float> nd;
  for (float &v : x)
    v = nd(gen);
  x[70] = 9.0f; // second macro-block: m = 1.5
  std::vector<uint8_t> codes(64), scales(4);
  std::vector<uint16_t> factors(2);
  quantizeMacroRow(p, x.data(), 128, codes.data(), scales.data(),
                   factors.data());
  EXPECT_EQ(factors[1], 0x3FC0); // bf16(1.5)
  // The block holding 9 sees y = 6: floor e = 0 and the element is exact.
  EXPECT_EQ(scales[2], 127);
  std::vector<float> out(128);
  dequantizeMacroRow(p, codes.data(), scales.data(), factors.data(), 128,
                     out.data());
  EXPECT_EQ(out[70], 9.0f);
  // Independent recomputation of every element.
  for (int mb = 0; mb < 2; ++mb) {
    float m = bf16Decode(ops, factors[mb]);
    float amax = 0;
    for (int i = 0; i < 64; ++i)
      amax = std::max(amax, std::fabs(x[mb * 64 + i]));
    EXPECT_EQ(m, macroFactorFromAmax(ops, amax));
    for (int b = 0; b < 2; ++b) {
      float ya = 0;
      for (int i = 0; i < 32; ++i)
        ya = std::max(ya, std::fabs(x[mb * 64 + b * 32 + i] / m));
      int32_t byte = mxScaleByte(ops, ya, ScaleRounding::Floor);
      EXPECT_EQ(scales[mb * 2 + b], byte);
      for (int i = 0; i < 32; ++i) {
        int j = mb * 64 + b * 32 + i;
        int32_t c = e2m1Encode(ops, (x[j] / m) * std::ldexp(1.0f, 127 - byte),
                               ElementRounding::NearestEven, 0);
        EXPECT_EQ(out[j],
                  (e2m1Decode(ops, c) * std::ldexp(1.0f, byte - 127)) * m);
      }
    }
  }
}

TEST(MacroBlock, WholeRowAndZeroAndNaN) {
  MacroParams p;
  p.macroBlock = 0;
  std::vector<float> x(96, 0.0f);
  std::vector<uint8_t> codes(48), scales(3);
  uint16_t factor = 0;
  quantizeMacroRow(p, x.data(), 96, codes.data(), scales.data(), &factor);
  EXPECT_EQ(factor, 0x3F80);
  EXPECT_EQ(scales[0], 0);
  x[50] = kNaN;
  x[0] = 100.0f;
  quantizeMacroRow(p, x.data(), 96, codes.data(), scales.data(), &factor);
  EXPECT_EQ(factor, 0x3F80);
  EXPECT_EQ(scales[1], 0xFF);
  p.search = 8;
  quantizeMacroRow(p, x.data(), 96, codes.data(), scales.data(), &factor);
  EXPECT_EQ(factor, 0x3F80); // NaN errors never win: j = 0
}

TEST(MacroBlock, SearchPicksLowestErrorSmallestJ) {
  MacroParams p;
  p.search = 8;
  std::mt19937 gen(4);
  std::normal_distribution<float> nd;
  int nonTrivial = 0;
  for (int t = 0; t < 200; ++t) {
    std::vector<float> x(256);
    for (float &v : x)
      v = nd(gen);
    std::vector<uint8_t> codes(128), scales(8);
    uint16_t factor;
    quantizeMacroRow(p, x.data(), 256, codes.data(), scales.data(), &factor);
    // Errors of every candidate through the default path with a fixed m.
    double best = 0;
    int bestJ = -1;
    for (int j = 0; j < 8; ++j) {
      float m = macroSearchFactor(ops, j, 8);
      std::vector<uint8_t> c(128), s(8);
      double sse = 0;
      for (int b = 0; b < 8; ++b) {
        float ya = 0;
        for (int i = 0; i < 32; ++i)
          ya = std::max(ya, std::fabs(x[b * 32 + i] / m));
        int32_t byte = mxScaleByte(ops, ya, ScaleRounding::Floor);
        for (int i = 0; i < 32; ++i) {
          float y = x[b * 32 + i] / m;
          int32_t code = e2m1Encode(ops, y * e8m0QuantizeFactor(ops, byte),
                                    ElementRounding::NearestEven, 0);
          float deq = (e2m1Decode(ops, code) * e8m0Decode(ops, byte)) * m;
          double d = static_cast<double>(x[b * 32 + i]) - deq;
          sse += d * d;
        }
      }
      if (bestJ < 0 || sse < best) {
        best = sse;
        bestJ = j;
      }
    }
    EXPECT_EQ(bf16Decode(ops, factor), macroSearchFactor(ops, bestJ, 8));
    nonTrivial += bestJ != 0;
  }
  EXPECT_GT(nonTrivial, 50);
  // All-zero: every candidate has error 0, the smallest j (m = 1) wins.
  std::vector<float> z(256, 0.0f);
  std::vector<uint8_t> codes(128), scales(8);
  uint16_t factor;
  quantizeMacroRow(p, z.data(), 256, codes.data(), scales.data(), &factor);
  EXPECT_EQ(factor, 0x3F80);
}

} // namespace
