//===- FP4Dialect.h - fp4 dialect, enums, attributes, types -----*- C++ -*-===//
//
// Everything a user of the dialect needs except the ops: the dialect class,
// the rounding enums, the quantization scheme interface and attributes, and
// the quantized tensor type.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4DIALECT_H
#define FP4_DIALECT_FP4_IR_FP4DIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dialect.h"

#include "fp4/Dialect/FP4/IR/FP4Dialect.h.inc"
#include "fp4/Dialect/FP4/IR/FP4Enums.h.inc"
// Types of the interface's reference-quantization methods.
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Dialect/FP4/IR/FP4AttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fp4/Dialect/FP4/IR/FP4Attrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "fp4/Dialect/FP4/IR/FP4Types.h.inc"

#endif // FP4_DIALECT_FP4_IR_FP4DIALECT_H
