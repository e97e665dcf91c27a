//===- Hadamard.h - Block Hadamard rotations --------------------*- C++ -*-===//
//
// Rotations of numerics.md section 6, written once for the constant folder,
// the CPU lowering and GPU lowerings. Along an axis of length n the rotation
// is
//
//   R = I_{n/(d*s)} (x) (D * Hn_d) (x) I_s
//
// with Hn_d = H_d / sqrt(d) the normalized Sylvester Hadamard matrix
// (H_1 = [1], H_2m = [[H_m, H_m], [H_m, -H_m]]; symmetric and orthogonal), D a
// diagonal of +-1 signs (`randomized`) or the identity (`deterministic`), and
// s the stride: s = 1 is the block rotation I (x) D Hn_d (d in [16, 256]),
// s = 32 with d = number of 32-blocks is the two-level mode's Hadamard across
// blocks Hn_nb (x) I_32. A vector x along the axis becomes y = x R; the
// inverse is x = y R^T. Element k of the axis lies in group k / (d*s), has
// Hadamard coordinate i(k) = (k / s) mod d and lane k mod s.
//
// Order of operations (the contract: every implementation performs exactly
// these f32 operations, each rounded to nearest even, so folded constants and
// compiled code agree bit for bit):
//
//   forward (x R):
//     1. signs:  u_k = negf(x_k) if D[i(k)] = -1, else x_k   (randomized only)
//     2. stages: for h = 1, 2, 4, ..., d/2, in this order: for every k whose
//                coordinate has bit h clear, with partner k' = k + h*s:
//                  (u_k, u_k') <- (u_k + u_k', u_k - u_k')
//     3. scale:  y_k = u_k * c_d
//   inverse (y R^T = y Hn_d D, Hn_d being symmetric): 2, 3, then 1.
//
//   c_d = f32(1/sqrt(d)): 2^-m for d = 4^m (exact), and 0x3F3504F3 *
//   2^-m = f32(1/sqrt(2)) * 2^-m for d = 2 * 4^m (d = 32: 0.17677669f,
//   d = 128: 0.088388346f). Scaling once after the unnormalized butterflies
//   keeps the rotation exact up to one rounding per stage and one for c_d;
//   forward then inverse is the identity within a few f32 ulps (exactly the
//   identity for d = 4^m up to the stage roundings). The unnormalized sums
//   can overflow f32 only when |x| > FLT_MAX / d.
//
// Sign generator (randomized): D[i] = -1 iff bit 31 of
//   counterRandom(seed, indexLo = i, indexHi = 0x48414441 "HADA")
// (CounterRandom.h), i = 0 .. d-1, the same signs in every group. The
// indexHi domain tag keeps these bits disjoint from stochastic rounding's,
// which keys the same generator by element linear indices < 2^62.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_HADAMARD_H
#define FP4_NUMERICS_HADAMARD_H

#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/OpsConcept.h"
#include "fp4/Numerics/ScalarOps.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace mlir::fp4::numerics {

/// Block rotation sizes of numerics.md 6 (stride 1).
constexpr int64_t kHadamardMinBlockSize = 16;
constexpr int64_t kHadamardMaxSize = 256;
/// indexHi of the sign generator's counterRandom calls.
constexpr uint32_t kHadamardSignDomain = 0x48414441u;

/// Parameters of one rotation (see the file comment).
struct HadamardParams {
  /// d, a power of two.
  int64_t size = 32;
  /// s >= 1: distance between neighbouring Hadamard coordinates.
  int64_t stride = 1;
  /// D from the sign generator (else D = I).
  bool randomized = false;
  uint32_t seed = 0;
  /// Apply R^T instead of R.
  bool inverse = false;
};

inline bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// log2 of a power of two.
inline int hadamardLog2(int64_t d) {
  int l = 0;
  while ((int64_t(1) << l) < d)
    ++l;
  return l;
}

/// c_d = f32(1/sqrt(d)) for a power of two d, from exact bit patterns.
inline float hadamardNormalizer(int64_t d) {
  int l = hadamardLog2(d);
  // 2^-(l/2) as f32 bits; odd l also multiplies by f32(1/sqrt(2)), which is
  // exact since the factor is a power of two.
  uint32_t bits = static_cast<uint32_t>(127 - l / 2) << 23;
  if (l % 2)
    bits = (static_cast<uint32_t>(126 - l / 2) << 23) | 0x3504F3u;
  float c;
  std::memcpy(&c, &bits, sizeof(c));
  return c;
}

//===----------------------------------------------------------------------===//
// Elementwise rules (any Ops backend)
//===----------------------------------------------------------------------===//

