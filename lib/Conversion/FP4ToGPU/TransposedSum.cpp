//===- TransposedSum.cpp - the activation sum the outlier products read ---===//

#include "TransposedSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fp4;

int64_t mlir::fp4::laneBankedSumColumns(int64_t k, int64_t blockSize,
                                        int64_t entries) {
  // The tail gives lane l entries [l per, (l + 1) per) of the row's
  // [K / blockSize x entries]; with perRow = 32 per and per a multiple of
  // `entries`, those are whole blocks: columns [l K / 32, (l + 1) K / 32).
  if (k <= 0 || k % 32 != 0 || blockSize <= 0 || entries <= 0 ||
      k % blockSize != 0)
    return 0;
  const int64_t perRow = k / blockSize * entries;
  if (perRow % 32 != 0 || (perRow / 32) % entries != 0)
    return 0;
  return k / 32;
}

RankedTensorType mlir::fp4::transposedSumType(MLIRContext *ctx, int64_t k,
                                              int64_t rows,
                                              int64_t bankColumns) {
  Type f32 = Float32Type::get(ctx);
  if (bankColumns == 0)
    return RankedTensorType::get({k, rows}, f32);
  return RankedTensorType::get({bankColumns, 32, rows}, f32);
}

SmallVector<Value> mlir::fp4::transposedSumIndices(OpBuilder &b, Location loc,
                                                   Value col, Value row,
                                                   int64_t bankColumns) {
  if (bankColumns == 0)
    return {col, row};
  Value c = arith::ConstantIndexOp::create(b, loc, bankColumns);
  return {arith::RemUIOp::create(b, loc, col, c),
          arith::DivUIOp::create(b, loc, col, c), row};
}
