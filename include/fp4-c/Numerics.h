/*===-- fp4-c/Numerics.h - C API of the reference quantizers ------*- C -*-===*\
|*                                                                            *|
|* C entry points over the FP4 numerics library (fp4/Numerics/Reference.h):   *|
|* quantize / dequantize whole [rows, cols] tensors along the last axis, and  *|
|* array versions of the scalar rules, for Python (ctypes) and for tests.     *|
|* Component layouts are described in fp4/Numerics/Reference.h.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4_C_NUMERICS_H
#define FP4_C_NUMERICS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum Fp4Scheme {
  FP4_SCHEME_MXFP4 = 0,
  FP4_SCHEME_NVFP4 = 1,
  FP4_SCHEME_HIF4 = 2,
  FP4_SCHEME_MACRO = 3,
} Fp4Scheme;

typedef enum Fp4ScaleRounding {
  FP4_SCALE_FLOOR = 0,
  FP4_SCALE_CEIL = 1,
  FP4_SCALE_EVEN = 2,
  FP4_SCALE_RCEIL = 3,
} Fp4ScaleRounding;

typedef enum Fp4ElementRounding {
  FP4_ROUND_NEAREST_EVEN = 0,
  FP4_ROUND_HALF_AWAY = 1,
  FP4_ROUND_STOCHASTIC = 2,
} Fp4ElementRounding;

/// Parameters of one quantization scheme. Fields a scheme does not use are
/// ignored. Start from fp4SchemeParamsInit; a zero field means the default
/// noted here, except macroBlock (0 = whole row, as in MacroParams).
typedef struct Fp4SchemeParams {
  int32_t scheme;          /* Fp4Scheme */
  int32_t blockSize;       /* MXFP4 / macro E8M0 block; 0 -> 32; even */
  int32_t scaleRounding;   /* Fp4ScaleRounding (MXFP4, macro) */
  int32_t elementRounding; /* Fp4ElementRounding (MXFP4, NVFP4, macro) */
  uint32_t seed;           /* stochastic rounding seed */
  int32_t fourOverSix;     /* NVFP4: 4/6 candidate selection */
  int32_t tile2d;          /* NVFP4: one scale per 16x16 tile */
  int32_t search;          /* macro: 0 default factor, N > 0 search */
  int64_t macroBlock;      /* macro-block size Bm (init: 256); 0 -> whole row */
  /* Stochastic rounding: element (r, c) has the logical linear index
     indexBase + r * indexRowStride + c * indexColStride; both strides 0
     means (cols, 1), i.e. the row-major index of the tensor itself. */
  int64_t indexBase;
  int64_t indexRowStride;
  int64_t indexColStride;
} Fp4SchemeParams;

/// Fill `params` with the defaults of `scheme` (macroBlock = 256).
void fp4SchemeParamsInit(Fp4SchemeParams *params, int32_t scheme);

/// Quantize x[rows, cols] (row-major, blocks along cols) into
///   codes  uint8 [rows, cols/2]
///   scales MXFP4/macro: uint8 [rows, cols/B]; NVFP4: uint8 [rows, cols/16];
///          HiF4: uint32 [rows, cols/64]
///   aux    macro: uint16 bf16 bits [rows, cols/Bm]; otherwise unused (NULL)
///   tensorScale  NVFP4: receives g_dec; otherwise unused (NULL)
/// Returns 0 on success, non-zero on bad arguments (nothing written).
int fp4ReferenceQuantize(const Fp4SchemeParams *params, const float *x,
                         int64_t rows, int64_t cols, uint8_t *codes,
                         void *scales, void *aux, float *tensorScale);

/// Inverse of fp4ReferenceQuantize; `tensorScale` is read (NVFP4 g_dec).
int fp4ReferenceDequantize(const Fp4SchemeParams *params, const uint8_t *codes,
                           const void *scales, const void *aux,
                           const float *tensorScale, int64_t rows, int64_t cols,
                           float *out);

/// Returns the size in bytes of each component, or non-zero on bad arguments.
int fp4ReferenceComponentSizes(const Fp4SchemeParams *params, int64_t rows,
                               int64_t cols, int64_t *codesBytes,
                               int64_t *scalesBytes, int64_t *auxBytes);

/* Array versions of the scalar rules (out[i] = rule(in[i])). */
void fp4E2M1EncodeArray(const float *v, int64_t n, int32_t elementRounding,
                        uint32_t seed, uint8_t *codes);
void fp4E2M1DecodeArray(const uint8_t *codes, int64_t n, float *out);
void fp4MXScaleByteArray(const float *amax, int64_t n, int32_t scaleRounding,
                         uint8_t *bytes);
