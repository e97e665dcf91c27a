//===- OutliersTest.cpp - Block top-k selection and sparse residual -------===//

#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/Outliers.h"
#include "fp4/Numerics/Residual.h"
#include "fp4/Numerics/ScalarOps.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

const ScalarOps ops;
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct TopK {
  std::vector<float> values;
  std::vector<int32_t> indices;
};

TopK select(const std::vector<float> &x, int64_t block, int64_t k) {
  TopK r;
  r.values.resize(x.size() / block * k);
  r.indices.resize(x.size() / block * k);
  selectTopKRow(x.data(), x.size(), block, k, r.values.data(),
                r.indices.data());
  return r;
}

TEST(Outliers, PrecedesOrder) {
  auto bits = [](float v) { return absBits(ops, v); };
  EXPECT_TRUE(outlierPrecedes(ops, bits(-3.0f), 5, bits(2.0f), 0));
  EXPECT_FALSE(outlierPrecedes(ops, bits(2.0f), 0, bits(-3.0f), 5));
  // Equal magnitudes (either sign): the lower index first.
  EXPECT_TRUE(outlierPrecedes(ops, bits(-2.0f), 1, bits(2.0f), 3));
  EXPECT_FALSE(outlierPrecedes(ops, bits(2.0f), 3, bits(-2.0f), 1));
  EXPECT_FALSE(outlierPrecedes(ops, bits(2.0f), 3, bits(2.0f), 3));
  // -0 and +0 tie; NaN > Inf > finite.
  EXPECT_TRUE(outlierPrecedes(ops, bits(-0.0f), 0, bits(0.0f), 1));
  EXPECT_TRUE(outlierPrecedes(ops, bits(kInf), 7, bits(3e38f), 0));
  EXPECT_TRUE(outlierPrecedes(ops, bits(kNaN), 7, bits(-kInf), 0));
}

// narrowOutlierKey against outlierPrecedes, exhaustively: every magnitude of
// bf16 and of f16 (each widened exactly to f32), every index 0..127 and both
// signs. The pairs are sorted by outlierPrecedes (a total order on distinct
// (magnitude, index) pairs); both keys of each pair must lie strictly below
// both keys of the one before it, which gives key order == precedes order for
// every two pairs. Every key must also read back its exact value and index.
TEST(Outliers, NarrowKeyIsThePrecedesOrder) {
  for (bool isBF16 : {true, false}) {
    struct Entry {
      int32_t bits, index;
    };
    std::vector<Entry> entries;
    for (uint32_t pattern = 0; pattern < 0x8000; ++pattern) {
      float v = isBF16 ? bf16Decode(ops, static_cast<int32_t>(pattern))
                       : f16Decode(ops, static_cast<int32_t>(pattern));
      int32_t bits = ops.bitcastToI32(v);
      ASSERT_EQ(bits & ((1 << kNarrowKeyBits) - 1), 0) << pattern;
      for (int32_t index = 0; index < kMaxSparseBlock; ++index)
        entries.push_back({bits, index});
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) {
                return outlierPrecedes(ops, a.bits, a.index, b.bits, b.index);
              });
    int32_t previousMin = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry &e = entries[i];
      int32_t keys[2];
      for (int sign = 0; sign < 2; ++sign) {
        float v = ops.bitcastToF32(e.bits | (sign ? INT32_MIN : 0));
        keys[sign] = narrowOutlierKey(ops, v, e.index);
        ASSERT_GE(keys[sign], 0);
        ASSERT_EQ(ops.bitcastToI32(narrowKeyValue(ops, keys[sign])),
                  ops.bitcastToI32(v));
        ASSERT_EQ(narrowKeyIndex(ops, keys[sign]), e.index);
      }
      if (i > 0)
        ASSERT_LT(std::max(keys[0], keys[1]), previousMin)
            << std::hex << e.bits << " index " << e.index;
      previousMin = std::min(keys[0], keys[1]);
    }
  }
}

