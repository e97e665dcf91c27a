//===- Reference.cpp - Block-level reference quantizers -------------------===//
//
// Row loops around the generic scalar rules (ScalarRules.h) run with
// ScalarOps. No arithmetic on values happens here except through the rules,
// so this file and the emitted IR cannot drift apart.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/Reference.h"

#include "fp4/Numerics/ScalarOps.h"
#include "fp4/Numerics/ScalarRules.h"

#include <cassert>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

constexpr ScalarOps ops{};

/// Random bits of the element with logical linear index `index`, if the
/// rounding mode reads them.
int32_t roundingBits(ElementRounding mode, uint32_t seed, int64_t index) {
  if (mode != ElementRounding::Stochastic)
    return 0;
  return static_cast<int32_t>(elementRandomBits(seed, index));
}

/// Store code `code` as element j of a packed nibble array. Elements must be
/// stored in increasing order: the even one initialises the byte.
void putCode(uint8_t *codes, int64_t j, int32_t code) {
  uint8_t nibble = static_cast<uint8_t>(code & 0xF);
  if ((j & 1) == 0)
    codes[j >> 1] = nibble;
  else
    codes[j >> 1] = static_cast<uint8_t>(codes[j >> 1] | (nibble << 4));
}

int32_t getCode(const uint8_t *codes, int64_t j) {
  return (codes[j >> 1] >> ((j & 1) * 4)) & 0xF;
}

/// NaN-propagating max |x| of x[0..n) (see F32Bits.h).
float blockAmax(const float *x, int64_t n) {
  int32_t bits = 0;
  for (int64_t i = 0; i < n; ++i)
    bits = maxAbsBits(ops, bits, absBits(ops, x[i]));
  return ops.bitcastToF32(bits);
}

/// One MXFP4 block: scale byte from amax, then the element codes.
/// `codes` points at the row's packed codes, `j0` is the block's first
/// element within the row.
uint8_t quantizeMXFP4Block(const MXFP4Params &params, const float *y,
                           uint8_t *codes, int64_t j0, int64_t indexBase,
                           int64_t indexStride) {
  int64_t b = params.blockSize;
  int32_t byte = mxScaleByte(ops, blockAmax(y, b), params.scaleRounding);
  float factor = e8m0QuantizeFactor(ops, byte);
  for (int64_t i = 0; i < b; ++i) {
    int64_t j = j0 + i;
    int32_t bits =
        roundingBits(params.rounding, params.seed, indexBase + j * indexStride);
    putCode(codes, j,
            mxfp4ElementCode(ops, y[i], factor, params.rounding, bits));
  }
  return static_cast<uint8_t>(byte);
}

} // namespace

uint32_t mlir::fp4::numerics::elementRandomBits(uint32_t seed, int64_t index) {
  uint64_t u = static_cast<uint64_t>(index);
  return static_cast<uint32_t>(
      counterRandom(ops, static_cast<int32_t>(seed),
                    static_cast<int32_t>(static_cast<uint32_t>(u)),
                    static_cast<int32_t>(static_cast<uint32_t>(u >> 32))));
}

//===----------------------------------------------------------------------===//
// MXFP4
//===----------------------------------------------------------------------===//

void mlir::fp4::numerics::quantizeMXFP4Row(const MXFP4Params &params,
                                           const float *x, int64_t n,
                                           uint8_t *codes, uint8_t *scales,
                                           int64_t indexBase,
                                           int64_t indexStride) {
  int64_t b = params.blockSize;
  assert(b > 0 && b % 2 == 0 && n % b == 0 && "bad MXFP4 block size");
  for (int64_t j0 = 0; j0 < n; j0 += b)
    scales[j0 / b] =
        quantizeMXFP4Block(params, x + j0, codes, j0, indexBase, indexStride);
}

