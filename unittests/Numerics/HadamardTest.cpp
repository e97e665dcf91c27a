//===- HadamardTest.cpp - Block Hadamard rotations ------------------------===//
//
// Hadamard.h against an independent computation: explicit Sylvester matrices
// in double precision, a separate implementation of the documented sign
// generator, and correctly rounded 1/sqrt(d).
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/ScalarOps.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

/// Sylvester H_d entry (i, j) = (-1)^popcount(i & j).
double sylvester(int64_t i, int64_t j) {
  return __builtin_popcountll(static_cast<uint64_t>(i & j)) % 2 ? -1.0 : 1.0;
}

/// Independent of CounterRandom.h: Wellons' lowbias32 and the key schedule
/// written out on uint32_t.
uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
bool independentSignNegative(uint32_t seed, uint32_t i) {
  uint32_t h = lowbias32(seed ^ 0x9e3779b9u);
  h = lowbias32(h ^ i);
  h = lowbias32(h ^ 0x48414441u ^ 0x85ebca6bu);
  return h >> 31;
}

/// y = x R (or x R^T) for one row, in double, from the matrix definition
/// R = I (x) D Hn_d (x) I_s.
std::vector<double> denseRotate(const std::vector<float> &x,
                                const HadamardParams &p) {
  int64_t n = x.size(), d = p.size, s = p.stride;
  std::vector<double> y(n, 0.0);
  double norm = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t g = 0; g < n; g += d * s)
    for (int64_t t = 0; t < s; ++t)
      for (int64_t j = 0; j < d; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < d; ++i) {
          // Forward: R[i][j] = D[i] H[i][j]; inverse: R^T[i][j] = H[i][j] D[j].
          double sign = 1.0;
          if (p.randomized)
            sign =
                independentSignNegative(p.seed, p.inverse ? j : i) ? -1.0 : 1.0;
          acc += static_cast<double>(x[g + i * s + t]) * sign * sylvester(i, j);
        }
        y[g + j * s + t] = acc * norm;
      }
  return y;
}

TEST(Hadamard, NormalizerIsCorrectlyRounded) {
  for (int l = 0; l <= 20; ++l) {
    int64_t d = int64_t(1) << l;
    float want =
        static_cast<float>(1.0L / std::sqrt(static_cast<long double>(d)));
    EXPECT_EQ(hadamardNormalizer(d), want) << "d = " << d;
  }
  uint32_t bits;
  float c32 = hadamardNormalizer(32);
  std::memcpy(&bits, &c32, 4);
  EXPECT_EQ(bits, 0x3E3504F3u);
}

TEST(Hadamard, SignsMatchTheDocumentedGenerator) {
  for (uint32_t seed : {0u, 1u, 7u, 0xFFFFFFFFu})
    for (int64_t d : {16, 256}) {
      std::vector<uint8_t> negative = hadamardSigns(seed, d);
      for (int64_t i = 0; i < d; ++i)
        EXPECT_EQ(negative[i] != 0, independentSignNegative(seed, i))
            << "seed " << seed << " i " << i;
    }
  // The first 16 signs of seed 7: + + - + + - - + + + - - - + - -.
  const uint8_t want[16] = {0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1};
  std::vector<uint8_t> got = hadamardSigns(7, 16);
  EXPECT_EQ(std::vector<uint8_t>(want, want + 16), got);
  // Roughly balanced and seed dependent.
  std::vector<uint8_t> a = hadamardSigns(1, 256), b = hadamardSigns(2, 256);
  int negatives = 0, differ = 0;
  for (int i = 0; i < 256; ++i) {
    negatives += a[i];
    differ += a[i] != b[i];
  }
  EXPECT_GT(negatives, 96);
  EXPECT_LT(negatives, 160);
  EXPECT_GT(differ, 96);
}