TEST(Outliers, TiesGoToTheLowerIndex) {
  // Block of 4: |x| = 1, 3, 3, 2 -> top-2 are indices 1 then 2.
  TopK r = select({1.0f, -3.0f, 3.0f, 2.0f}, 4, 2);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(r.values, (std::vector<float>{-3.0f, 3.0f}));
  // All equal: the first k, in index order.
  r = select({0.5f, -0.5f, 0.5f, -0.5f, 0.5f, 0.5f, 0.5f, 0.5f}, 8, 4);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{0, 1, 2, 3}));
  // All zero (signs mixed): zeros are selected like any tie.
  r = select({0.0f, -0.0f, 0.0f, 0.0f}, 4, 2);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(std::signbit(r.values[1]));
}

TEST(Outliers, NonFiniteFirst) {
  TopK r = select({1.0f, kNaN, -kInf, 1e30f}, 4, 3);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(std::isnan(r.values[0]));
  EXPECT_EQ(r.values[1], -kInf);
}

TEST(Outliers, SlotsAreRanksPerBlock) {
  // Two blocks of 8, k = 4: slot j holds the element of rank j of its block.
  std::vector<float> x = {0.1f,  7.0f, -2.0f, 3.0f, 0.0f, -7.0f, 5.0f,  1.0f,
                          -1.0f, 1.0f, -1.0f, 8.0f, 0.5f, 0.25f, -8.0f, 2.0f};
  TopK r = select(x, 8, 4);
  EXPECT_EQ(r.indices, (std::vector<int32_t>{1, 5, 6, 3, 3, 6, 7, 0}));
  EXPECT_EQ(r.values, (std::vector<float>{7.0f, -7.0f, 5.0f, 3.0f, 8.0f, -8.0f,
                                          2.0f, -1.0f}));
}

TEST(Outliers, SplitReconstructsExactly) {
  std::mt19937 gen(7);
  std::cauchy_distribution<float> dist(0.0f, 1.0f);
  for (int64_t k : {1, 2, 4}) {
    std::vector<float> x(32 * 64);
    for (float &v : x)
      v = dist(gen);
    std::vector<float> rest(x.size()), values(x.size() / 32 * k);
    std::vector<int32_t> indices(values.size());
    splitOutliersRow(x.data(), x.size(), 32, k, rest.data(), values.data(),
                     indices.data());
    std::vector<float> sum = rest;
    for (size_t b = 0; b < x.size() / 32; ++b) {
      // The k largest |x| of the block are taken out; rest keeps the others.
      std::vector<float> mags;
      for (size_t i = 0; i < 32; ++i)
        mags.push_back(std::fabs(x[b * 32 + i]));
      std::sort(mags.rbegin(), mags.rend());
      for (int64_t j = 0; j < k; ++j) {
        EXPECT_EQ(std::fabs(values[b * k + j]), mags[j]);
        EXPECT_EQ(rest[b * 32 + indices[b * k + j]], 0.0f);
        sum[b * 32 + indices[b * k + j]] += values[b * k + j];
      }
      for (size_t i = 0; i < 32; ++i)
        if (rest[b * 32 + i] != 0.0f)
          EXPECT_LE(std::fabs(rest[b * 32 + i]), mags[k - 1]);
    }
    EXPECT_EQ(sum, x);
  }
}

TEST(Residual, TwoFourKeepsTwoLargestOfEveryFour) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f, -1.0f, -1.0f, 0.5f, 1.0f};
  std::vector<float> deq = {1.0f, 1.5f, 2.0f, 4.0f, -1.5f, 0.0f, 0.5f, 0.5f};
  // r = 0, 0.5, 1, 0 | 0.5, -1, 0, 0.5.
  std::vector<float> values(4);
  std::vector<int32_t> indices(4);
  residualRow(x.data(), deq.data(), 8, kTwoFourBlock, kTwoFourKeep,
              values.data(), indices.data());
  EXPECT_EQ(indices, (std::vector<int32_t>{2, 1, 1, 0}));
  EXPECT_EQ(values, (std::vector<float>{1.0f, 0.5f, -1.0f, 0.5f}));
}

} // namespace
