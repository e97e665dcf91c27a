//===- ErrorDecompositionTest.cpp - ideal grid, exact vector terms --------===//
//
// The numerics of fp4-error-report on hand-checked cases: the ideal grid's
// tie rules, s* at 24 bits, and a block whose figures are computed by hand.
// test/python/test_error_report.py checks the same code against NumPy on
// random and adversarial data.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/ErrorDecomposition.h"

#include "gtest/gtest.h"

#include <cmath>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

TEST(ErrorDecomposition, E2M1TiesGoToTheEvenCode) {
  // numerics.md 1: 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4.
  const double ties[][2] = {{0.25, 0}, {0.75, 1},   {1.25, 1}, {1.75, 2},
                            {2.5, 2},  {3.5, 4},    {5, 4},    {5.01, 6},
                            {100, 6},  {0.26, 0.5}, {0, 0}};
  for (const auto &t : ties)
    EXPECT_EQ(idealGridMagnitude(ElementGrid::E2M1, t[0], 1.0), t[1]) << t[0];
  // Scaled by a non-power-of-two s*: the comparison is exact.
  double s = idealScale(ElementGrid::E2M1, 7.0);
  EXPECT_EQ(idealGridMagnitude(ElementGrid::E2M1, 0.25 * s, s), 0.0);
  EXPECT_EQ(idealGridMagnitude(ElementGrid::E2M1, 0.75 * s, s), 1.0);
}

TEST(ErrorDecomposition, HiF4RoundsHalfUp) {
  EXPECT_EQ(idealGridMagnitude(ElementGrid::HiF4, 0.125, 1.0), 0.25);
  EXPECT_EQ(idealGridMagnitude(ElementGrid::HiF4, 0.124, 1.0), 0.0);
  EXPECT_EQ(idealGridMagnitude(ElementGrid::HiF4, 0.375, 1.0), 0.5);
  EXPECT_EQ(idealGridMagnitude(ElementGrid::HiF4, 1.625, 1.0), 1.75);
  EXPECT_EQ(idealGridMagnitude(ElementGrid::HiF4, 9.0, 1.0), 1.75);
}

TEST(ErrorDecomposition, IdealScaleHas24SignificantBits) {
  EXPECT_EQ(idealScale(ElementGrid::E2M1, 6.0), 1.0);
  EXPECT_EQ(idealScale(ElementGrid::E2M1, 7.0), double(7.0f / 6.0f));
  EXPECT_EQ(idealScale(ElementGrid::HiF4, 1.0), double(1.0f / 1.75f));
  // Below f32's range the 24 bits are kept (f32 would lose them).
  double tiny = std::ldexp(7.0, -140);
  EXPECT_EQ(idealScale(ElementGrid::E2M1, tiny),
            std::ldexp(double(7.0f / 6.0f), -140));
  EXPECT_EQ(idealScale(ElementGrid::E2M1, 0.0), 0.0);
}

TEST(ErrorDecomposition, HandComputedBlock) {
  // Block of 4, amax 3, s* = 0.5; x' given (what a format with X = 0.5
  // produces): x = 3, 1.1, 0.1, -0.7 and x' = 3, 1, 0, -0.5. Ideal:
  // x/s* = 6, 2.2, 0.2, -1.4 -> Q = 6, 2, 0 (dead), -1.5: s*Q = 3, 1, 0,
  // -0.75.
  std::vector<float> x = {3.0f, 1.1f, 0.1f, -0.7f};
  std::vector<float> xq = {3.0f, 1.0f, 0.0f, -0.5f};
  // Codes: 6 -> mag 7 (6*0.5 = 3), 1 -> mag 4, 0 -> 0, -0.5 -> 8|2.
  uint8_t codes[2] = {uint8_t(7 | 4 << 4), uint8_t(0 | (8 | 2) << 4)};
  ErrorStats stats;
  std::vector<double> sb(4), dz(4), gn(4);
  ErrorEnergies e =
      decomposeBlock(ElementGrid::E2M1, x.data(), xq.data(), 4, codes, 0, stats,
                     sb.data(), dz.data(), gn.data());
  double x1 = 1.1f, x2 = 0.1f, x3 = -0.7f;
  EXPECT_EQ(sb[0], 0.0);
  EXPECT_EQ(sb[1], 0.0);
  EXPECT_EQ(sb[2], 0.0);
  EXPECT_EQ(sb[3], -0.75 - -0.5);
  EXPECT_EQ(dz[2], x2);
  EXPECT_EQ(gn[1], x1 - 1.0);
  EXPECT_EQ(gn[3], x3 + 0.75);
  EXPECT_EQ(e.dead, x2 * x2);
  EXPECT_EQ(e.total, (x1 - 1) * (x1 - 1) + x2 * x2 + (x3 + 0.5) * (x3 + 0.5));
  EXPECT_EQ(stats.terms.maxAbsResidual, 0.0);
  EXPECT_EQ(stats.zeroed, 1);
  // Code 7 with |x| == |x'|: not clipped.
  EXPECT_EQ(stats.clipped, 0);
  EXPECT_EQ(stats.elements, 4);
}

} // namespace
