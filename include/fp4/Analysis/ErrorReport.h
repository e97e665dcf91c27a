//===- ErrorReport.h - quantization error decomposition of tensors -*- C++
//-*-===//
//
// The analysis behind fp4-error-report (numerics.md 9, docs/ErrorReport.md):
// a tensor is quantized and dequantized with its scheme's C++ reference
// quantizer (the exact scheme of the op: NVFP4 tensor scale, HiF4 levels,
// macro factors included) and every block is decomposed with
// numerics::decomposeBlock (include/fp4/Numerics/ErrorDecomposition.h).
// Usable without the pass, e.g. by a driver that has a tensor in memory.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_ANALYSIS_ERRORREPORT_H
#define FP4_ANALYSIS_ERRORREPORT_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Numerics/ErrorDecomposition.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace llvm::json {
class OStream;
} // namespace llvm::json

namespace mlir {
class MLIRContext;
namespace fp4 {

/// The decomposition of one tensor.
struct QuantizationErrorReport {
  numerics::ElementGrid grid = numerics::ElementGrid::E2M1;
  /// Elements per block (the scheme's getBlockSize()).
  int64_t blockSize = 0;
  /// The row view (ReferenceQuantization.h): rows x cols, cols = the axis.
  int64_t rows = 0, cols = 0;
  numerics::ErrorStats stats;
  /// Per block in row-view order (row-major, cols / blockSize per row);
  /// filled only when requested. Non-finite blocks hold NaN.
  std::vector<numerics::ErrorEnergies> perBlock;
};

/// The ideal grid of a scheme's element type: E2M1 for f4E2M1FN, HiF4 for
/// !fp4.s1p2; failure for any other element type.
FailureOr<numerics::ElementGrid> getIdealGrid(QuantSchemeAttrInterface scheme);

/// Quantizes and dequantizes a tensor of `type` (static shape) whose row-view
/// rows `readRows` produces, with the scheme's reference quantizer, in
/// parallel over row chunks on `context`'s thread pool (the figures do not
/// depend on the thread count: sums are reduced in block order), and
/// decomposes its error. Fails with `error` set when the scheme has no
/// reference quantizer or ideal grid.
FailureOr<QuantizationErrorReport>
analyzeQuantizationError(MLIRContext *context, QuantizedTensorType type,
                         ReferenceRowReader readRows, bool perBlock,
                         std::string &error);

/// Writes the figures of `report` as members of the current JSON object:
/// "grid", "block_size", "elements", "blocks", "non_finite_blocks",
/// "norm2", "relative" {total, scale, dead, grid}, "vector_terms" {...},
/// "fractions" {clipped, zeroed} and, when `perBlock`, "per_block".
/// docs/ErrorReport.md defines every member.
void writeErrorReportJSON(llvm::json::OStream &json,
                          const QuantizationErrorReport &report, bool perBlock);

/// x / norm2, or 0 for an all-zero tensor.
inline double relativeTo(double x, double norm2) {
  return norm2 > 0 ? x / norm2 : 0.0;
}

} // namespace fp4
} // namespace mlir

#endif // FP4_ANALYSIS_ERRORREPORT_H
