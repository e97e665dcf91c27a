//===- BlockTopK.h - block top-k selection as linalg ops --------*- C++ -*-===//
//
// Private to the FP4ToLinalg library: the tensor structure shared by the
// lowerings of fp4.split_outliers and fp4.residual. The selection is the one
// of fp4/Numerics/Outliers.h, computed as every element's rank within its
// block (the number of elements that come before it, by outlierPrecedes);
// slot j of a block is the element of rank j.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_CONVERSION_FP4TOLINALG_BLOCKTOPK_H
#define FP4_LIB_CONVERSION_FP4TOLINALG_BLOCKTOPK_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace mlir::fp4::detail {

/// [.., C] -> [.., C / blockSize, blockSize] (C static, a multiple).
Value splitIntoBlocks(OpBuilder &b, Location loc, Value t, int64_t blockSize);
/// Inverse of splitIntoBlocks.
Value mergeBlocks(OpBuilder &b, Location loc, Value t);

/// i32 ranks [.., nb, B] of the elements of `blocks` ([.., nb, B], f32)
/// within their block.
Value buildBlockRanks(OpBuilder &b, Location loc, Value blocks);

/// The selected entries: values (f32, exact) and in-block indices (i8),
/// both [.., nb, k], slot j holding the element of rank j.
std::pair<Value, Value> gatherTopK(OpBuilder &b, Location loc, Value blocks,
                                   Value ranks, int64_t k);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_CONVERSION_FP4TOLINALG_BLOCKTOPK_H
