//===- ErrorDecomposition.h - Three-way quantization error split -*- C++
//-*-===//
//
// numerics.md section 9. For a block with ideal real scale s* and the values
// x' the format actually produces (x' = X * Q(x / X) with the stored scale X):
//
//   x - x' =  [ s*·Q(x/s*) - x' ]                 scale bias
//           + [ x - s*·Q(x/s*) ] · 1{dead}         deadzone
//           + [ x - s*·Q(x/s*) ] · 1{not dead}     grid noise
//
// and the energy attribution, additive by construction:
//   E_total = ||x - x'||²,  E_dead = ||x · 1{dead}||²,
//   E_grid  = ||(x - s*·Q(x/s*)) · 1{not dead}||²,
//   E_scale = E_total - E_dead - E_grid.
//
// Definitions (docs/ErrorReport.md):
// - A block is the scheme's finest scale block (getBlockSize(): 32 for
//   MXFP4 and macro-scaled MXFP4, 16 for NVFP4, the 4-element sub-block for
//   HiF4, whose finest actual scale is sf·l2·l3).
// - The ideal grid is the element grid of the format: E2M1 {0, .5, ..., 6}
//   rounded to nearest, ties to the even code; HiF4 {0, .25, ..., 1.75}
//   rounded half up (the format's own rule). Q saturates at the grid max g.
// - s* = amax(block) / g rounded to 24 significant bits (f32 precision,
//   unbounded exponent). Then s*·Q(.) has at most 27 significant bits and
//   every threshold comparison |x| vs t·s* is exact in f64, so Q(x/s*) is
//   evaluated without rounding and the vector terms are exact f64 numbers:
//   they sum to x - x' with no rounding at all (maxAbsResidual is 0; the
//   test suite checks it). The relative change of s* is below 2^-24.
// - dead = {Q(x/s*) = 0}: |x| <= s*/4 for E2M1 (the tie at s*/4 rounds to
//   0), |x| < s*/8 for HiF4 (the tie rounds up).
// - clipped: the element got the largest code magnitude (7) and |x| > |x'|,
//   i.e. |x/X| > g: it saturated. zeroed: x != 0 and x' == 0.
// - A block holding NaN or ±Inf is skipped (counted in nonFiniteBlocks);
//   energies are f64 sums in element order within a block, block order
//   across blocks.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_ERRORDECOMPOSITION_H
#define FP4_NUMERICS_ERRORDECOMPOSITION_H

#include <cmath>
#include <cstdint>
#include <limits>

namespace mlir::fp4::numerics {

/// The element grid of the ideal-scale quantizer.
enum class ElementGrid {
  E2M1, ///< {0, 0.5, 1, 1.5, 2, 3, 4, 6}, nearest, ties to the even code.
  HiF4, ///< {0, 0.25, ..., 1.75}, nearest, ties up (away from zero).
};

/// Largest grid magnitude g.
inline double gridMax(ElementGrid grid) {
  return grid == ElementGrid::E2M1 ? 6.0 : 1.75;
}

/// s* = amax / g rounded to nearest-even at 24 significant bits; 0 for
/// amax = 0.
inline double idealScale(ElementGrid grid, double amax) {
  double s = amax / gridMax(grid);
  if (s == 0.0 || !std::isfinite(s))
    return s;
  int exponent;
  double mantissa = std::frexp(s, &exponent); // [0.5, 1)
  // nearbyint rounds to nearest even in the default rounding mode.
  return std::ldexp(std::nearbyint(std::ldexp(mantissa, 24)), exponent - 24);
}

/// Q(|x| / s) for s > 0: the grid magnitude, from exact comparisons of |x|
/// with the midpoints times s (each midpoint has at most 4 significant bits,
/// s 24, so every product is exact).
inline double idealGridMagnitude(ElementGrid grid, double absX, double s) {
  if (grid == ElementGrid::E2M1) {
    // ">" where the tie goes to the lower (even) code, ">=" to the upper.
    if (absX <= 0.25 * s)
      return 0.0;
    if (absX < 0.75 * s)
      return 0.5;
    if (absX <= 1.25 * s)
      return 1.0;
    if (absX < 1.75 * s)
      return 1.5;
    if (absX <= 2.5 * s)
      return 2.0;
    if (absX < 3.5 * s)
      return 3.0;
    if (absX <= 5.0 * s)
      return 4.0;
    return 6.0;
  }
  // HiF4: m = floor(4|t| + 1/2) saturated at 7, value m/4: m >= k iff
  // |x| >= (2k - 1)/8 · s.
  int m = 0;
  while (m < 7 && absX >= (2.0 * (m + 1) - 1.0) / 8.0 * s)
    ++m;
  return m / 4.0;
}

/// Energies of a block or tensor (absolute; divide by norm2 for the
/// relative figures).
struct ErrorEnergies {
  double norm2 = 0; ///< ||x||²
  double total = 0; ///< ||x - x'||²
  double dead = 0;  ///< ||x · 1{dead}||²
  double grid = 0;  ///< ||(x - s*·Q(x/s*)) · 1{not dead}||²
  /// E_scale = E_total - E_dead - E_grid (may be negative).
  double scale() const { return total - dead - grid; }

  void add(const ErrorEnergies &other) {
    norm2 += other.norm2;
    total += other.total;
    dead += other.dead;
    grid += other.grid;
  }
};

/// The vector terms: their energies and pairwise cross terms 2<a, b>.
struct ErrorVectorTerms {
  double scaleBias = 0;
  double deadzone = 0;
  double gridNoise = 0;
  double crossScaleBiasDeadzone = 0;
  double crossScaleBiasGridNoise = 0;
  double crossDeadzoneGridNoise = 0;
  /// max |scaleBias + deadzone + gridNoise - (x - x')| over all elements.
  double maxAbsResidual = 0;

