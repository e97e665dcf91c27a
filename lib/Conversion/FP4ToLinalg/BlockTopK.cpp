//===- BlockTopK.cpp - block top-k selection as linalg ops ----------------===//
//
// ranks:  generic over [.., nb, i, j] (j a reduction):
//           rank[i] += outlierPrecedes(|x_j| bits, j, |x_i| bits, i)
// gather: generic over [.., nb, s, i] (i a reduction):
//           (value[s], index[s]) = rank[i] == s ? (x_i, i) : (value, index)
// Both are O(B^2) per block, fine for the reference lowering, and need no
// sort: the order is total, so exactly one element has each rank.
//
//===----------------------------------------------------------------------===//

#include "BlockTopK.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/Outliers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4;

Value mlir::fp4::detail::splitIntoBlocks(OpBuilder &b, Location loc, Value t,
                                         int64_t blockSize) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<int64_t> shape(type.getShape());
  int64_t cols = shape.back();
  sizes.back() = b.getIndexAttr(cols / blockSize);
  sizes.push_back(b.getIndexAttr(blockSize));
  shape.back() = cols / blockSize;
  shape.push_back(blockSize);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank - 1; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, groups,
      sizes);
}

Value mlir::fp4::detail::mergeBlocks(OpBuilder &b, Location loc, Value t) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank - 2; ++d)
    groups.push_back({d});
  groups.push_back({rank - 2, rank - 1});
  return tensor::CollapseShapeOp::create(b, loc, t, groups);
}

/// tensor.empty of `like`'s sizes with the last one replaced by `last`.
static Value emptyLike(OpBuilder &b, Location loc, Value like, int64_t last,
                       Type elementType) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, like);
  sizes.back() = b.getIndexAttr(last);
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

static Value filled(OpBuilder &b, Location loc, Value empty, TypedAttr value) {
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// linalg.index(dim) as an i32.
static Value indexI32(OpBuilder &b, Location loc, int64_t dim) {
  Value index = linalg::IndexOp::create(b, loc, dim);
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
}

Value mlir::fp4::detail::buildBlockRanks(OpBuilder &b, Location loc,
                                         Value blocks) {
  auto type = cast<RankedTensorType>(blocks.getType());
  int64_t rank = type.getRank(), blockSize = type.getShape().back();
  MLIRContext *ctx = b.getContext();
  // Loops [.., nb, i, j]: the block's element i is ranked against j.
  int64_t numLoops = rank + 1;
  SmallVector<AffineExpr> outer;
  for (int64_t d = 0; d < rank - 1; ++d)
    outer.push_back(b.getAffineDimExpr(d));
  AffineExpr i = b.getAffineDimExpr(rank - 1), j = b.getAffineDimExpr(rank);
  auto withLast = [&](AffineExpr last) {
    SmallVector<AffineExpr> exprs(outer);
    exprs.push_back(last);
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps = {withLast(i), withLast(j), withLast(i)};
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Value init =
      filled(b, loc, emptyLike(b, loc, blocks, blockSize, b.getI32Type()),
             b.getI32IntegerAttr(0));
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{blocks, blocks},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        ArithOps ops(nb, l);
        Value iBits = numerics::absBits(ops, args[0]);
        Value jBits = numerics::absBits(ops, args[1]);
        Value before =
            numerics::outlierPrecedes(ops, jBits, indexI32(nb, l, rank), iBits,
                                      indexI32(nb, l, rank - 1));
        linalg::YieldOp::create(
            nb, l, ops.addi(args[2], numerics::zextBool(ops, before)));
      });
  return op.getResult(0);
}

std::pair<Value, Value> mlir::fp4::detail::gatherTopK(OpBuilder &b,
                                                      Location loc,
                                                      Value blocks, Value ranks,
                                                      int64_t k) {
  auto type = cast<RankedTensorType>(blocks.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  // Loops [.., nb, s, i]: slot s takes the element i of rank s.
  int64_t numLoops = rank + 1;
  SmallVector<AffineExpr> outer;
  for (int64_t d = 0; d < rank - 1; ++d)
    outer.push_back(b.getAffineDimExpr(d));
  AffineExpr s = b.getAffineDimExpr(rank - 1), i = b.getAffineDimExpr(rank);
  auto withLast = [&](AffineExpr last) {
    SmallVector<AffineExpr> exprs(outer);
    exprs.push_back(last);
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps = {withLast(i), withLast(i), withLast(s),
                                 withLast(s)};
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Value valuesInit =
      filled(b, loc, emptyLike(b, loc, blocks, k, b.getF32Type()),
             b.getF32FloatAttr(0.0f));
  Value indicesInit =
      filled(b, loc, emptyLike(b, loc, blocks, k, b.getI8Type()),
             b.getI8IntegerAttr(0));
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{valuesInit.getType(), indicesInit.getType()},
      ValueRange{blocks, ranks}, ValueRange{valuesInit, indicesInit}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                          args[1], indexI32(nb, l, rank - 1));
        Value index = arith::IndexCastOp::create(
            nb, l, nb.getI8Type(), linalg::IndexOp::create(nb, l, rank));
        Value value = arith::SelectOp::create(nb, l, hit, args[0], args[2]);
        Value position = arith::SelectOp::create(nb, l, hit, index, args[3]);
        linalg::YieldOp::create(nb, l, ValueRange{value, position});
      });
  return {op.getResult(0), op.getResult(1)};
}
