//===- FP4Ops.h - fp4 dialect operations ------------------------*- C++ -*-===//

#ifndef FP4_DIALECT_FP4_IR_FP4OPS_H
#define FP4_DIALECT_FP4_IR_FP4OPS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "fp4/Dialect/FP4/IR/FP4Ops.h.inc"

// fp4-rotate's ops (FP4RotationOps.td).
#include "fp4/Numerics/Hadamard.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#define GET_OP_CLASSES
#include "fp4/Dialect/FP4/IR/FP4RotationOps.h.inc"

// fp4-outlier-fallback's and fp4-residual's ops (FP4CorrectionOps.td).
#define GET_OP_CLASSES
#include "fp4/Dialect/FP4/IR/FP4CorrectionOps.h.inc"

#endif // FP4_DIALECT_FP4_IR_FP4OPS_H
