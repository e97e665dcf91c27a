//===- Numerics.cpp - C API of the reference quantizers -------------------===//
//
// Argument checking and tensor loops over fp4/Numerics/Reference.h; scalar
// array entry points over the generic rules with ScalarOps.
//
//===----------------------------------------------------------------------===//

#include "fp4-c/Numerics.h"

#include "fp4/Numerics/ErrorDecomposition.h"
#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/Outliers.h"
#include "fp4/Numerics/Reference.h"
#include "fp4/Numerics/Residual.h"
#include "fp4/Numerics/ScalarOps.h"
#include "fp4/Numerics/ScalarRules.h"

#include <cstring>
#include <vector>

using namespace mlir::fp4::numerics;

namespace {

constexpr ScalarOps ops{};

/// The parameters of a call after validation and defaulting.
struct Resolved {
  int32_t scheme = 0;
  MXFP4Params mx;
  NVFP4Params nv;
  MacroParams macro;
  int64_t blockSize = 32; // elements per byte in `scales`' unit
  int64_t macroBlock = 0; // resolved Bm (macro only)
  int64_t indexBase = 0, rowStride = 0, colStride = 1;
};

bool resolve(const Fp4SchemeParams *p, int64_t rows, int64_t cols,
             Resolved &r) {
  if (!p || rows < 0 || cols <= 0 || cols % 2 != 0)
    return false;
  if (p->scaleRounding < 0 || p->scaleRounding > 3 || p->elementRounding < 0 ||
      p->elementRounding > 2)
    return false;
  r.scheme = p->scheme;
  auto scaleRounding = static_cast<ScaleRounding>(p->scaleRounding);
  auto rounding = static_cast<ElementRounding>(p->elementRounding);
  int64_t b = p->blockSize == 0 ? 32 : p->blockSize;
  r.indexBase = p->indexBase;
  r.rowStride = p->indexRowStride;
  r.colStride = p->indexColStride;
  if (r.rowStride == 0 && r.colStride == 0) {
    r.rowStride = cols;
    r.colStride = 1;
  }
  switch (p->scheme) {
  case FP4_SCHEME_MXFP4:
  case FP4_SCHEME_MACRO:
    if (b <= 0 || b % 2 != 0 || cols % b != 0)
      return false;
    r.mx.blockSize = b;
    r.mx.scaleRounding = scaleRounding;
    r.mx.rounding = rounding;
    r.mx.seed = p->seed;
    r.blockSize = b;
    if (p->scheme == FP4_SCHEME_MACRO) {
      r.macroBlock = p->macroBlock == 0 ? cols : p->macroBlock;
      if (r.macroBlock <= 0 || r.macroBlock % b != 0 ||
          cols % r.macroBlock != 0 || p->search < 0)
        return false;
      r.macro.mx = r.mx;
      r.macro.macroBlock = r.macroBlock;
      r.macro.search = p->search;
    }
    return true;
  case FP4_SCHEME_NVFP4:
    if (cols % kNVFP4BlockSize != 0)
      return false;
    if (p->tile2d && rows % kNVFP4BlockSize != 0)
      return false;
    r.nv.fourOverSix = p->fourOverSix != 0;
    r.nv.tile2d = p->tile2d != 0;
    r.nv.rounding = rounding;
    r.nv.seed = p->seed;
    r.blockSize = kNVFP4BlockSize;
    return true;
  case FP4_SCHEME_HIF4:
    if (cols % kHiF4GroupSize != 0)
      return false;
    r.blockSize = kHiF4GroupSize;
    return true;
  default:
    return false;
  }
}

} // namespace