void mlir::fp4::numerics::dequantizeMXFP4Row(const MXFP4Params &params,
                                             const uint8_t *codes,
                                             const uint8_t *scales, int64_t n,
                                             float *out) {
  int64_t b = params.blockSize;
  assert(b > 0 && n % b == 0 && "bad MXFP4 block size");
  for (int64_t j = 0; j < n; ++j)
    out[j] = mxfp4Dequant(ops, getCode(codes, j), scales[j / b]);
}

//===----------------------------------------------------------------------===//
// NVFP4
//===----------------------------------------------------------------------===//

float mlir::fp4::numerics::nvfp4TensorAmax(const float *x, int64_t count) {
  int32_t bits = 0;
  for (int64_t i = 0; i < count; ++i) {
    int32_t a = absBits(ops, x[i]);
    if (!isNonFiniteAbsBits(ops, a))
      bits = maxAbsBits(ops, bits, a);
  }
  return ops.bitcastToF32(bits);
}

NVFP4TensorScale
mlir::fp4::numerics::nvfp4TensorScale(const NVFP4Params &params,
                                      float tensorAmax) {
  NVFP4TensorScale s;
  s.encode = nvfp4GlobalEncodeScale(ops, tensorAmax, params.fourOverSix);
  s.decode = nvfp4GlobalDecodeScale(ops, s.encode);
  return s;
}

namespace {

/// An NVFP4 block of `count` elements given by pointers (a 1x16 row segment
/// or a 16x16 tile), quantized with one scale.
struct NVFP4Block {
  const float *x[256];
  int32_t bits[256];
  int32_t codes[256];
  int64_t count = 0;
};

/// Codes of the block under scale byte `byte`.
void nvfp4BlockCodes(const NVFP4Params &params, NVFP4TensorScale ts,
                     const NVFP4Block &blk, int32_t byte, int32_t *codes) {
  float enc = nvfp4EncodeFactor(ops, byte, ts.decode);
  for (int64_t i = 0; i < blk.count; ++i)
    codes[i] = nvfp4ElementCode(ops, *blk.x[i], enc, byte, params.rounding,
                                blk.bits[i]);
}

/// Squared error of element i under (codes, byte).
double nvfp4ElementError(NVFP4TensorScale ts, const NVFP4Block &blk,
                         const int32_t *codes, int32_t byte, int64_t i) {
  return squaredErrorF64(ops, *blk.x[i],
                         nvfp4Dequant(ops, codes[i], byte, ts.decode));
}

/// Sum of squared errors in element order.
double nvfp4SequentialSSE(NVFP4TensorScale ts, const NVFP4Block &blk,
                          const int32_t *codes, int32_t byte) {
  double sse = 0.0;
  for (int64_t i = 0; i < blk.count; ++i)
    sse = ops.addd(sse, nvfp4ElementError(ts, blk, codes, byte, i));
  return sse;
}

/// Sum of squared errors of a 16x16 tile (element (r, c) at r*16 + c) in an
/// order that is symmetric under transposition: for a <= b, add e(a,a), or
/// (e(a,b) + e(b,a)); f64 addition is commutative, so the transposed tile
/// gives the same bits.
double nvfp4SymmetricTileSSE(NVFP4TensorScale ts, const NVFP4Block &blk,
                             const int32_t *codes, int32_t byte) {
  double sse = 0.0;
  for (int64_t a = 0; a < 16; ++a) {
    sse = ops.addd(sse, nvfp4ElementError(ts, blk, codes, byte, a * 16 + a));
    for (int64_t b = a + 1; b < 16; ++b)
      sse = ops.addd(
          sse, ops.addd(nvfp4ElementError(ts, blk, codes, byte, a * 16 + b),
                        nvfp4ElementError(ts, blk, codes, byte, b * 16 + a)));
  }
  return sse;
}

/// Scale byte and codes of a block (four_over_six choice included).
int32_t quantizeNVFP4Block(const NVFP4Params &params, NVFP4TensorScale ts,
                           NVFP4Block &blk, bool symmetricTile) {
  int32_t amaxBits = 0;
  for (int64_t i = 0; i < blk.count; ++i)
    amaxBits = maxAbsBits(ops, amaxBits, absBits(ops, *blk.x[i]));
  float amax = ops.bitcastToF32(amaxBits);
  float k = nvfp4BlockScaleFactor(ops, ts.encode);
  int32_t byte = nvfp4BlockScaleByte(ops, amax, k, /*mapToFour=*/false);
  nvfp4BlockCodes(params, ts, blk, byte, blk.codes);
  if (!params.fourOverSix)
    return byte;
  int32_t byte4 = nvfp4BlockScaleByte(ops, amax, k, /*mapToFour=*/true);
  int32_t codes4[256];
  nvfp4BlockCodes(params, ts, blk, byte4, codes4);
  auto sse = symmetricTile ? nvfp4SymmetricTileSSE : nvfp4SequentialSSE;
  double sse6 = sse(ts, blk, blk.codes, byte);
  double sse4 = sse(ts, blk, codes4, byte4);
  if (!ops.cmpd(FPred::OLT, sse4, sse6))
    return byte;
  for (int64_t i = 0; i < blk.count; ++i)
    blk.codes[i] = codes4[i];
  return byte4;
}

} // namespace

