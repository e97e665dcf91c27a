//===- ElementAccess.h - scalar reads of quantized buffers ------*- C++ -*-===//
//
// Scalar access to one element of a rank-2 quantized tensor (blocked along
// its last axis) stored as its ABI components in memrefs, inside a kernel.
// The arithmetic is the numerics rules through ArithOps, so every kernel
// that reads elements this way computes exactly the reference's values; the
// fast kernel families use it for their slow paths and the reference kernel
// for everything.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_ELEMENTACCESS_H
#define LIB_CONVERSION_FP4TOGPU_ELEMENTACCESS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::fp4 {

/// Whether the GPU kernels can read tensors of `type`: rank 2, static shape,
/// blocked along axis 1, one of the four schemes. Sets `reason` if not.
bool isGPUReadableQuantizedType(QuantizedTensorType type, std::string &reason);

/// The 4-bit code (i32) of element (row, col) of the codes memref.
Value loadCode(OpBuilder &b, Location loc, Value codes, Value row, Value col);

/// The f32 value of element (row, col) (index values) of a quantized tensor
/// of `type` stored in `components` (memrefs in ABI order).
Value loadDequantizedElement(OpBuilder &b, Location loc,
                             QuantizedTensorType type, ValueRange components,
                             Value row, Value col);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_ELEMENTACCESS_H
