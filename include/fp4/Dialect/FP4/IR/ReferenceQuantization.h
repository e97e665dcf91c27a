//===- ReferenceQuantization.h - C++ reference quantization -----*- C++ -*-===//
//
// Quantizing and dequantizing whole tensors in C++ through a scheme's
// QuantSchemeAttrInterface (quantizeReference / dequantizeReference), with
// the numerics library's reference encoders: the compile-time constant
// folder, tests and tools use this, so no caller switches on formats.
//
// The row view. A tensor of shape S quantized along axis A is processed as
// a matrix [R, L]: L = S[A], and row r enumerates the other dimensions in
// row-major order (the tensor transposed so that A is last and contiguous).
// Every component has a row view as well: the component types of the [R, L]
// matrix blocked along axis 1, i.e. getComponentTypes({R, L}, 1). A
// component's rows map to input rows by a fixed ratio (1, or 16 for NVFP4
// 16x16 tiles); a rank-0 component (NVFP4's tensor scale) is per tensor.
// When A is the last axis the row views are the logical layouts; otherwise
// the helpers below transpose between the two.
//
// Stochastic rounding keys its random bits by the element's linear index in
// the *logical* row-major tensor (numerics.md 1), which ReferenceRows
// computes for the row view.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_REFERENCEQUANTIZATION_H
#define FP4_DIALECT_FP4_IR_REFERENCEQUANTIZATION_H

#include "fp4/Numerics/RoundingModes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
class MLIRContext;
namespace fp4 {
class QuantSchemeAttrInterface;
class QuantizedTensorType;
enum class ScaleRounding : uint32_t;
enum class ElementRounding : uint32_t;

/// A range of rows of a tensor's row view, the unit a scheme's reference
/// quantizer works on (rows in different calls are independent, so calls may
/// run in parallel).
struct ReferenceRows {
  /// First row of the range in the row view of the whole tensor.
  int64_t firstRow = 0;
  /// Number of rows; a multiple of the scheme's getReferenceRowMultiple().
  int64_t numRows = 0;
  /// Row length L (the blocked axis).
  int64_t cols = 0;
  /// Product of the logical dimensions after the blocked axis (1 when it is
  /// the last one).
  int64_t logicalInner = 1;

  /// Logical row-major linear index of element (row, 0) of the row view.
  int64_t indexBase(int64_t row) const {
    return (row / logicalInner) * cols * logicalInner + row % logicalInner;
  }
  /// Logical linear index distance between neighbours along the axis.
  int64_t indexStride() const { return logicalInner; }
};

/// The numerics library's enum for a dialect enum.
numerics::ScaleRounding toNumerics(ScaleRounding rounding);
numerics::ElementRounding toNumerics(ElementRounding rounding);

/// Byte size of each component's part for `rows` (a whole rank-0 component
/// for per-tensor components), in ABI order. Used by the schemes to check
/// the buffers they are given, and by callers to size them.
SmallVector<int64_t> getReferenceComponentBytes(QuantSchemeAttrInterface scheme,
                                                const ReferenceRows &rows);

/// Common argument checks of quantizeReference / dequantizeReference:
/// shapes compatible with the scheme, `numValues` = rows x cols, and one
/// buffer of the right size per component.
LogicalResult
checkReferenceArguments(QuantSchemeAttrInterface scheme,
                        const ReferenceRows &rows, size_t numValues,
                        ArrayRef<MutableArrayRef<char>> components);
LogicalResult checkReferenceArguments(QuantSchemeAttrInterface scheme,
                                      const ReferenceRows &rows,
                                      size_t numValues,
                                      ArrayRef<ArrayRef<char>> components);

/// Copies row-view rows [firstRow, firstRow + numRows) of a row-major tensor
/// of shape `logicalShape` whose row view moves `axis` last: from `rowView`
/// (numRows rows, contiguous) into the logical layout `logical`, or back.
/// Elements are opaque `elementBytes`-byte values.
void scatterRowViewRows(ArrayRef<int64_t> logicalShape, int64_t axis,
                        int64_t elementBytes, int64_t firstRow, int64_t numRows,
                        const char *rowView, char *logical);
void gatherRowViewRows(ArrayRef<int64_t> logicalShape, int64_t axis,
                       int64_t elementBytes, int64_t firstRow, int64_t numRows,
                       const char *logical, char *rowView);

/// Produces row-view rows [firstRow, firstRow + numRows) of the input as f32
/// into `values` (numRows x cols). Called concurrently from several threads.
using ReferenceRowReader = function_ref<void(int64_t firstRow, int64_t numRows,
                                             MutableArrayRef<float> values)>;

/// Quantizes a whole tensor of type `type` (static shape) whose values
/// `readRows` produces, into `components` in their logical layouts (ABI
/// order, byte sizes of getComponentTypes()). Runs in parallel over row
/// chunks on `context`'s thread pool (serially when threading is disabled);
/// memory beyond the outputs is one chunk of rows per worker.
LogicalResult
quantizeReferenceTensor(MLIRContext *context, QuantizedTensorType type,
                        ReferenceRowReader readRows,
                        ArrayRef<MutableArrayRef<char>> components);

/// Dequantizes `components` (logical layouts, ABI order) of a tensor of type
/// `type` into `values`, row-major in the logical shape.
LogicalResult dequantizeReferenceTensor(MLIRContext *context,
                                        QuantizedTensorType type,
                                        ArrayRef<ArrayRef<char>> components,
                                        MutableArrayRef<float> values);

} // namespace fp4
} // namespace mlir

#endif // FP4_DIALECT_FP4_IR_REFERENCEQUANTIZATION_H
