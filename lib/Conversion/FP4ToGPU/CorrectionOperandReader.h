//===- CorrectionOperandReader.h - a correction operand in a kernel -*- C++ -*-===//
//
// How the correction kernels (the gather product, the activation stacker,
// the stacked epilogue) read one operand of an fp4.correction_matmul from
// its memrefs: dense elements (dequantized through ElementAccess when
// quantized) and block-sparse entries with their clamped columns, so that
// every kernel reads an operand by the same rules as the CPU lowering.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_CORRECTIONOPERANDREADER_H
#define LIB_CONVERSION_FP4TOGPU_CORRECTIONOPERANDREADER_H

#include "CorrectionKernels.h"

#include <utility>

namespace mlir::fp4 {

/// An operand inside a kernel: its spec and memrefs.
struct CorrectionOperandReader {
  const CorrectionOperand &spec;
  ValueRange memrefs;

  /// Dense element (row, col) as f32.
  Value dense(OpBuilder &b, Location loc, Value row, Value col) const;
  /// Sparse entry (row, block, slot): its f32 value and raw index (index).
  std::pair<Value, Value> entry(OpBuilder &b, Location loc, Value row,
                                Value block, Value slot) const;
  /// Column of an entry: block * B + clamp(index, 0, B - 1).
  Value column(OpBuilder &b, Location loc, Value block, Value index) const;
};

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_CORRECTIONOPERANDREADER_H