extern "C" {

void fp4SchemeParamsInit(Fp4SchemeParams *params, int32_t scheme) {
  std::memset(params, 0, sizeof(*params));
  params->scheme = scheme;
  params->blockSize = 32;
  params->scaleRounding = FP4_SCALE_FLOOR;
  params->elementRounding = FP4_ROUND_NEAREST_EVEN;
  params->macroBlock = 256;
}

int fp4ReferenceComponentSizes(const Fp4SchemeParams *params, int64_t rows,
                               int64_t cols, int64_t *codesBytes,
                               int64_t *scalesBytes, int64_t *auxBytes) {
  Resolved r;
  if (!resolve(params, rows, cols, r))
    return 1;
  int64_t scaleElemBytes = r.scheme == FP4_SCHEME_HIF4 ? 4 : 1;
  if (codesBytes)
    *codesBytes = rows * (cols / 2);
  if (scalesBytes)
    *scalesBytes = rows * (cols / r.blockSize) * scaleElemBytes;
  if (auxBytes)
    *auxBytes =
        r.scheme == FP4_SCHEME_MACRO ? rows * (cols / r.macroBlock) * 2 : 0;
  return 0;
}

int fp4ReferenceQuantize(const Fp4SchemeParams *params, const float *x,
                         int64_t rows, int64_t cols, uint8_t *codes,
                         void *scales, void *aux, float *tensorScale) {
  Resolved r;
  if (!resolve(params, rows, cols, r) ||
      (rows > 0 && (!x || !codes || !scales)))
    return 1;
  int64_t codesPerRow = cols / 2;
  int64_t scalesPerRow = cols / r.blockSize;
  switch (r.scheme) {
  case FP4_SCHEME_MXFP4: {
    auto *s = static_cast<uint8_t *>(scales);
    for (int64_t i = 0; i < rows; ++i)
      quantizeMXFP4Row(r.mx, x + i * cols, cols, codes + i * codesPerRow,
                       s + i * scalesPerRow, r.indexBase + i * r.rowStride,
                       r.colStride);
    return 0;
  }
  case FP4_SCHEME_NVFP4: {
    if (!tensorScale)
      return 1;
    auto *s = static_cast<uint8_t *>(scales);
    NVFP4TensorScale ts =
        nvfp4TensorScale(r.nv, nvfp4TensorAmax(x, rows * cols));
    if (r.nv.tile2d) {
      quantizeNVFP4Tile2D(r.nv, ts, x, rows, cols, codes, s, r.indexBase,
                          r.rowStride, r.colStride);
    } else {
      for (int64_t i = 0; i < rows; ++i)
        quantizeNVFP4Row(r.nv, ts, x + i * cols, cols, codes + i * codesPerRow,
                         s + i * scalesPerRow, r.indexBase + i * r.rowStride,
                         r.colStride);
    }
    *tensorScale = ts.decode;
    return 0;
  }
  case FP4_SCHEME_HIF4: {
    auto *s = static_cast<uint32_t *>(scales);
    for (int64_t i = 0; i < rows; ++i)
      quantizeHiF4Row(HiF4Params{}, x + i * cols, cols, codes + i * codesPerRow,
                      s + i * scalesPerRow);
    return 0;
  }
  case FP4_SCHEME_MACRO: {
    if (!aux && rows > 0)
      return 1;
    auto *s = static_cast<uint8_t *>(scales);
    auto *f = static_cast<uint16_t *>(aux);
    int64_t factorsPerRow = cols / r.macroBlock;
    for (int64_t i = 0; i < rows; ++i)
      quantizeMacroRow(r.macro, x + i * cols, cols, codes + i * codesPerRow,
                       s + i * scalesPerRow, f + i * factorsPerRow,
                       r.indexBase + i * r.rowStride, r.colStride);
    return 0;
  }
  default:
    return 1;
  }
}

int fp4ReferenceDequantize(const Fp4SchemeParams *params, const uint8_t *codes,
                           const void *scales, const void *aux,
                           const float *tensorScale, int64_t rows, int64_t cols,
                           float *out) {
  Resolved r;
  if (!resolve(params, rows, cols, r) ||
      (rows > 0 && (!codes || !scales || !out)))
    return 1;
  int64_t codesPerRow = cols / 2;
  int64_t scalesPerRow = cols / r.blockSize;
  switch (r.scheme) {
  case FP4_SCHEME_MXFP4: {
    auto *s = static_cast<const uint8_t *>(scales);
    for (int64_t i = 0; i < rows; ++i)
      dequantizeMXFP4Row(r.mx, codes + i * codesPerRow, s + i * scalesPerRow,
                         cols, out + i * cols);
    return 0;
  }
  case FP4_SCHEME_NVFP4: {
    if (!tensorScale)
      return 1;
    auto *s = static_cast<const uint8_t *>(scales);
    for (int64_t i = 0; i < rows; ++i)
      dequantizeNVFP4Row(codes + i * codesPerRow, s + i * scalesPerRow, cols,
                         *tensorScale, out + i * cols);
    return 0;
  }
  case FP4_SCHEME_HIF4: {
    auto *s = static_cast<const uint32_t *>(scales);
    for (int64_t i = 0; i < rows; ++i)
      dequantizeHiF4Row(HiF4Params{}, codes + i * codesPerRow,
                        s + i * scalesPerRow, cols, out + i * cols);
    return 0;
  }
  case FP4_SCHEME_MACRO: {
    if (!aux && rows > 0)
      return 1;
    auto *s = static_cast<const uint8_t *>(scales);
    auto *f = static_cast<const uint16_t *>(aux);
    int64_t factorsPerRow = cols / r.macroBlock;
    for (int64_t i = 0; i < rows; ++i)
      dequantizeMacroRow(r.macro, codes + i * codesPerRow, s + i * scalesPerRow,
                         f + i * factorsPerRow, cols, out + i * cols);
    return 0;
  }
  default:
    return 1;
  }
}

void fp4E2M1EncodeArray(const float *v, int64_t n, int32_t elementRounding,
                        uint32_t seed, uint8_t *codes) {
  auto mode = static_cast<ElementRounding>(elementRounding);
  for (int64_t i = 0; i < n; ++i) {
    int32_t bits = mode == ElementRounding::Stochastic
                       ? static_cast<int32_t>(elementRandomBits(seed, i))
                       : 0;
    codes[i] = static_cast<uint8_t>(e2m1Encode(ops, v[i], mode, bits));
  }
}

void fp4E2M1DecodeArray(const uint8_t *codes, int64_t n, float *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = e2m1Decode(ops, codes[i]);
}

void fp4MXScaleByteArray(const float *amax, int64_t n, int32_t scaleRounding,
                         uint8_t *bytes) {
  auto rule = static_cast<ScaleRounding>(scaleRounding);
  for (int64_t i = 0; i < n; ++i)
    bytes[i] = static_cast<uint8_t>(mxScaleByte(ops, amax[i], rule));
}

void fp4E8M0DecodeArray(const uint8_t *bytes, int64_t n, float *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = e8m0Decode(ops, bytes[i]);
}

void fp4E4M3EncodeArray(const float *v, int64_t n, uint8_t *bytes) {
  for (int64_t i = 0; i < n; ++i)
    bytes[i] = static_cast<uint8_t>(e4m3EncodeNonNegative(ops, v[i]));
}

void fp4E4M3DecodeArray(const uint8_t *bytes, int64_t n, float *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = e4m3Decode(ops, bytes[i]);
}

void fp4RoundToBF16Array(const float *v, int64_t n, float *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = roundToBF16(ops, v[i]);
}

void fp4CounterRandomArray(uint32_t seed, int64_t first, int64_t n,
                           uint32_t *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = elementRandomBits(seed, first + i);
}

int fp4HadamardRotate(const float *x, int64_t rows, int64_t cols, int64_t size,
                      int64_t stride, int32_t randomized, uint32_t seed,
                      int32_t inverse, float *out) {
  HadamardParams params;
  params.size = size;
  params.stride = stride;
  params.randomized = randomized != 0;
  params.seed = seed;
  params.inverse = inverse != 0;
  if (rows < 0 || cols < 0 || !isValidHadamard(params, cols) ||
      (rows > 0 && cols > 0 && (!x || !out)))
    return 1;
  if (out != x)
    std::memmove(out, x, sizeof(float) * rows * cols);
  hadamardRotateRows(params, out, rows, cols);
  return 0;
}

int fp4HadamardSigns(uint32_t seed, int64_t size, uint8_t *negative) {
  if (size < 1 || !negative)
    return 1;
  std::vector<uint8_t> signs = hadamardSigns(seed, size);
  std::memcpy(negative, signs.data(), signs.size());
  return 0;
}

int fp4DecomposeError(int32_t grid, int64_t blockSize, const float *x,
                      const float *xq, const uint8_t *codes, int64_t rows,
                      int64_t cols, Fp4ErrorStats *stats, double *perBlock,
                      double *scaleBias, double *deadzone, double *gridNoise) {
  if ((grid != FP4_GRID_E2M1 && grid != FP4_GRID_HIF4) || blockSize <= 0 ||
      blockSize % 2 != 0 || rows < 0 || cols < 0 || cols % blockSize != 0 ||
      !stats || (rows * cols > 0 && (!x || !xq || !codes)))
    return 1;
  ElementGrid g = grid == FP4_GRID_E2M1 ? ElementGrid::E2M1 : ElementGrid::HiF4;
  ErrorStats sum;
  int64_t blocksPerRow = cols / blockSize;
  std::vector<ErrorEnergies> blocks(perBlock ? blocksPerRow : 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = r * cols;
    decomposeRow(g, blockSize, x + at, xq + at, cols, codes + r * (cols / 2),
                 sum, perBlock ? blocks.data() : nullptr,
                 scaleBias ? scaleBias + at : nullptr,
                 deadzone ? deadzone + at : nullptr,
                 gridNoise ? gridNoise + at : nullptr);
    for (int64_t b = 0; perBlock && b < blocksPerRow; ++b) {
      double *out = perBlock + 5 * (r * blocksPerRow + b);
      out[0] = blocks[b].norm2;
      out[1] = blocks[b].total;
      out[2] = blocks[b].scale();
      out[3] = blocks[b].dead;
      out[4] = blocks[b].grid;
    }
  }
  *stats = Fp4ErrorStats{sum.energies.norm2,
                         sum.energies.total,
                         sum.energies.scale(),
                         sum.energies.dead,
                         sum.energies.grid,
                         sum.terms.scaleBias,
                         sum.terms.deadzone,
                         sum.terms.gridNoise,
                         sum.terms.crossScaleBiasDeadzone,
                         sum.terms.crossScaleBiasGridNoise,
                         sum.terms.crossDeadzoneGridNoise,
                         sum.terms.maxAbsResidual,
                         sum.elements,
                         sum.clipped,
                         sum.zeroed,
                         sum.blocks,
                         sum.nonFiniteBlocks};
  return 0;
}

static bool validSparseBlocks(int64_t rows, int64_t cols, int64_t blockSize,
                              int64_t k) {
  return rows >= 0 && cols > 0 && blockSize >= 1 &&
         blockSize <= kMaxSparseBlock && k >= 1 && k <= blockSize &&
         cols % blockSize == 0;
}

int fp4SplitOutliers(const float *x, int64_t rows, int64_t cols,
                     int64_t blockSize, int64_t k, float *rest, float *values,
                     uint8_t *indices) {
  if (!validSparseBlocks(rows, cols, blockSize, k) ||
      (rows > 0 && (!x || !rest || !values || !indices)))
    return 1;
  int64_t sideCols = cols / blockSize * k;
  std::vector<int32_t> index(sideCols);
  for (int64_t r = 0; r < rows; ++r) {
    splitOutliersRow(x + r * cols, cols, blockSize, k, rest + r * cols,
                     values + r * sideCols, index.data());
    for (int64_t j = 0; j < sideCols; ++j)
      indices[r * sideCols + j] = static_cast<uint8_t>(index[j]);
  }
  return 0;
}

int fp4SparseResidual(const Fp4SchemeParams *params, const float *x,
                      int64_t rows, int64_t cols, int64_t blockSize, int64_t k,
                      float *values, uint8_t *indices) {
  int64_t codesBytes = 0, scalesBytes = 0, auxBytes = 0;
  if (!validSparseBlocks(rows, cols, blockSize, k) ||
      (rows > 0 && (!x || !values || !indices)) ||
      fp4ReferenceComponentSizes(params, rows, cols, &codesBytes, &scalesBytes,
                                 &auxBytes) != 0)
    return 1;
  std::vector<uint8_t> codes(codesBytes), scales(scalesBytes), aux(auxBytes);
  std::vector<float> deq(rows * cols);
  float tensorScale = 1.0f;
  if (rows > 0 &&
      (fp4ReferenceQuantize(params, x, rows, cols, codes.data(), scales.data(),
                            aux.data(), &tensorScale) != 0 ||
       fp4ReferenceDequantize(params, codes.data(), scales.data(), aux.data(),
                              &tensorScale, rows, cols, deq.data()) != 0))
    return 1;
  int64_t sideCols = cols / blockSize * k;
  std::vector<int32_t> index(sideCols);
  for (int64_t r = 0; r < rows; ++r) {
    residualRow(x + r * cols, deq.data() + r * cols, cols, blockSize, k,
                values + r * sideCols, index.data());
    for (int64_t j = 0; j < sideCols; ++j)
      indices[r * sideCols + j] = static_cast<uint8_t>(index[j]);
  }
  return 0;
}

} // extern "C"
