//===- Passes.h - dialect-independent fp4-mlir passes -----------*- C++ -*-===//

#ifndef FP4_TRANSFORMS_PASSES_H
#define FP4_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp4 {

#define GEN_PASS_DECL
#include "fp4/Transforms/Passes.h.inc"

/// Reorders the loops of `op` as fp4-contraction-loop-order does, after
/// generalizing a named op; returns the generic op, or failure (no match,
/// no change) when the op is not such a contraction.
FailureOr<linalg::GenericOp> reorderContractionLoops(RewriterBase &rewriter,
                                                     linalg::LinalgOp op);

#define GEN_PASS_REGISTRATION
#include "fp4/Transforms/Passes.h.inc"

} // namespace mlir::fp4

#endif // FP4_TRANSFORMS_PASSES_H
