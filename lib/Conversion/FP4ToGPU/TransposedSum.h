//===- TransposedSum.h - the activation sum the outlier products read -----===//
//
// A fused correction chain with weight outliers multiplies them by the f32
// sum over its activation parts (FusedCorrectionChain.h). The activation
// prep (or the stacker) writes that sum transposed, so that one K column's
// rows are adjacent, and the decode kernel's fused epilogue or the epilogue
// kernel gathers it at the entries' columns.
//
// Two layouts. [K, rows]: element (k, m) at [k, m]. Lane-banked
// [C, 32, rows] with C = K / 32: element (k, m) at [k mod C, k / C, m],
// i.e. word ((k mod C) * 32 + k / C) * rows + m of the same bytes. The
// decode kernel's tail form (MatmulKernelSpec::Epilogue::outlierTail)
// gives lane l of a warp a run of a weight row's entries; where each run
// covers whole outlier blocks, every column lane l reads lies in
// [l C, (l + 1) C), so in the lane-banked layout lane l reads words
// (j * 32 + l) * rows + m: no two lanes of a gather share a shared-memory
// bank (rows 1), or they share it as a vector load of rows words must
// (rows 2, 4; rows 3 is odd, so 3 l mod 32 is distinct too). In [K, rows]
// the bank is the entry's random index within its block, which costs
// about 3.5 conflict rounds per gather of 32 random columns. From 8 rows
// (K <= 1024, the staged sum's 32 KB) lanes l and l + 4 of a 16-byte
// phase meet on one bank quad: 2.0x the minimum wavefronts (full recipe
// 8 x 128 x 1024, bench/shared_traffic.py), where [K, rows] reads run at
// 3.5x (8 x 128 x 512).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_TRANSPOSEDSUM_H
#define LIB_CONVERSION_FP4TOGPU_TRANSPOSEDSUM_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::fp4 {

/// C = K / 32 where the decode tail form's lane runs of a weight row's
/// entries (`entries` per block of `blockSize` along K) are whole blocks
/// and cover K / 32 columns each, else 0 (the sum stays [K, rows]).
int64_t laneBankedSumColumns(int64_t k, int64_t blockSize, int64_t entries);

/// The transposed sum's tensor type: [K, rows], or [C, 32, rows] with
/// `bankColumns` = C.
RankedTensorType transposedSumType(MLIRContext *ctx, int64_t k, int64_t rows,
                                   int64_t bankColumns);

/// The indices of element (col, row) in that layout.
SmallVector<Value> transposedSumIndices(OpBuilder &b, Location loc, Value col,
                                        Value row, int64_t bankColumns);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_TRANSPOSEDSUM_H
