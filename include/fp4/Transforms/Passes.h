//===- Passes.h - dialect-independent fp4-mlir passes -----------*- C++ -*-===//

#ifndef FP4_TRANSFORMS_PASSES_H
#define FP4_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp4 {

#define GEN_PASS_DECL
#include "fp4/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fp4/Transforms/Passes.h.inc"

} // namespace mlir::fp4

#endif // FP4_TRANSFORMS_PASSES_H
