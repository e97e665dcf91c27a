//===- SparseProductTag.h - the fp4.sparse_product tag ----------*- C++ -*-===//
//
// convert-fp4-to-linalg lowers a block-sparse fp4.correction_matmul to a
// linalg.generic whose body gathers the other operand with tensor.extract;
// such a body is not a contraction any matcher can read back reliably.
// So the lowering names what the op computes in a discardable attribute,
// which survives bufferization (ops are rebuilt with their attributes), and
// fp4-contraction-to-runtime-call replaces tagged ops by the runtime's
// sparse kernels after checking the operands still have the tagged form:
//
//   fp4.sparse_product = {kind = "sparse_dense" | "dense_sparse" |
//                                "sparse_sparse",
//                         lhs_block_size = B (sparse lhs only),
//                         rhs_block_size = B (sparse rhs only)}
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TRANSFORMS_SPARSEPRODUCTTAG_H
#define FP4_TRANSFORMS_SPARSEPRODUCTTAG_H

#include "llvm/ADT/StringRef.h"

namespace mlir::fp4 {

inline constexpr llvm::StringLiteral kSparseProductAttr = "fp4.sparse_product";
inline constexpr llvm::StringLiteral kSparseProductKind = "kind";
inline constexpr llvm::StringLiteral kSparseProductLhsBlock = "lhs_block_size";
inline constexpr llvm::StringLiteral kSparseProductRhsBlock = "rhs_block_size";

} // namespace mlir::fp4

#endif // FP4_TRANSFORMS_SPARSEPRODUCTTAG_H