TEST(Hadamard, MatchesTheMatrixDefinition) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  for (int64_t d : {2, 16, 32, 64, 128, 256})
    for (int64_t s : {1, 3, 32})
      for (bool randomized : {false, true})
        for (bool inverse : {false, true}) {
          HadamardParams p{d, s, randomized, 1234u, inverse};
          std::vector<float> x(2 * d * s);
          for (float &v : x)
            v = normal(rng);
          std::vector<double> want = denseRotate(x, p);
          hadamardRotateRows(p, x.data(), 1, x.size());
          for (size_t k = 0; k < x.size(); ++k)
            ASSERT_NEAR(x[k], want[k], 1e-5 * std::sqrt(double(d)))
                << "d " << d << " s " << s << " k " << k;
        }
}

TEST(Hadamard, ExactOnIntegersForEvenPowers) {
  // d = 4^m: the scaling is a power of two and integer sums are exact, so the
  // rotation equals the matrix product exactly.
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> ints(-100, 100);
  for (int64_t d : {16, 64, 256})
    for (bool randomized : {false, true}) {
      HadamardParams p{d, 1, randomized, 99u, false};
      std::vector<float> x(3 * d);
      for (float &v : x)
        v = static_cast<float>(ints(rng));
      std::vector<double> want = denseRotate(x, p);
      std::vector<float> y = x;
      hadamardRotateRows(p, y.data(), 3, d);
      for (size_t k = 0; k < y.size(); ++k)
        ASSERT_EQ(static_cast<double>(y[k]), want[k]);
      // And the inverse gives x back exactly.
      p.inverse = true;
      hadamardRotateRows(p, y.data(), 3, d);
      EXPECT_EQ(y, x);
    }
}

TEST(Hadamard, InverseUndoesForwardWithinRounding) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (int64_t d : {32, 128})
    for (bool randomized : {false, true}) {
      HadamardParams p{d, 1, randomized, 5u, false};
      std::vector<float> x(4 * d);
      for (float &v : x)
        v = normal(rng);
      std::vector<float> y = x;
      hadamardRotateRows(p, y.data(), 4, d);
      p.inverse = true;
      hadamardRotateRows(p, y.data(), 4, d);
      for (size_t k = 0; k < x.size(); ++k)
        EXPECT_NEAR(y[k], x[k], 1e-5f * 8);
    }
}

TEST(Hadamard, ElementwiseRulesMatchTheGroupDriver) {
  // One butterfly stage written elementwise (as the lowering emits it) and
  // the group driver give identical bits.
  const ScalarOps ops;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  const int64_t d = 32;
  std::vector<float> x(d);
  for (float &v : x)
    v = normal(rng);
  std::vector<uint8_t> negative = hadamardSigns(42, d);
  std::vector<float> staged(d);
  for (int64_t i = 0; i < d; ++i)
    staged[i] = hadamardApplySign(ops, x[i], negative[i] != 0);
  for (int64_t h = 1; h < d; h *= 2) {
    std::vector<float> next(d);
    for (int64_t i = 0; i < d; ++i) {
      int64_t lower = i & ~h, upper = i | h;
      next[i] =
          hadamardButterfly(ops, staged[lower], staged[upper], (i & h) != 0);
      if (2 * h == d)
        next[i] = hadamardNormalize(ops, next[i], d);
    }
    staged = next;
  }
  HadamardParams p{d, 1, true, 42u, false};
  std::vector<float> grouped = x;
  hadamardRotateRows(p, grouped.data(), 1, d);
  EXPECT_EQ(0, std::memcmp(staged.data(), grouped.data(), sizeof(float) * d));
}

TEST(Hadamard, Validity) {
  EXPECT_TRUE(isValidHadamard({32, 1, false, 0, false}, 64));
  EXPECT_FALSE(isValidHadamard({24, 1, false, 0, false}, 48));
  EXPECT_FALSE(isValidHadamard({64, 1, false, 0, false}, 96));
  EXPECT_FALSE(isValidHadamard({4, 32, false, 0, false}, 96));
  EXPECT_TRUE(isValidHadamard({4, 32, false, 0, false}, 256));
  EXPECT_FALSE(isValidHadamard({4, 0, false, 0, false}, 256));
}

} // namespace
