//===- Outliers.h - Block top-k selection (outlier fallback) ----*- C++ -*-===//
//
// numerics.md 7 (and the top-k sparsification of 8): along a row, every
// block of B consecutive elements gives up its k largest-magnitude elements.
//
// Selection order (total, so the selected set and its order are unique):
// element a comes before element b of the same block iff
//   |a| > |b|,  or  |a| == |b| and a's in-block index < b's,
// where magnitudes are compared as |x| bit patterns (sign cleared) read as
// signed 32-bit integers. For non-negative floats that is the float order;
// -0 and +0 tie; +-Inf sort above every finite value and NaN above Inf, so a
// non-finite element is taken out first (and a NaN block keeps no NaN in the
// part that is quantized when k covers them). Ties go to the lower index.
//
// The *rank* of an element is the number of elements of its block that come
// before it (0 .. B-1, a permutation of the block). Selected are the ranks
// 0 .. k-1, and slot j of the block's side tensors holds the element of rank
// j: values[j] is its value, indices[j] its index within the block.
//
// Split (fp4.split_outliers): rest = x with the selected elements replaced
// by +0.0, so that x == rest + scatter(values) exactly (before the values are
// rounded to their storage type, bf16 by default, by the caller).
//
// The rule is generic over the arithmetic backend (OpsConcept.h): the CPU
// lowering computes every rank with outlierPrecedes on the same bit
// patterns. The row loops below are the C++ reference (lib/Numerics).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_OUTLIERS_H
#define FP4_NUMERICS_OUTLIERS_H

#include "fp4/Numerics/F32Bits.h"

#include <cstdint>

namespace mlir::fp4::numerics {

/// Largest block the side tensors can index: in-block indices are stored as
/// i8 (0 .. 127).
constexpr int64_t kMaxSparseBlock = 128;

/// Whether an element with |x| bits `aBits` at in-block index `aIndex` comes
/// before one with `bBits` at `bIndex` in the selection order.
template <typename Ops>
typename Ops::Bool outlierPrecedes(const Ops &ops, typename Ops::I32 aBits,
                                   typename Ops::I32 aIndex,
                                   typename Ops::I32 bBits,
                                   typename Ops::I32 bIndex) {
  return ops.orb(ops.cmpi(IPred::SGT, aBits, bBits),
                 ops.andb(ops.cmpi(IPred::EQ, aBits, bBits),
                          ops.cmpi(IPred::SLT, aIndex, bIndex)));
}

/// A second form of the selection order, one integer per element, for
/// elements whose f32 bit pattern has its low kNarrowKeyBits bits zero
/// (every value exact in bf16 or f16, NaN and Inf included, widened to f32):
///   key = |x| bits | (127 - index) << 1 | sign bit,
/// so that for distinct in-block indices (0 .. 127) key(a) > key(b), as
/// signed (or unsigned: keys are non-negative) 32-bit integers, iff
/// outlierPrecedes(a, b). The sign never decides (the index fields of two
/// distinct indices differ by at least 2) and is kept so that the element's
/// value is read back from its key (narrowKeyValue, narrowKeyIndex). A
/// block's element of rank j is then the largest key below the key of rank
/// j - 1: one integer max per element instead of a pair compare and three
/// selects. OutliersTest proves the equivalence over every bf16 and f16 bit
/// pattern and every index.
constexpr int32_t kNarrowKeyBits = 8;

template <typename Ops>
typename Ops::I32 narrowOutlierKey(const Ops &ops, typename Ops::F32 x,
                                   typename Ops::I32 index) {
  typename Ops::I32 bits = ops.bitcastToI32(x);
  return ops.ori(ops.ori(ops.andi(bits, ops.i32(0x7FFFFFFF)),
                         ops.shli(ops.subi(ops.i32(kMaxSparseBlock - 1), index),
                                  ops.i32(1))),
                 ops.shrui(bits, ops.i32(31)));
}

/// The exact f32 value whose narrowOutlierKey is `key`.
template <typename Ops>
typename Ops::F32 narrowKeyValue(const Ops &ops, typename Ops::I32 key) {
  return ops.bitcastToF32(
      ops.ori(ops.andi(key, ops.i32(0x7FFFFFFF & ~((1 << kNarrowKeyBits) - 1))),
              ops.shli(key, ops.i32(31))));
}

/// The in-block index whose narrowOutlierKey is `key`.
template <typename Ops>
typename Ops::I32 narrowKeyIndex(const Ops &ops, typename Ops::I32 key) {
  return ops.subi(ops.i32(kMaxSparseBlock - 1),
                  ops.andi(ops.shrui(key, ops.i32(1)),
                           ops.i32(kMaxSparseBlock - 1)));
}

/// Selects the top-k of every block of `blockSize` elements of x[0..n)
/// (n a multiple of blockSize, 1 <= k <= blockSize <= kMaxSparseBlock):
/// values[b*k + j] = the block's element of rank j (its exact f32 value),
/// indices[b*k + j] = its index within block b.
void selectTopKRow(const float *x, int64_t n, int64_t blockSize, int64_t k,
                   float *values, int32_t *indices);

/// selectTopKRow, and rest[i] = x[i] for unselected elements, +0.0 for
/// selected ones. `rest` may alias `x`.
void splitOutliersRow(const float *x, int64_t n, int64_t blockSize, int64_t k,
                      float *rest, float *values, int32_t *indices);

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_OUTLIERS_H
