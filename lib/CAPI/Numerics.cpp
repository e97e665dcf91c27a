//===- Numerics.cpp - C API of the reference quantizers -------------------===//
//
// Argument checking and tensor loops over fp4/Numerics/Reference.h; scalar
// array entry points over the generic rules with ScalarOps.
//
//===----------------------------------------------------------------------===//

#include "fp4-c/Numerics.h"

#include "fp4/Numerics/Reference.h"
#include "fp4/Numerics/ScalarOps.h"
#include "fp4/Numerics/ScalarRules.h"

#include <cstring>

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

} // extern "C"