void fp4E8M0DecodeArray(const uint8_t *bytes, int64_t n, float *out);
void fp4E4M3EncodeArray(const float *v, int64_t n, uint8_t *bytes);
void fp4E4M3DecodeArray(const uint8_t *bytes, int64_t n, float *out);
void fp4RoundToBF16Array(const float *v, int64_t n, float *out);
/// counterRandom(seed, index) for index = first .. first + n - 1.
void fp4CounterRandomArray(uint32_t seed, int64_t first, int64_t n,
                           uint32_t *out);

/* Block Hadamard rotations (numerics.md 6, fp4/Numerics/Hadamard.h). */

/// Rotates each row of x[rows, cols] along cols: y = x R with
/// R = I (x) (D Hn_size) (x) I_stride, D the seeded signs when `randomized`
/// (else I); R^T when `inverse`. size: a power of two; stride >= 1;
/// size * stride must divide cols. `out` may alias `x`. Returns 0 on
/// success, non-zero on bad arguments (nothing written).
int fp4HadamardRotate(const float *x, int64_t rows, int64_t cols, int64_t size,
                      int64_t stride, int32_t randomized, uint32_t seed,
                      int32_t inverse, float *out);
/// The randomized rotation's sign flags (1 = negative) of Hadamard
/// coordinates 0 .. size-1 under `seed`. Returns non-zero if size < 1.
int fp4HadamardSigns(uint32_t seed, int64_t size, uint8_t *negative);

/* Three-way error decomposition (numerics.md 9,
   fp4/Numerics/ErrorDecomposition.h; docs/ErrorReport.md). */

typedef enum Fp4ElementGrid {
  FP4_GRID_E2M1 = 0, /* MXFP4, NVFP4, macro-scaled MXFP4 */
  FP4_GRID_HIF4 = 1,
} Fp4ElementGrid;

/// Sums over a tensor: absolute energies (divide by norm2 for the relative
/// figures), vector-term energies and cross terms 2<a, b>, counts.
typedef struct Fp4ErrorStats {
  double norm2, total, scale, dead, grid;
  double scaleBias, deadzone, gridNoise;
  double crossScaleBiasDeadzone, crossScaleBiasGridNoise,
      crossDeadzoneGridNoise;
  double maxAbsResidual;
  int64_t elements, clipped, zeroed, blocks, nonFiniteBlocks;
} Fp4ErrorStats;

/// Decomposes the quantization error of x[rows, cols] (blocks of blockSize
/// along cols) given its dequantized values xq[rows, cols] and packed codes
/// codes[rows, cols/2] (the layout of fp4ReferenceQuantize). Optional
/// outputs (NULL to skip): perBlock[rows * cols/blockSize][5] = norm2, total,
/// scale, dead, grid (absolute; NaN for a non-finite block), and the vector
/// terms scaleBias/deadzone/gridNoise[rows, cols]. Returns non-zero on bad
/// arguments (nothing written).
int fp4DecomposeError(int32_t grid, int64_t blockSize, const float *x,
                      const float *xq, const uint8_t *codes, int64_t rows,
                      int64_t cols, Fp4ErrorStats *stats, double *perBlock,
                      double *scaleBias, double *deadzone, double *gridNoise);

/* Outlier fallback and residual correction (numerics.md 7 and 8;
   fp4/Numerics/Outliers.h, Residual.h). Side tensors have the layout of
   fp4.split_outliers: values and indices [rows, cols/blockSize, k], slot j
   of a block holding its element of rank j (larger |x| first, compared as
   bit patterns, ties to the lower index), indices its position in the
   block. Values are exact f32 (the IR stores them rounded to bf16:
   fp4RoundToBF16Array). 1 <= k <= blockSize <= 128, blockSize | cols. */

/// Splits every row of x[rows, cols]: values/indices as above, and
/// rest[rows, cols] = x with the selected elements replaced by +0 (`rest`
/// may alias `x`). Returns 0 on success, non-zero on bad arguments.
int fp4SplitOutliers(const float *x, int64_t rows, int64_t cols,
                     int64_t blockSize, int64_t k, float *rest, float *values,
                     uint8_t *indices);

/// The sparse quantization residual: r = x - dequantize(quantize(x)) with
/// the reference quantizer of `params` (one f32 subtraction per element),
/// then the block top-k of r into values/indices (blockSize 4, k 2: the 2:4
/// pattern). Returns 0 on success, non-zero on bad arguments.
int fp4SparseResidual(const Fp4SchemeParams *params, const float *x,
                      int64_t rows, int64_t cols, int64_t blockSize, int64_t k,
                      float *values, uint8_t *indices);

#ifdef __cplusplus
}
#endif

#endif /* FP4_C_NUMERICS_H */
