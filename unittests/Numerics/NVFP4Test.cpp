//===- NVFP4Test.cpp - NVFP4 scales, four_over_six, 2D tiles --------------===//

#include "fp4/Numerics/NVFP4.h"
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
constexpr float kMax = std::numeric_limits<float>::max();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

int code(const uint8_t *codes, int j) {
  return (codes[j / 2] >> (4 * (j % 2))) & 15;
}

TEST(NVFP4, TensorScale) {
  NVFP4Params p;
  NVFP4TensorScale s = nvfp4TensorScale(p, 0.0f);
  EXPECT_EQ(s.encode, 1.0f);
  EXPECT_EQ(s.decode, 1.0f);
  s = nvfp4TensorScale(p, 2688.0f);
  EXPECT_EQ(s.encode, 1.0f);
  s = nvfp4TensorScale(p, 1e-44f); // 2688 / tiny overflows -> FLT_MAX
  EXPECT_EQ(s.encode, kMax);
  EXPECT_EQ(s.decode, 1.0f / kMax);
  p.fourOverSix = true;
  s = nvfp4TensorScale(p, 1536.0f);
  EXPECT_EQ(s.encode, 1.0f);
  float x[5] = {1.0f, -kInf, kNaN, -3.0f, kInf};
  EXPECT_EQ(nvfp4TensorAmax(x, 5), 3.0f);
  float y[2] = {kNaN, kInf};
  EXPECT_EQ(nvfp4TensorAmax(y, 2), 0.0f);
}

TEST(NVFP4, HandComputedBlock) {
  // g_enc = 1: k = f32(1/6), s = e4m3(f32(6 * k)) = 1.0 (byte 0x38), enc = 1.
  NVFP4Params p;
  NVFP4TensorScale ts{1.0f, 1.0f};
  float x[16] = {6.0f, -5.0f, 2.5f, -0.25f, 0.3f, 1.75f, 0.0f, -0.0f};
  uint8_t codes[8], scale;
  quantizeNVFP4Row(p, ts, x, 16, codes, &scale);
  EXPECT_EQ(scale, 0x38);
  const int want[8] = {7, 14, 4, 8, 1, 4, 0, 8};
  for (int j = 0; j < 8; ++j)
    EXPECT_EQ(code(codes, j), want[j]) << j;
  float out[16];
  dequantizeNVFP4Row(codes, &scale, 16, ts.decode, out);
  EXPECT_EQ(out[0], 6.0f);
  EXPECT_EQ(out[1], -4.0f);
  EXPECT_TRUE(std::signbit(out[7]));
}

TEST(NVFP4, SpecialBlocks) {
  NVFP4Params p;
  NVFP4TensorScale ts = nvfp4TensorScale(p, 100.0f);
  std::vector<float> x(64, 0.0f);
  x[1] = -0.0f;    // block 0 all zero
  x[16] = 100.0f;  // block 1: normal
  x[17] = 1e-30f;  //   tiny element -> 0
  x[18] = -1e-30f; //   -> code 8
  x[32] = kNaN;    // block 2: NaN
  x[48] = -kInf;   // block 3: Inf
  uint8_t codes[32], scales[4];
  quantizeNVFP4Row(p, ts, x.data(), 64, codes, scales);
  EXPECT_EQ(scales[0], 0);
  EXPECT_EQ(code(codes, 0), 0);
  EXPECT_EQ(code(codes, 1), 8);
  EXPECT_EQ(scales[2], 0x7F);
  EXPECT_EQ(scales[3], 0x7F);
  EXPECT_EQ(code(codes, 16), 7);
  EXPECT_EQ(code(codes, 17), 0);
  EXPECT_EQ(code(codes, 18), 8);
  float out[64];
  dequantizeNVFP4Row(codes, scales, 64, ts.decode, out);
  for (int j = 32; j < 64; ++j)
    EXPECT_TRUE(std::isnan(out[j])) << j;
  EXPECT_TRUE(std::signbit(out[1]));
  EXPECT_EQ(out[0], 0.0f);
}

TEST(NVFP4, ScaleRoundingToZeroZeroesBlock) {
  // Tensor amax 1e6 -> g_enc = 2688e-6; a block with amax 1e-3 gets
  // s = e4m3(1e-3 * 4.48e-4) = 0: all codes by sign.
  NVFP4Params p;
  NVFP4TensorScale ts = nvfp4TensorScale(p, 1e6f);
  float x[16];
  for (int i = 0; i < 16; ++i)
    x[i] = (i % 2 ? -1e-3f : 1e-3f) * (1 + i / 16.0f);
  uint8_t codes[8], scale;
  quantizeNVFP4Row(p, ts, x, 16, codes, &scale);
  EXPECT_EQ(scale, 0);
  for (int j = 0; j < 16; ++j)
    EXPECT_EQ(code(codes, j), j % 2 ? 8 : 0);
  float out[16];
  dequantizeNVFP4Row(codes, &scale, 16, ts.decode, out);
  for (int j = 0; j < 16; ++j)
    EXPECT_EQ(out[j], 0.0f);
}

double blockSSE(const float *x, const uint8_t *codes, uint8_t scale,
                float gDec) {
  float out[16];
  dequantizeNVFP4Row(codes, &scale, 16, gDec, out);
  double sse = 0;
  for (int i = 0; i < 16; ++i) {
    double d = static_cast<double>(x[i]) - out[i];
    sse += d * d;
  }
  return sse;
}