void mlir::fp4::numerics::quantizeNVFP4Row(const NVFP4Params &params,
                                           NVFP4TensorScale tensorScale,
                                           const float *x, int64_t n,
                                           uint8_t *codes, uint8_t *scales,
                                           int64_t indexBase,
                                           int64_t indexStride) {
  assert(n % kNVFP4BlockSize == 0 && "NVFP4 row not a multiple of 16");
  NVFP4Block blk;
  blk.count = kNVFP4BlockSize;
  for (int64_t j0 = 0; j0 < n; j0 += kNVFP4BlockSize) {
    for (int64_t i = 0; i < kNVFP4BlockSize; ++i) {
      blk.x[i] = x + j0 + i;
      blk.bits[i] = roundingBits(params.rounding, params.seed,
                                 indexBase + (j0 + i) * indexStride);
    }
    int32_t byte = quantizeNVFP4Block(params, tensorScale, blk,
                                      /*symmetricTile=*/false);
    scales[j0 / kNVFP4BlockSize] = static_cast<uint8_t>(byte);
    for (int64_t i = 0; i < kNVFP4BlockSize; ++i)
      putCode(codes, j0 + i, blk.codes[i]);
  }
}

void mlir::fp4::numerics::quantizeNVFP4Tile2D(
    const NVFP4Params &params, NVFP4TensorScale tensorScale, const float *x,
    int64_t rows, int64_t cols, uint8_t *codes, uint8_t *scales,
    int64_t indexBase, int64_t indexRowStride, int64_t indexColStride) {
  constexpr int64_t t = kNVFP4BlockSize;
  assert(rows % t == 0 && cols % t == 0 && "NVFP4 tiles need multiples of 16");
  NVFP4Block blk;
  blk.count = t * t;
  for (int64_t r0 = 0; r0 < rows; r0 += t) {
    for (int64_t c0 = 0; c0 < cols; c0 += t) {
      for (int64_t r = 0; r < t; ++r) {
        for (int64_t c = 0; c < t; ++c) {
          blk.x[r * t + c] = x + (r0 + r) * cols + (c0 + c);
          blk.bits[r * t + c] =
              roundingBits(params.rounding, params.seed,
                           indexBase + (r0 + r) * indexRowStride +
                               (c0 + c) * indexColStride);
        }
      }
      int32_t byte = quantizeNVFP4Block(params, tensorScale, blk,
                                        /*symmetricTile=*/true);
      for (int64_t r = 0; r < t; ++r) {
        uint8_t *rowCodes = codes + (r0 + r) * (cols / 2);
        scales[(r0 + r) * (cols / t) + c0 / t] = static_cast<uint8_t>(byte);
        for (int64_t c = 0; c < t; ++c)
          putCode(rowCodes, c0 + c, blk.codes[r * t + c]);
      }
    }
  }
}

