//===- CPUSparseProduct.h - fp4's CPU sparse correction products -*- C++ -*-===//
//
// What fp4-contraction-to-runtime-call's calls for the block-sparse forms of
// fp4.correction_matmul land on (convert-fp4-to-linalg lowers them to gather
// loops and tags them `fp4.sparse_product`). Each output element gets
// exactly the loops' arithmetic, in their order: acc = C; then for every
// block c and slot s of the sparse operand (and, for two sparse operands,
// every rhs slot t), acc = acc + v * w, one f32 rounding per multiply and
// per add, no FMA. Defined in libfp4_cpu_runtime.so (no MLIR dependency).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_RUNTIME_CPUSPARSEPRODUCT_H
#define FP4_RUNTIME_CPUSPARSEPRODUCT_H

#include "fp4/Runtime/CPUContraction.h"

#include <cstdint>

extern "C" {

/// memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>.
struct FP4StridedMemRef4F32 {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
};

/// memref<?x?x?x?xi8, strided<[?, ?, ?, ?], offset: ?>>.
struct FP4StridedMemRef4I8 {
  int8_t *allocated;
  int8_t *aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
};

/// A block-sparse operand times a dense one:
///   C[b, r, q] = C[b, r, q] + sum over (c, s) in order of
///                values[b, r, c, s] * dense[b, q, c * B + clamp(idx, 0, B-1)]
/// with idx = indices[b, r, c, s], B = blockSize. values/indices:
/// [batch, R, K/B, k]; dense: [batch, Q, K]; c: [batch, R, Q]. The dense x
/// sparse form of the op is this with C's last two strides swapped (the
/// product of two floats does not depend on their order). Sizes must
/// agree and blocks * B must equal K (checked: a mismatch is reported on
/// stderr and aborts, since generated code never passes one).
void _mlir_ciface_fp4_cpu_sparse_dense_f32(FP4StridedMemRef4F32 *values,
                                           FP4StridedMemRef4I8 *indices,
                                           FP4StridedMemRef3F32 *dense,
                                           FP4StridedMemRef3F32 *c,
                                           int64_t blockSize);

/// Two block-sparse operands:
///   C[b, m, n] = C[b, m, n] + sum over (c, s, t) in order, where
///   col = c * BL + clamp(lidx[b, m, c, s], 0, BL-1), of
///   lval[b, m, c, s] * rval[b, n, col / BR, t]   if ridx[b, n, col / BR, t]
///   == col % BR (the rhs index as stored, not clamped), else nothing added.
/// l*: [batch, M, K/BL, kl]; r*: [batch, N, K/BR, kr]; c: [batch, M, N].
void _mlir_ciface_fp4_cpu_sparse_sparse_f32(
    FP4StridedMemRef4F32 *lhsValues, FP4StridedMemRef4I8 *lhsIndices,
    FP4StridedMemRef4F32 *rhsValues, FP4StridedMemRef4I8 *rhsIndices,
    FP4StridedMemRef3F32 *c, int64_t lhsBlockSize, int64_t rhsBlockSize);
}

#endif // FP4_RUNTIME_CPUSPARSEPRODUCT_H