  void add(const ErrorVectorTerms &other) {
    scaleBias += other.scaleBias;
    deadzone += other.deadzone;
    gridNoise += other.gridNoise;
    crossScaleBiasDeadzone += other.crossScaleBiasDeadzone;
    crossScaleBiasGridNoise += other.crossScaleBiasGridNoise;
    crossDeadzoneGridNoise += other.crossDeadzoneGridNoise;
    maxAbsResidual = std::fmax(maxAbsResidual, other.maxAbsResidual);
  }
};

/// Everything the error report gives for a tensor.
struct ErrorStats {
  ErrorEnergies energies;
  ErrorVectorTerms terms;
  int64_t elements = 0; ///< elements of finite blocks
  int64_t clipped = 0;
  int64_t zeroed = 0;
  int64_t blocks = 0; ///< all blocks, non-finite ones included
  int64_t nonFiniteBlocks = 0;

  void add(const ErrorStats &other) {
    energies.add(other.energies);
    terms.add(other.terms);
    elements += other.elements;
    clipped += other.clipped;
    zeroed += other.zeroed;
    blocks += other.blocks;
    nonFiniteBlocks += other.nonFiniteBlocks;
  }
};

/// Decomposes one block of `n` elements: inputs `x`, dequantized values `xq`
/// and 4-bit codes (sign << 3 | magnitude) packed two per byte, the lower
/// index in the low nibble, element i's code being code number
/// `firstCode + i` of `packedCodes`. Adds to `stats` and returns the
/// block's energies (all NaN for a non-finite block). When the vector
/// pointers are given, writes the three vector terms of each element
/// (NaN in a non-finite block).
inline ErrorEnergies
decomposeBlock(ElementGrid grid, const float *x, const float *xq, int64_t n,
               const uint8_t *packedCodes, int64_t firstCode, ErrorStats &stats,
               double *scaleBias = nullptr, double *deadzone = nullptr,
               double *gridNoise = nullptr) {
  ++stats.blocks;
  double amax = 0;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]))
      finite = false;
    else
      amax = std::fmax(amax, std::fabs(static_cast<double>(x[i])));
  }
  if (!finite) {
    ++stats.nonFiniteBlocks;
    double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 0; i < n; ++i) {
      if (scaleBias)
        scaleBias[i] = nan;
      if (deadzone)
        deadzone[i] = nan;
      if (gridNoise)
        gridNoise[i] = nan;
    }
    return ErrorEnergies{nan, nan, nan, nan};
  }

  double s = idealScale(grid, amax);
  ErrorEnergies block;
  ErrorVectorTerms terms;
  for (int64_t i = 0; i < n; ++i) {
    double xi = x[i], qi = xq[i];
    double absX = std::fabs(xi);
    double magnitude = s > 0 ? idealGridMagnitude(grid, absX, s) : 0.0;
    bool dead = magnitude == 0.0;
    double ideal = std::copysign(s * magnitude, xi); // s*·Q(x/s*), exact
    double error = xi - qi;
    double sb = ideal - qi;
    double rest = xi - ideal;
    double dz = dead ? rest : 0.0;
    double gn = dead ? 0.0 : rest;

    block.norm2 += xi * xi;
    block.total += error * error;
    if (dead)
      block.dead += xi * xi;
    else
      block.grid += rest * rest;
    terms.scaleBias += sb * sb;
    terms.deadzone += dz * dz;
    terms.gridNoise += gn * gn;
    terms.crossScaleBiasDeadzone += 2 * sb * dz;
    terms.crossScaleBiasGridNoise += 2 * sb * gn;
    terms.crossDeadzoneGridNoise += 2 * dz * gn;
    terms.maxAbsResidual =
        std::fmax(terms.maxAbsResidual, std::fabs(sb + dz + gn - error));

    int64_t c = firstCode + i;
    unsigned code = (packedCodes[c >> 1] >> ((c & 1) * 4)) & 0xF;
    if ((code & 7) == 7 && absX > std::fabs(qi))
      ++stats.clipped;
    if (xi != 0.0 && qi == 0.0)
      ++stats.zeroed;
    if (scaleBias)
      scaleBias[i] = sb;
    if (deadzone)
      deadzone[i] = dz;
    if (gridNoise)
      gridNoise[i] = gn;
  }
  stats.elements += n;
  stats.energies.add(block);
  stats.terms.add(terms);
  return block;
}

/// Decomposes a row of `n` elements (a multiple of `blockSize`) block by
/// block; `packedCodes` holds the row's n/2 code bytes. `perBlock`, when
/// given, receives n / blockSize block energies; the vector pointers, when
/// given, n values each.
inline void decomposeRow(ElementGrid grid, int64_t blockSize, const float *x,
                         const float *xq, int64_t n, const uint8_t *packedCodes,
                         ErrorStats &stats, ErrorEnergies *perBlock = nullptr,
                         double *scaleBias = nullptr,
                         double *deadzone = nullptr,
                         double *gridNoise = nullptr) {
  for (int64_t b = 0; b * blockSize < n; ++b) {
    int64_t at = b * blockSize;
    ErrorEnergies e =
        decomposeBlock(grid, x + at, xq + at, blockSize, packedCodes, at, stats,
                       scaleBias ? scaleBias + at : nullptr,
                       deadzone ? deadzone + at : nullptr,
                       gridNoise ? gridNoise + at : nullptr);
    if (perBlock)
      perBlock[b] = e;
  }
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_ERRORDECOMPOSITION_H
