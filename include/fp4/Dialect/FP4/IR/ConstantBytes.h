//===- ConstantBytes.h - raw bytes of a constant tensor ---------*- C++ -*-===//
//
// The compile-time folders and the GPU lowering both inspect constant
// tensors (`dense` literals and `dense_resource` blobs) byte by byte: the
// folders to compute from them, the GPU lowering to prove facts about
// folded weights (FusedCorrectionChain). One reader for both.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_CONSTANTBYTES_H
#define FP4_DIALECT_FP4_IR_CONSTANTBYTES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <vector>

namespace mlir::fp4 {

/// The raw bytes of constant `value` (a `dense` or `dense_resource` tensor of
/// `type`); a splat is expanded into `expanded`. Fails for anything else or
/// a size mismatch.
LogicalResult readConstantBytes(Value value, ShapedType type,
                                std::vector<char> &expanded,
                                ArrayRef<char> &bytes);

} // namespace mlir::fp4

#endif // FP4_DIALECT_FP4_IR_CONSTANTBYTES_H
