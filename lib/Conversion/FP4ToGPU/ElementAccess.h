//===- ElementAccess.h - scalar reads of quantized buffers ------*- C++ -*-===//
//
// Scalar access to one element of a rank-2 quantized tensor (blocked along
// its last axis) stored as its ABI components in memrefs, inside a kernel.
// The arithmetic is the scheme's GPU model (SchemeGPULoweringInterface):
// numerics rules through ArithOps, so every kernel
// that reads elements this way computes exactly the reference's values; the
// fast kernel families use it for their slow paths and the reference kernel
// for everything.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_ELEMENTACCESS_H
#define LIB_CONVERSION_FP4TOGPU_ELEMENTACCESS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::fp4 {

/// Whether the GPU kernels can read tensors of `type`: rank 2, static shape,
/// blocked along axis 1, a scheme with a SchemeGPULoweringAttrInterface
/// model. Sets `reason` if not.
bool isGPUReadableQuantizedType(QuantizedTensorType type, std::string &reason);

/// The 4-bit code (i32) of element (row, col) of the codes memref.
Value loadCode(OpBuilder &b, Location loc, Value codes, Value row, Value col);

/// The f32 value of element (row, col) (index values) of a quantized tensor
/// of `type` stored in `components` (memrefs in ABI order).
Value loadDequantizedElement(OpBuilder &b, Location loc,
                             QuantizedTensorType type, ValueRange components,
                             Value row, Value col);

/// The i8 at `indices` of `memref`, zero-extended to i32 (as the reference's
/// extui of an i8 component).
Value loadByteAsI32(OpBuilder &b, Location loc, Value memref,
                    ValueRange indices);

/// col / size + s (index): the component column of the s-th run of `size`
/// elements of a chunk starting at `col`.
Value componentColumn(OpBuilder &b, Location loc, Value col, int64_t size,
                      int64_t s = 0);

/// The values of a chunk of codes.size() elements at (row, col) whose scale
/// is one byte per `block` elements in the i8 memref `scales`: for each run
/// of min(block, chunk) elements, its byte, then valueOf(j, code j, byte).
SmallVector<Value>
dequantizeByteScaledChunk(OpBuilder &b, Location loc, Value scales,
                          ValueRange codes, Value row, Value col, int64_t block,
                          function_ref<Value(int64_t, Value, Value)> valueOf);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_ELEMENTACCESS_H