/// Whether the sign of Hadamard coordinate `coordinate` is -1.
template <typename Ops>
typename Ops::Bool hadamardSignNegative(const Ops &ops, typename Ops::I32 seed,
                                        typename Ops::I32 coordinate) {
  auto bits = counterRandom(ops, seed, coordinate,
                            ops.i32(static_cast<int32_t>(kHadamardSignDomain)));
  return ops.cmpi(IPred::SLT, bits, ops.i32(0));
}

/// Step 1: x, negated when `negative`.
template <typename Ops>
typename Ops::F32 hadamardApplySign(const Ops &ops, typename Ops::F32 x,
                                    typename Ops::Bool negative) {
  return ops.selectf(negative, ops.negf(x), x);
}

/// Step 2, the element with the clear bit: lower + upper.
template <typename Ops>
typename Ops::F32 hadamardSum(const Ops &ops, typename Ops::F32 lower,
                              typename Ops::F32 upper) {
  return ops.addf(lower, upper);
}

/// Step 2, the element with the set bit: lower - upper.
template <typename Ops>
typename Ops::F32 hadamardDifference(const Ops &ops, typename Ops::F32 lower,
                                     typename Ops::F32 upper) {
  return ops.subf(lower, upper);
}

/// Step 2 for an element that knows only at run time which of the pair it is
/// (a lowering computing one stage elementwise).
template <typename Ops>
typename Ops::F32 hadamardButterfly(const Ops &ops, typename Ops::F32 lower,
                                    typename Ops::F32 upper,
                                    typename Ops::Bool isUpper) {
  return ops.selectf(isUpper, hadamardDifference(ops, lower, upper),
                     hadamardSum(ops, lower, upper));
}

/// Step 3.
template <typename Ops>
typename Ops::F32 hadamardNormalize(const Ops &ops, typename Ops::F32 x,
                                    int64_t size) {
  return ops.mulf(x, ops.f32(hadamardNormalizer(size)));
}

//===----------------------------------------------------------------------===//
// Whole groups
//===----------------------------------------------------------------------===//

/// The sign flags (1 = negative) of coordinates 0 .. size-1 under `seed`.
inline std::vector<uint8_t> hadamardSigns(uint32_t seed, int64_t size) {
  constexpr ScalarOps ops{};
  std::vector<uint8_t> negative(size);
  for (int64_t i = 0; i < size; ++i)
    negative[i] = hadamardSignNegative(ops, static_cast<int32_t>(seed),
                                       static_cast<int32_t>(i));
  return negative;
}

/// Rotates one group of size*stride values in place in the order of the
/// file comment. `negative` holds the size sign flags (hadamardSigns) or is
/// null for a deterministic rotation. With ArithOps this unrolls the
/// butterfly network (for register-resident GPU code).
template <typename Ops>
void hadamardTransformGroup(const Ops &ops, typename Ops::F32 *v,
                            const HadamardParams &params,
                            const uint8_t *negative) {
  const int64_t d = params.size, s = params.stride;
  auto applySigns = [&] {
    if (!negative)
      return;
    for (int64_t i = 0; i < d; ++i)
      if (negative[i])
        for (int64_t t = 0; t < s; ++t)
          v[i * s + t] = ops.negf(v[i * s + t]);
  };
  if (!params.inverse)
    applySigns();
  for (int64_t h = 1; h < d; h *= 2)
    for (int64_t i = 0; i < d; ++i) {
      if (i & h)
        continue;
      for (int64_t t = 0; t < s; ++t) {
        auto lower = v[i * s + t], upper = v[(i + h) * s + t];
        v[i * s + t] = hadamardSum(ops, lower, upper);
        v[(i + h) * s + t] = hadamardDifference(ops, lower, upper);
      }
    }
  for (int64_t k = 0; k < d * s; ++k)
    v[k] = hadamardNormalize(ops, v[k], d);
  if (params.inverse)
    applySigns();
}

/// Whether `params` describe a rotation of rows of length `n`: d a power of
/// two, stride >= 1 and d*stride dividing n. (The block-size range
/// [16, 256] is a rule of the dialect's ops, not of the arithmetic.)
inline bool isValidHadamard(const HadamardParams &params, int64_t n) {
  return isPowerOfTwo(params.size) && params.stride >= 1 && n >= 0 &&
         n % (params.size * params.stride) == 0;
}

/// Rotates `rows` contiguous rows of length n (the rotated axis) in place,
/// in C++ (ScalarOps). Precondition: isValidHadamard(params, n).
inline void hadamardRotateRows(const HadamardParams &params, float *data,
                               int64_t rows, int64_t n) {
  constexpr ScalarOps ops{};
  std::vector<uint8_t> negative;
  if (params.randomized)
    negative = hadamardSigns(params.seed, params.size);
  const int64_t group = params.size * params.stride;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < n; g += group)
      hadamardTransformGroup(ops, data + r * n + g, params,
                             params.randomized ? negative.data() : nullptr);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_HADAMARD_H
