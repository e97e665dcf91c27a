//===- E2M1Test.cpp - E2M1 encode/decode edge cases -----------------------===//

#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/ScalarOps.h"

#include "FloatBits.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

using fp4test::bitsOf;

const ScalarOps ops;
const float kGrid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

int32_t rne(float v) {
  return e2m1Encode(ops, v, ElementRounding::NearestEven, 0);
}
int32_t away(float v) {
  return e2m1Encode(ops, v, ElementRounding::HalfAway, 0);
}

/// Brute force: the nearest grid point by distance in double, ties to the
/// even code (RNE) or to the larger magnitude (half away), saturating.
int32_t bruteForce(float v, bool tiesAway) {
  double a = std::fabs(static_cast<double>(v));
  int32_t best = 0;
  for (int32_t c = 1; c < 8; ++c) {
    double dc = std::fabs(a - kGrid[c]), db = std::fabs(a - kGrid[best]);
    if (dc < db || (dc == db && (tiesAway || c % 2 == 0)))
      best = c;
  }
  return best | (std::signbit(v) ? 8 : 0);
}

TEST(E2M1, DecodeTable) {
  for (int32_t c = 0; c < 16; ++c) {
    float v = e2m1Decode(ops, c);
    EXPECT_EQ(std::fabs(v), kGrid[c & 7]) << c;
    EXPECT_EQ(std::signbit(v), c >= 8) << c;
  }
  EXPECT_EQ(bitsOf(e2m1Decode(ops, 8)), 0x80000000u); // -0.0
}

TEST(E2M1, NearestEvenTieTableBothSigns) {
  // numerics.md 1: 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4.
  const float ties[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const int32_t want[7] = {0, 2, 2, 4, 4, 6, 6};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(rne(ties[i]), want[i]) << ties[i];
    EXPECT_EQ(rne(-ties[i]), want[i] | 8) << -ties[i];
    // Just off the tie goes to the nearer point.
    float up = std::nextafter(ties[i], 10.0f);
    float down = std::nextafter(ties[i], 0.0f);
    EXPECT_EQ(rne(up), bruteForce(up, false)) << up;
    EXPECT_EQ(rne(down), bruteForce(down, false)) << down;
    EXPECT_EQ(rne(-up), bruteForce(-up, false)) << -up;
    EXPECT_EQ(rne(-down), bruteForce(-down, false)) << -down;
    EXPECT_EQ(rne(up), rne(down) + 1) << ties[i];
  }
}

// The fast NearestEven form against the threshold count that specifies it,
// on every non-negative f32 bit pattern (2^31: every magnitude, subnormals,
// Inf and every NaN); the sign is or-ed on afterwards by both. The range is
// split over the machine's threads. Under the sanitizers (several times
// slower, and checking memory, not numbers) every 61st pattern, which still
// crosses every binade.
#if defined(__SANITIZE_ADDRESS__)
#define FP4_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define FP4_SANITIZED 1
#endif
#endif
TEST(E2M1, NearestEvenFastEqualsThresholdsOnEveryInput) {
#ifdef FP4_SANITIZED
  constexpr uint64_t stride = 61;
#else
  constexpr uint64_t stride = 1;
#endif
  constexpr uint64_t end = uint64_t(0x7FFFFFFF) + 1;
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<int64_t> mismatches(workers, 0);
  std::vector<uint32_t> first(workers, 0);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      uint64_t lo = end * w / workers, hi = end * (w + 1) / workers;
      lo = (lo + stride - 1) / stride * stride;
      for (uint64_t bits = lo; bits < hi; bits += stride) {
        float a = ops.bitcastToF32(static_cast<int32_t>(bits));
        if (e2m1NearestEvenFast(ops, a) !=
                e2m1NearestEvenByThresholds(ops, a) &&
            mismatches[w]++ == 0)
          first[w] = static_cast<uint32_t>(bits);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (unsigned w = 0; w < workers; ++w)
    EXPECT_EQ(mismatches[w], 0) << "first at bits 0x" << std::hex << first[w];
}

TEST(E2M1, HalfAwayTies) {
  const float ties[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(away(ties[i]), i + 1) << ties[i];
    EXPECT_EQ(away(-ties[i]), (i + 1) | 8) << -ties[i];
    float down = std::nextafter(ties[i], 0.0f);
    EXPECT_EQ(away(down), i) << down;
  }
}

TEST(E2M1, SignedZerosAndNegativeUnderflow) {
  EXPECT_EQ(rne(0.0f), 0);
  EXPECT_EQ(rne(-0.0f), 8);
  EXPECT_EQ(away(-0.0f), 8);
  EXPECT_EQ(rne(-0.1f), 8);
  EXPECT_EQ(rne(-0.25f), 8);
  EXPECT_EQ(rne(-1e-45f), 8);
  EXPECT_EQ(away(-0.2f), 8);
  EXPECT_EQ(rne(0.1f), 0);
  // Stochastic rounding keeps the sign when it rounds toward zero.
  EXPECT_EQ(e2m1Encode(ops, -0.1f, ElementRounding::Stochastic, -1), 8);
}

TEST(E2M1, Saturation) {
  for (float v : {5.01f, 6.0f, 6.5f, 7.99f, 8.0f, 1e30f,
                  std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(rne(v), 7) << v;
    EXPECT_EQ(rne(-v), 15) << v;
    EXPECT_EQ(away(v), 7) << v;
    if (v >= 6.0f) {
      EXPECT_EQ(e2m1Encode(ops, v, ElementRounding::Stochastic, 0), 7) << v;
    }
  }
}

TEST(E2M1, NaNIsDeterministic) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(rne(nan), rne(nan));
  EXPECT_EQ(rne(nan) & 7, 0);
  EXPECT_EQ(e2m1Encode(ops, nan, ElementRounding::Stochastic, -1) & 7, 0);
}

TEST(E2M1, GridRoundTrip) {
  for (int32_t c = 0; c < 16; ++c) {
    float v = e2m1Decode(ops, c);
    EXPECT_EQ(rne(v), c);
    EXPECT_EQ(away(v), c);
    for (uint32_t r : {0u, 0x7FFFFFFFu, 0xFFFFFFFFu})
      EXPECT_EQ(e2m1Encode(ops, v, ElementRounding::Stochastic,
                           static_cast<int32_t>(r)),
                c);
  }
}

TEST(E2M1, RandomAgainstBruteForce) {
  std::mt19937 gen(1234);
  std::uniform_real_distribution<float> uni(-9.0f, 9.0f);
  std::uniform_int_distribution<int> mid(0, 13);
  for (int i = 0; i < 200000; ++i) {
    float v = uni(gen);
    if (i % 4 == 1) {
      // Midpoints and their neighbours.
      const float m[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
      float t = m[mid(gen) % 7] * (i % 8 == 1 ? -1.0f : 1.0f);
      v = (i % 3 == 0) ? t : std::nextafter(t, (i % 3 == 1) ? 10.0f : -10.0f);
    }
    ASSERT_EQ(rne(v), bruteForce(v, false)) << v;
    ASSERT_EQ(away(v), bruteForce(v, true)) << v;
  }
}

} // namespace