void mlir::fp4::numerics::dequantizeNVFP4Row(const uint8_t *codes,
                                             const uint8_t *scales, int64_t n,
                                             float tensorDecodeScale,
                                             float *out) {
  for (int64_t j = 0; j < n; ++j)
    out[j] = nvfp4Dequant(ops, getCode(codes, j), scales[j / kNVFP4BlockSize],
                          tensorDecodeScale);
}

//===----------------------------------------------------------------------===//
// HiF4
//===----------------------------------------------------------------------===//

void mlir::fp4::numerics::quantizeHiF4Row(const HiF4Params &, const float *x,
                                          int64_t n, uint8_t *codes,
                                          uint32_t *meta) {
  assert(n % kHiF4GroupSize == 0 && "HiF4 row not a multiple of 64");
  for (int64_t g0 = 0; g0 < n; g0 += kHiF4GroupSize) {
    const float *g = x + g0;
    int32_t byte = hif4ScaleByte(ops, blockAmax(g, kHiF4GroupSize));
    float rec = hif4Reciprocal(ops, e6m2Decode(ops, byte));
    // A NaN group has rec = NaN: every level compare is false, so its word
    // is exactly 0xFF.
    uint32_t word = static_cast<uint32_t>(byte);
    for (int64_t i = 0; i < kHiF4GroupSize / kHiF4Level2Size; ++i) {
      const float *g8 = g + i * kHiF4Level2Size;
      int32_t l2 = hif4Level2Bit(ops, blockAmax(g8, kHiF4Level2Size), rec);
      word |= static_cast<uint32_t>(l2) << (8 + i);
      for (int64_t h = 0; h < 2; ++h) {
        int64_t j = 2 * i + h;
        const float *g4 = g8 + h * kHiF4Level3Size;
        int32_t l3 =
            hif4Level3Bit(ops, blockAmax(g4, kHiF4Level3Size), rec, l2);
        word |= static_cast<uint32_t>(l3) << (16 + j);
        float levelScale = hif4LevelScale(ops, l2, l3);
        for (int64_t e = 0; e < kHiF4Level3Size; ++e)
          putCode(codes, g0 + j * kHiF4Level3Size + e,
                  hif4ElementCode(ops, g4[e], rec, levelScale));
      }
    }
    meta[g0 / kHiF4GroupSize] = word;
  }
}

void mlir::fp4::numerics::dequantizeHiF4Row(const HiF4Params &,
                                            const uint8_t *codes,
                                            const uint32_t *meta, int64_t n,
                                            float *out) {
  for (int64_t j = 0; j < n; ++j) {
    uint32_t word = meta[j / kHiF4GroupSize];
    int64_t k = j % kHiF4GroupSize;
    int32_t l2 = static_cast<int32_t>((word >> (8 + k / kHiF4Level2Size)) & 1);
    int32_t l3 = static_cast<int32_t>((word >> (16 + k / kHiF4Level3Size)) & 1);
    float sf = e6m2Decode(ops, static_cast<int32_t>(word & 0xFF));
    out[j] =
        hif4Dequant(ops, getCode(codes, j), hif4LevelScale(ops, l2, l3), sf);
  }
}

//===----------------------------------------------------------------------===//
// Macro-block scaling
//===----------------------------------------------------------------------===//

