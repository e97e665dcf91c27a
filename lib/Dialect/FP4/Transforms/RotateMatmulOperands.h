//===- RotateMatmulOperands.h - both fp4.matmul operands --------*- C++ -*-===//
//
// Private to FP4Transforms: the operand surgery shared by fp4-rotate's
// block-Hadamard and two-level patterns.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_TRANSFORMS_ROTATEMATMULOPERANDS_H
#define FP4_LIB_DIALECT_FP4_TRANSFORMS_ROTATEMATMULOPERANDS_H

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp4::detail {

/// Builds the transformed float value of one operand (an fp4.quantize input
/// or a float operand) along its last axis K.
using OperandTransform = function_ref<Value(OpBuilder &, Location, Value)>;

/// Replaces both operands of `op` (accepted by getRotatableReductionSize)
/// with transformed ones: a quantized operand becomes a fresh fp4.quantize
/// (same type and discardable attributes) of `transform(quantize input)`,
/// built right before the original quantize; a float operand becomes
/// `transform(operand)`, built before `op`. The original quantize ops are
/// left to dead-code elimination. `op` is modified in place.
void transformMatmulOperands(RewriterBase &rewriter, MatmulOp op,
                             OperandTransform transform);

/// The float value fp4-rotate transforms for a matmul operand: the
/// fp4.quantize input, or the operand itself.
Value getFloatSource(Value operand);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_ROTATEMATMULOPERANDS_H