TEST(NVFP4, FourOverSixPicksLowerError) {
  NVFP4Params p6, p46;
  p46.fourOverSix = true;
  NVFP4TensorScale ts{1.0f, 1.0f};
  // Block max on 4 with the rest on 3: map-to-4 (s = 1) is exact.
  float x[16];
  x[0] = 4.0f;
  for (int i = 1; i < 16; ++i)
    x[i] = (i % 2) ? 3.0f : -3.0f;
  uint8_t codes[8], scale;
  quantizeNVFP4Row(p46, ts, x, 16, codes, &scale);
  EXPECT_EQ(scale, 0x38); // s4 = e4m3(1.5 * 4/6) = 1.0
  EXPECT_EQ(blockSSE(x, codes, scale, 1.0f), 0.0);
  quantizeNVFP4Row(p6, ts, x, 16, codes, &scale);
  EXPECT_EQ(scale, 0x33); // s6 = e4m3(0.6667) = 0.6875
  EXPECT_GT(blockSSE(x, codes, scale, 1.0f), 0.0);

  // Random blocks: the kept candidate has the lower error, ties keep s6.
  std::mt19937 gen(5);
  std::normal_distribution<float> nd;
  int picked4 = 0;
  for (int t = 0; t < 2000; ++t) {
    float y[16];
    for (float &v : y)
      v = nd(gen);
    NVFP4TensorScale tsr = nvfp4TensorScale(p46, 4.0f);
    uint8_t c6[8], s6, c46[8], s46;
    quantizeNVFP4Row(p6, tsr, y, 16, c6, &s6);
    quantizeNVFP4Row(p46, tsr, y, 16, c46, &s46);
    // Rebuild the map-to-4 candidate directly from the rules.
    int32_t amaxBits = 0;
    for (float v : y)
      amaxBits = maxAbsBits(ops, amaxBits, absBits(ops, v));
    float k = nvfp4BlockScaleFactor(ops, tsr.encode);
    int32_t b4 = nvfp4BlockScaleByte(ops, ops.bitcastToF32(amaxBits), k, true);
    float enc4 = nvfp4EncodeFactor(ops, b4, tsr.decode);
    uint8_t c4[8] = {};
    for (int i = 0; i < 16; ++i)
      c4[i / 2] |=
          nvfp4ElementCode(ops, y[i], enc4, b4, ElementRounding::NearestEven, 0)
          << (4 * (i % 2));
    double e6 = blockSSE(y, c6, s6, tsr.decode);
    double e4 = blockSSE(y, c4, static_cast<uint8_t>(b4), tsr.decode);
    if (e4 < e6) {
      ++picked4;
      EXPECT_EQ(s46, b4);
    } else {
      EXPECT_EQ(s46, s6);
      EXPECT_EQ(0, std::memcmp(c46, c6, 8));
    }
  }
  EXPECT_GT(picked4, 100);
  EXPECT_LT(picked4, 1900);
}

std::vector<float> transpose(const std::vector<float> &x, int r, int c) {
  std::vector<float> t(x.size());
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j)
      t[j * r + i] = x[i * c + j];
  return t;
}

void checkTile2DTransposeInvariance(NVFP4Params p) {
  const int R = 48, C = 32;
  std::mt19937 gen(11);
  std::normal_distribution<float> nd;
  std::vector<float> x(R * C);
  for (float &v : x)
    v = nd(gen) * (gen() % 7 == 0 ? 8.0f : 1.0f);
  x[5] = kNaN; // tile (0,0) becomes a NaN tile
  NVFP4TensorScale ts = nvfp4TensorScale(p, nvfp4TensorAmax(x.data(), R * C));
  std::vector<uint8_t> codes(R * C / 2), scales(R * C / 16);
  quantizeNVFP4Tile2D(p, ts, x.data(), R, C, codes.data(), scales.data(), 0, C,
                      1);
  std::vector<float> xt = transpose(x, R, C);
  std::vector<uint8_t> codesT(R * C / 2), scalesT(R * C / 16);
  // Same logical indices for stochastic rounding: element (i, j) of the
  // transpose is element (j, i) of x, index j * C + i.
  quantizeNVFP4Tile2D(p, ts, xt.data(), C, R, codesT.data(), scalesT.data(), 0,
                      1, C);
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) {
      EXPECT_EQ(scales[i * (C / 16) + j / 16], scalesT[j * (R / 16) + i / 16]);
      // The tile's byte repeats over its rows.
      EXPECT_EQ(scales[i * (C / 16) + j / 16],
                scales[(i / 16 * 16) * (C / 16) + j / 16]);
      if (i == 0 && j == 5)
        continue;
      EXPECT_EQ(code(&codes[i * C / 2], j), code(&codesT[j * R / 2], i))
          << i << "," << j;
    }
  }
  EXPECT_EQ(scales[0], 0x7F);
}

TEST(NVFP4, Tile2DTransposeInvariance) {
  NVFP4Params p;
  p.tile2d = true;
  checkTile2DTransposeInvariance(p);
  p.fourOverSix = true;
  checkTile2DTransposeInvariance(p);
  p.rounding = ElementRounding::Stochastic;
  p.seed = 77;
  checkTile2DTransposeInvariance(p);
}

TEST(NVFP4, Tile2DMatchesRowQuantizationWithTileScale) {
  // A tile whose 16 rows share a scale: rows with smaller amax than the tile
  // use the tile's scale, not their own.
  NVFP4Params p;
  NVFP4TensorScale ts{1.0f, 1.0f};
  std::vector<float> x(16 * 16, 0.5f);
  x[0] = 6.0f;
  std::vector<uint8_t> codes(128), scales(16);
  quantizeNVFP4Tile2D(p, ts, x.data(), 16, 16, codes.data(), scales.data(), 0,
                      16, 1);
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(scales[r], 0x38);
    EXPECT_EQ(code(&codes[r * 8], 1), 1); // 0.5 at scale 1
  }
}

} // namespace
