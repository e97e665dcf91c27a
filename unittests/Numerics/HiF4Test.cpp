//===- HiF4Test.cpp - HiF4 three-level scaling ----------------------------===//

#include "fp4/Numerics/HiF4.h"
#include "fp4/Numerics/Reference.h"
#include "fp4/Numerics/ScalarOps.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

const ScalarOps ops;
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

int code(const uint8_t *codes, int j) {
  return (codes[j / 2] >> (4 * (j % 2))) & 15;
}

struct Group {
  uint8_t codes[32];
  uint32_t meta;
  float out[64];
};

Group quantize(const float *x) {
  Group g;
  quantizeHiF4Row(HiF4Params{}, x, 64, g.codes, &g.meta);
  dequantizeHiF4Row(HiF4Params{}, g.codes, &g.meta, 64, g.out);
  return g;
}

float bf16(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
  std::memcpy(&v, &u, 4);
  return v;
}

/// The spec's pseudo-code in plain C++ (finite, non-zero groups), written
/// independently of the generic rules.
void specGroup(const float *x, float *out) {
  float m64 = 0;
  for (int i = 0; i < 64; ++i)
    m64 = std::max(m64, std::fabs(x[i]));
  float sf = bf16(m64 * bf16(1.0f / 7.0f));
  sf = std::min(std::max(sf, std::ldexp(1.0f, -48)), 49152.0f);
  int e;
  std::frexp(sf, &e);
  e -= 1; // floor(log2 sf)
  sf = std::nearbyint(std::ldexp(sf, 2 - e)) * std::ldexp(1.0f, e - 2);
  float rec = bf16(1.0f / sf);
  for (int i = 0; i < 8; ++i) {
    float m8 = 0;
    for (int k = 0; k < 8; ++k)
      m8 = std::max(m8, std::fabs(x[8 * i + k]));
    float l2 = (m8 * rec >= 4) ? 2 : 1;
    for (int h = 0; h < 2; ++h) {
      const float *x4 = x + 8 * i + 4 * h;
      float m4 = 0;
      for (int k = 0; k < 4; ++k)
        m4 = std::max(m4, std::fabs(x4[k]));
      float l3 = (m4 * rec / l2 >= 2) ? 2 : 1;
      for (int k = 0; k < 4; ++k) {
        double t = static_cast<double>(4 * std::fabs(x4[k]) * rec / (l2 * l3));
        double m = std::floor(t + 0.5) / 4; // exact in double
        if (m >= 2)
          m = 1.75;
        out[8 * i + 4 * h + k] =
            std::copysign(static_cast<float>(m * l2 * l3 * sf), x4[k]);
      }
    }
  }
}

TEST(HiF4, OneSeventhConstant) {
  EXPECT_EQ(roundToBF16(ops, 1.0f / 7.0f), kHiF4OneSeventhBF16);
}

TEST(HiF4, E6M2Codes) {
  EXPECT_EQ(e6m2Decode(ops, 0), std::ldexp(1.0f, -48));
  EXPECT_EQ(e6m2Decode(ops, 0xFE), 49152.0f);
  EXPECT_EQ(e6m2Decode(ops, 192), 1.0f);
  EXPECT_EQ(e6m2Decode(ops, 193), 1.25f);
  EXPECT_TRUE(std::isnan(e6m2Decode(ops, 0xFF)));
  EXPECT_EQ(hif4ScaleByte(ops, 1e30f), 0xFE); // clamp high
  EXPECT_EQ(hif4ScaleByte(ops, 1e-30f), 0);   // clamp low
  EXPECT_EQ(hif4ScaleByte(ops, 7.0f), 192);   // bf16(7 * bf16(1/7)) = 1.0
  EXPECT_EQ(hif4ScaleByte(ops, kNaN), 0xFF);
  EXPECT_EQ(hif4ScaleByte(ops, kInf), 0xFF);
  // E6M2 rounding ties to even: sf = bf16(1.375) -> 1.5 (M=2), 1.125 -> 1.0.
  EXPECT_EQ(hif4ScaleByte(ops, 1.375f / kHiF4OneSeventhBF16), 194);
  EXPECT_EQ(hif4ScaleByte(ops, 1.125f / kHiF4OneSeventhBF16), 192);
}

TEST(HiF4, AllZeroGroup) {
  float x[64] = {};
  x[3] = -0.0f;
  Group g = quantize(x);
  EXPECT_EQ(g.meta, 0u);
  for (int j = 0; j < 64; ++j) {
    EXPECT_EQ(code(g.codes, j), j == 3 ? 8 : 0);
    EXPECT_EQ(g.out[j], 0.0f);
  }
}

