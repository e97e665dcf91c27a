//===- StochasticRoundingTest.cpp - Counter RNG and stochastic rounding ---===//

#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/Reference.h"
#include "fp4/Numerics/ScalarOps.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

const ScalarOps ops;

uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/// The documented hash, written with plain uint32_t arithmetic.
uint32_t documentedHash(uint32_t seed, uint64_t index) {
  uint32_t h = mix(seed ^ 0x9e3779b9u);
  h = mix(h ^ static_cast<uint32_t>(index));
  return mix(h ^ static_cast<uint32_t>(index >> 32) ^ 0x85ebca6bu);
}

TEST(CounterRandom, MatchesDocumentedHash) {
  std::mt19937_64 gen(8);
  for (int i = 0; i < 100000; ++i) {
    uint32_t seed = static_cast<uint32_t>(gen());
    uint64_t index = (i % 2) ? gen() : static_cast<uint64_t>(i);
    ASSERT_EQ(elementRandomBits(seed, static_cast<int64_t>(index)),
              documentedHash(seed, index));
  }
  // Golden values pin the hash across refactorings.
  EXPECT_EQ(elementRandomBits(0, 0), documentedHash(0, 0));
  EXPECT_NE(elementRandomBits(0, 0), elementRandomBits(1, 0));
  EXPECT_NE(elementRandomBits(0, 0), elementRandomBits(0, 1));
  EXPECT_NE(elementRandomBits(0, 1), elementRandomBits(0, int64_t(1) << 32));
}

TEST(CounterRandom, BitsLookUniform) {
  // Each of the top 24 bits is set about half the time over a run of
  // consecutive indices.
  const int n = 1 << 16;
  int ones[32] = {};
  for (int i = 0; i < n; ++i) {
    uint32_t b = elementRandomBits(42, i);
    for (int k = 0; k < 32; ++k)
      ones[k] += (b >> k) & 1;
  }
  for (int k = 0; k < 32; ++k)
    EXPECT_NEAR(ones[k] / double(n), 0.5, 5 * 0.5 / std::sqrt(double(n))) << k;
}

int32_t sr(float v, uint32_t seed, int64_t index) {
  return e2m1Encode(ops, v, ElementRounding::Stochastic,
                    static_cast<int32_t>(elementRandomBits(seed, index)));
}

TEST(StochasticRounding, Frequencies) {
  struct Case {
    float v;
    int32_t lo, hi;
    double pUp;
  } cases[] = {{0.3f, 0, 1, 0.6},    {2.25f, 4, 5, 0.25}, {5.5f, 6, 7, 0.75},
               {-1.2f, 10, 11, 0.4}, {0.01f, 0, 1, 0.02}, {3.9f, 5, 6, 0.9}};
  const int n = 200000;
  for (const Case &c : cases) {
    int up = 0;
    double mean = 0;
    for (int i = 0; i < n; ++i) {
      int32_t code = sr(c.v, 1234, i);
      ASSERT_TRUE(code == c.lo || code == c.hi) << c.v << " -> " << code;
      up += code == c.hi;
      mean += e2m1Decode(ops, code);
    }
    double sigma = std::sqrt(c.pUp * (1 - c.pUp) / n);
    EXPECT_NEAR(up / double(n), c.pUp, 5 * sigma) << c.v;
    // Unbiased: E[Q(v)] = v.
    double step = e2m1Decode(ops, c.hi) - e2m1Decode(ops, c.lo);
    EXPECT_NEAR(mean / n, c.v, 5 * sigma * std::fabs(step)) << c.v;
  }
}

TEST(StochasticRounding, GridPointsAndSaturationNeverMove) {
  for (int i = 0; i < 10000; ++i) {
    EXPECT_EQ(sr(1.5f, 9, i), 3);
    EXPECT_EQ(sr(-4.0f, 9, i), 14);
    EXPECT_EQ(sr(7.0f, 9, i), 7);
    EXPECT_EQ(sr(0.0f, 9, i), 0);
    EXPECT_EQ(sr(-0.0f, 9, i), 8);
  }
}

TEST(StochasticRounding, ExtremeRandomBits) {
  // bits >> 8 = 0: r = 0 < p for any p > 0 -> always up; all ones: r =
  // 1 - 2^-24, up only if p > 1 - 2^-24.
  EXPECT_EQ(e2m1Encode(ops, 1.0f + 0x1p-20f, ElementRounding::Stochastic, 0),
            3);
  EXPECT_EQ(e2m1Encode(ops, 1.5f - 0x1p-20f, ElementRounding::Stochastic, -1),
            2);
  EXPECT_EQ(e2m1Encode(ops, 1.5f - 0x1p-23f, ElementRounding::Stochastic, -1),
            2);
  EXPECT_EQ(e2m1Encode(ops, 1.5f - 0x1p-23f, ElementRounding::Stochastic,
                       static_cast<int32_t>(0xFFFFFB00u)),
            3); // r = 1 - 5 * 2^-24 < p = 1 - 4 * 2^-24
}

TEST(StochasticRounding, UpIffRandomBelowFraction) {
  // v = 1.25 has fraction 1/2 between 1 and 1.5: r = 1/2 exactly must round
  // down (up iff r < p), r = 1/2 - 2^-24 up.
  EXPECT_EQ(e2m1Encode(ops, 1.25f, ElementRounding::Stochastic,
                       static_cast<int32_t>(0x80000000u)),
            2);
  EXPECT_EQ(e2m1Encode(ops, 1.25f, ElementRounding::Stochastic,
                       static_cast<int32_t>(0x7FFFFF00u)),
            3);
  // The low 8 bits are not used.
  EXPECT_EQ(e2m1Encode(ops, 1.25f, ElementRounding::Stochastic,
                       static_cast<int32_t>(0x800000FFu)),
            2);
  EXPECT_EQ(e2m1Encode(ops, -5.5f, ElementRounding::Stochastic,
                       static_cast<int32_t>(0xBFFFFF00u)),
            15); // p = 3/4, r = 3/4 - 2^-24
  EXPECT_EQ(e2m1Encode(ops, -5.5f, ElementRounding::Stochastic,
                       static_cast<int32_t>(0xC0000000u)),
            14);
}

TEST(StochasticRounding, RowsDependOnlyOnSeedAndIndex) {
  MXFP4Params p;
  p.rounding = ElementRounding::Stochastic;
  p.seed = 5;
  std::mt19937 gen(1);
  std::normal_distribution<float> nd;
  std::vector<float> x(128);
  for (float &v : x)
    v = nd(gen);
  std::vector<uint8_t> codesA(64), scalesA(4), codesB(16), scaleB(1);
  quantizeMXFP4Row(p, x.data(), 128, codesA.data(), scalesA.data(), 1000, 1);
  // The third block alone, with its logical index base.
  quantizeMXFP4Row(p, x.data() + 64, 32, codesB.data(), scaleB.data(),
                   1000 + 64, 1);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(codesA[32 + i], codesB[i]);
  // Same call twice: same bytes; another seed: different bytes.
  std::vector<uint8_t> codesC(64), scalesC(4);
  quantizeMXFP4Row(p, x.data(), 128, codesC.data(), scalesC.data(), 1000, 1);
  EXPECT_EQ(codesA, codesC);
  p.seed = 6;
  quantizeMXFP4Row(p, x.data(), 128, codesC.data(), scalesC.data(), 1000, 1);
  EXPECT_NE(codesA, codesC);
}

} // namespace
