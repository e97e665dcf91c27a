//===- Passes.h - fp4 dialect transformation passes -------------*- C++ -*-===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_PASSES_H
#define FP4_DIALECT_FP4_TRANSFORMS_PASSES_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
// The enum-valued options (operands=, mode=, sparsity=).
#include "fp4/Dialect/FP4/Transforms/PassOptionEnums.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp4 {

#define GEN_PASS_DECL
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"

} // namespace mlir::fp4

#endif // FP4_DIALECT_FP4_TRANSFORMS_PASSES_H