TEST(HiF4, NonFiniteGroup) {
  for (float bad : {kNaN, kInf, -kInf}) {
    float x[64];
    for (int i = 0; i < 64; ++i)
      x[i] = 100.0f * (i + 1);
    x[20] = bad;
    Group g = quantize(x);
    EXPECT_EQ(g.meta, 0xFFu);
    for (int j = 0; j < 64; ++j)
      EXPECT_TRUE(std::isnan(g.out[j]));
  }
}

TEST(HiF4, HalfUpIsExact) {
  // m64 = 7 -> sf = 1, rec = 1. Block 0 holds the 7 (l2 = l3 = 2); the other
  // 8-blocks stay below 4 and their 4-blocks below 2, so t = 4|x|.
  float x[64] = {};
  x[0] = 7.0f;
  x[8] = 0.125f;                        // t = 0.5 -> up: k = 1
  x[9] = std::nextafter(0.125f, 0.0f);  // t = 0.5 - 2^-25: f32 t+0.5 = 1
  x[10] = -0.375f;                      // t = 1.5 -> 2
  x[11] = 0.625f;                       // t = 2.5 -> 3 (RNE would give 2)
  x[12] = std::nextafter(0.625f, 0.0f); // -> 2
  x[13] = 1.625f;                       // t = 6.5 -> 7
  x[16] = 1.99f;                        // t = 7.96 -> 8 -> saturate 7
  Group g = quantize(x);
  EXPECT_EQ(g.meta & 0xFF, 192u);
  EXPECT_EQ(code(g.codes, 0), 7);
  EXPECT_EQ(code(g.codes, 8), 1);
  EXPECT_EQ(code(g.codes, 9), 0);
  EXPECT_EQ(code(g.codes, 10), 8 | 2);
  EXPECT_EQ(code(g.codes, 11), 3);
  EXPECT_EQ(code(g.codes, 12), 2);
  EXPECT_EQ(code(g.codes, 13), 7);
  EXPECT_EQ(code(g.codes, 16), 7);
  EXPECT_EQ(g.out[0], 7.0f);
  EXPECT_EQ(g.out[8], 0.25f);
  EXPECT_EQ(g.out[10], -0.5f);
  EXPECT_EQ(g.out[16], 1.75f);
  // Level bits: only 8-block 0 and 4-block 0.
  EXPECT_EQ(g.meta, 192u | (1u << 8) | (1u << 16));
}

TEST(HiF4, LevelBitPositions) {
  // rec = 1 (m64 = 7 in 8-block 5). 8-block i=2: m8 = 5 -> l2 = 2; its
  // 4-block j=5 has m4 = 5: 5/2 >= 2 -> l3 = 2; j=4 has m4 = 1 -> l3 = 1.
  // 8-block 6: m8 = 3 -> l2 = 1; 4-block j=13 has m4 = 2.5 -> l3 = 2.
  float x[64] = {};
  x[40] = 7.0f; // 8-block 5, 4-block 10
  x[16] = 1.0f; // 8-block 2, 4-block 4
  x[20] = 5.0f; // 8-block 2, 4-block 5
  x[48] = 3.0f; // 8-block 6, 4-block 12
  x[52] = 2.5f; // 8-block 6, 4-block 13
  Group g = quantize(x);
  uint32_t l2 = (1u << 2) | (1u << 5);
  uint32_t l3 = (1u << 5) | (1u << 10) | (1u << 12) | (1u << 13);
  EXPECT_EQ(g.meta, 192u | (l2 << 8) | (l3 << 16));
  EXPECT_EQ(g.out[40], 7.0f);
  EXPECT_EQ(g.out[20], 5.0f);
  EXPECT_EQ(g.out[16], 1.0f);
  EXPECT_EQ(g.out[48], 3.0f);
  EXPECT_EQ(g.out[52], 2.5f);
}

TEST(HiF4, RandomAgainstSpecPseudoCode) {
  std::mt19937 gen(3);
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int> ex(-60, 60);
  for (int t = 0; t < 3000; ++t) {
    float x[64], want[64];
    float scale = std::ldexp(1.0f, ex(gen));
    for (float &v : x)
      v = nd(gen) * scale * (gen() % 9 == 0 ? 16.0f : 1.0f);
    specGroup(x, want);
    Group g = quantize(x);
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(g.out[j], want[j]) << t << " " << j << " x=" << x[j];
  }
}

} // namespace
