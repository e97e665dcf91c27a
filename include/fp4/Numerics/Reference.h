//===- Reference.h - Block-level reference quantizers -----------*- C++ -*-===//
//
// The C++ reference quantizers of numerics.md sections 2-5, built only from
// the generic scalar rules instantiated with ScalarOps, so they are the same
// computation the lowering emits. They work on one contiguous row at a time
// (the block axis is the last, contiguous axis); rows are independent, except
// that NVFP4 takes the tensor scale as an input, so callers may parallelize
// over rows.
//
// Preconditions (checked with assert; the C API checks them and returns an
// error): n is a multiple of the block size (of the macro-block size for
// macro scaling, of 64 for HiF4, of 16 for NVFP4); block sizes are even.
//
// Stochastic rounding: element j of a row has the logical linear index
// indexBase + j * indexStride (its index in the row-major logical tensor, so
// a column-wise quantization passes stride = row length of the logical
// tensor). Its random bits are counterRandom(seed, index).
//
//===----------------------------------------------------------------------===//
//
// Component layout (draft of the docs/ABI.md section). A tensor [rows, n]
// quantized along its last axis is stored as:
//
//   all schemes  codes    uint8  [rows, n/2]   two E2M1 (or HiF4) codes per
//                                              byte, element 2k in the low
//                                              nibble, 2k+1 in the high one;
//                                              code = sign << 3 | magnitude.
//   MXFP4        scales   uint8  [rows, n/B]   E8M0 bytes, B = block size
//                                              (32); 0xFF = NaN block.
//   NVFP4        scales   uint8  [rows, n/16]  E4M3 bytes; 0x7F = NaN block.
//                tensor   f32    [1]           g_dec (decode scale).
//                With 16x16 tiles (tile2d) the tile's byte is repeated in
//                each of the tile's 16 rows, so the layout and the dequantizer
//                are unchanged.
//   HiF4         meta     uint32 [rows, n/64]  bits 0-7 E6M2 byte (0xFF =
//                                              NaN group), bits 8-15 level-2
//                                              bits (bit 8+i: 8-block i has
//                                              l2 = 2), bits 16-31 level-3
//                                              bits (bit 16+j: 4-block j).
//   Macro        scales   uint8  [rows, n/B]   E8M0 bytes of y = x/m blocks.
//                factors  uint16 [rows, n/Bm]  bf16 bits of m in [1, 2).
//
// All arrays are row-major and densely packed; multi-byte values are
// little-endian (host order).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_REFERENCE_H
#define FP4_NUMERICS_REFERENCE_H

#include "fp4/Numerics/RoundingModes.h"

#include <cstdint>

namespace mlir::fp4::numerics {

struct MXFP4Params {
  int64_t blockSize = 32;
  ScaleRounding scaleRounding = ScaleRounding::Floor;
  ElementRounding rounding = ElementRounding::NearestEven;
  uint32_t seed = 0;
};

struct NVFP4Params {
  bool fourOverSix = false;
  /// 16x16 tiles (one scale per tile); only meaningful for the matrix entry
  /// point quantizeNVFP4Tile2D.
  bool tile2d = false;
  ElementRounding rounding = ElementRounding::NearestEven;
  uint32_t seed = 0;
};

struct HiF4Params {};

struct MacroParams {
  MXFP4Params mx;
  /// Macro-block size Bm, a multiple of mx.blockSize; 0 = the whole row.
  int64_t macroBlock = 256;
  /// 0: default factor from the macro amax; N > 0: search N candidates.
  int32_t search = 0;
};

/// The NVFP4 per-tensor scales.
struct NVFP4TensorScale {
  float encode = 1.0f; ///< g_enc
  float decode = 1.0f; ///< g_dec, the stored per-tensor scale
};

/// counterRandom(seed, index) for a 64-bit logical linear index: the random
/// bits stochastic rounding uses for that element.
uint32_t elementRandomBits(uint32_t seed, int64_t index);

//===----------------------------------------------------------------------===//
// MXFP4
//===----------------------------------------------------------------------===//

/// Quantize x[0..n) into codes[n/2] and E8M0 scales[n/blockSize].
void quantizeMXFP4Row(const MXFP4Params &params, const float *x, int64_t n,
                      uint8_t *codes, uint8_t *scales, int64_t indexBase = 0,
                      int64_t indexStride = 1);
void dequantizeMXFP4Row(const MXFP4Params &params, const uint8_t *codes,
                        const uint8_t *scales, int64_t n, float *out);

//===----------------------------------------------------------------------===//
// NVFP4
//===----------------------------------------------------------------------===//

/// max |x| over the finite values of x[0..count) (0 if there are none).
float nvfp4TensorAmax(const float *x, int64_t count);
/// g_enc and g_dec from the tensor amax.
NVFP4TensorScale nvfp4TensorScale(const NVFP4Params &params, float tensorAmax);

/// Quantize one row with 1x16 blocks into codes[n/2] and E4M3 scales[n/16].
void quantizeNVFP4Row(const NVFP4Params &params, NVFP4TensorScale tensorScale,
                      const float *x, int64_t n, uint8_t *codes,
                      uint8_t *scales, int64_t indexBase = 0,
                      int64_t indexStride = 1);
/// Quantize a row-major [rows, cols] matrix (both multiples of 16) with one
/// scale per 16x16 tile, written to scales[rows, cols/16] (repeated over the
/// tile's rows). Quantizing the transpose gives the transposed codes and
/// scales bit for bit, four_over_six included: a tile's sum of squared errors
/// is accumulated in a transpose-symmetric order (see Reference.cpp).
/// Element (r, c) has the stochastic-rounding index
/// indexBase + r * indexRowStride + c * indexColStride.
void quantizeNVFP4Tile2D(const NVFP4Params &params,
                         NVFP4TensorScale tensorScale, const float *x,
                         int64_t rows, int64_t cols, uint8_t *codes,
                         uint8_t *scales, int64_t indexBase,
                         int64_t indexRowStride, int64_t indexColStride);
void dequantizeNVFP4Row(const uint8_t *codes, const uint8_t *scales, int64_t n,
                        float tensorDecodeScale, float *out);

//===----------------------------------------------------------------------===//
// HiF4
//===----------------------------------------------------------------------===//

/// Quantize x[0..n) (n a multiple of 64) into codes[n/2] and meta[n/64].
void quantizeHiF4Row(const HiF4Params &params, const float *x, int64_t n,
                     uint8_t *codes, uint32_t *meta);
void dequantizeHiF4Row(const HiF4Params &params, const uint8_t *codes,
                       const uint32_t *meta, int64_t n, float *out);

//===----------------------------------------------------------------------===//
// Macro-block scaling
//===----------------------------------------------------------------------===//

/// Quantize x[0..n) into codes[n/2], E8M0 scales[n/B] and bf16 factor bits
/// factors[n/Bm] (Bm = n when params.macroBlock == 0).
void quantizeMacroRow(const MacroParams &params, const float *x, int64_t n,
                      uint8_t *codes, uint8_t *scales, uint16_t *factors,
                      int64_t indexBase = 0, int64_t indexStride = 1);
void dequantizeMacroRow(const MacroParams &params, const uint8_t *codes,
                        const uint8_t *scales, const uint16_t *factors,
                        int64_t n, float *out);

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_REFERENCE_H