namespace {

/// Quantize one macro-block x[0..bm) (row elements j0..j0+bm) with factor m
/// into codes (row-relative) and scales (macro-block relative); returns the
/// f64 sum of squared errors if `wantSSE`.
double quantizeMacroBlockWith(const MacroParams &params, float m,
                              const float *x, int64_t bm, int64_t j0,
                              uint8_t *codes, uint8_t *scales,
                              int64_t indexBase, int64_t indexStride, float *y,
                              bool wantSSE) {
  int64_t b = params.mx.blockSize;
  for (int64_t i = 0; i < bm; ++i)
    y[i] = macroScaledInput(ops, x[i], m);
  for (int64_t i0 = 0; i0 < bm; i0 += b)
    scales[i0 / b] = quantizeMXFP4Block(params.mx, y + i0, codes, j0 + i0,
                                        indexBase, indexStride);
  if (!wantSSE)
    return 0.0;
  double sse = 0.0;
  for (int64_t i = 0; i < bm; ++i) {
    float deq = macroDequant(ops, getCode(codes, j0 + i), scales[i / b], m);
    sse = ops.addd(sse, squaredErrorF64(ops, x[i], deq));
  }
  return sse;
}

} // namespace

void mlir::fp4::numerics::quantizeMacroRow(const MacroParams &params,
                                           const float *x, int64_t n,
                                           uint8_t *codes, uint8_t *scales,
                                           uint16_t *factors, int64_t indexBase,
                                           int64_t indexStride) {
  int64_t b = params.mx.blockSize;
  int64_t bm = params.macroBlock == 0 ? n : params.macroBlock;
  assert(b > 0 && b % 2 == 0 && bm % b == 0 && n % bm == 0 &&
         "bad macro-block size");
  std::vector<float> y(bm);
  std::vector<uint8_t> bestCodes, bestScales;
  if (params.search > 0) {
    bestCodes.resize(bm / 2);
    bestScales.resize(bm / b);
  }
  for (int64_t j0 = 0; j0 < n; j0 += bm) {
    const float *xm = x + j0;
    uint8_t *sm = scales + j0 / b;
    float m;
    if (params.search <= 0) {
      m = macroFactorFromAmax(ops, blockAmax(xm, bm));
      quantizeMacroBlockWith(params, m, xm, bm, j0, codes, sm, indexBase,
                             indexStride, y.data(), /*wantSSE=*/false);
    } else {
      // Candidates write into the output row; the best so far is kept aside.
      double bestSSE = 0.0;
      float bestM = 1.0f;
      for (int32_t j = 0; j < params.search; ++j) {
        float mj = macroSearchFactor(ops, j, params.search);
        double sse = quantizeMacroBlockWith(params, mj, xm, bm, j0, codes, sm,
                                            indexBase, indexStride, y.data(),
                                            /*wantSSE=*/true);
        if (j == 0 || ops.cmpd(FPred::OLT, sse, bestSSE)) {
          bestSSE = sse;
          bestM = mj;
          for (int64_t i = 0; i < bm / 2; ++i)
            bestCodes[i] = codes[j0 / 2 + i];
          for (int64_t i = 0; i < bm / b; ++i)
            bestScales[i] = sm[i];
        }
      }
      m = bestM;
      for (int64_t i = 0; i < bm / 2; ++i)
        codes[j0 / 2 + i] = bestCodes[i];
      for (int64_t i = 0; i < bm / b; ++i)
        sm[i] = bestScales[i];
    }
    factors[j0 / bm] = static_cast<uint16_t>(bf16StorageBits(ops, m));
  }
}

void mlir::fp4::numerics::dequantizeMacroRow(const MacroParams &params,
                                             const uint8_t *codes,
                                             const uint8_t *scales,
                                             const uint16_t *factors, int64_t n,
                                             float *out) {
  int64_t b = params.mx.blockSize;
  int64_t bm = params.macroBlock == 0 ? n : params.macroBlock;
  for (int64_t j = 0; j < n; ++j) {
    float m = bf16Decode(ops, static_cast<int32_t>(factors[j / bm]));
    out[j] = macroDequant(ops, getCode(codes, j), scales[j / b], m);
  }
}
