//===- BlockedTensorBuilder.cpp - linalg structure of block codecs --------===//
//
// Everything here is layout and loop structure; the only element arithmetic
// is the numerics library's rules (maxAbsBits, counterRandom) and the nibble
// packing of the ABI.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToLinalg/BlockedTensorBuilder.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/F32Bits.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp4;

BlockedTensorBuilder::BlockedTensorBuilder(OpBuilder &builder, Location loc,
                                           QuantizedTensorType type)
    : builder(builder), loc(loc), type(type) {
  int64_t rank = type.getRank(), axis = type.getAxis();
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      toLastPerm.push_back(d);
  toLastPerm.push_back(axis);
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

static Value transpose(OpBuilder &b, Location loc, Value t,
                       ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return t;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> permuted;
  for (int64_t p : perm)
    permuted.push_back(sizes[p]);
  Value init = tensor::EmptyOp::create(
      b, loc, permuted, cast<RankedTensorType>(t.getType()).getElementType());
  return linalg::TransposeOp::create(b, loc, t, init, perm).getResult()[0];
}

Value BlockedTensorBuilder::toAxisLast(Value logical) const {
  return transpose(builder, loc, logical, toLastPerm);
}

Value BlockedTensorBuilder::fromAxisLast(Value axisLast) const {
  SmallVector<int64_t> inverse(toLastPerm.size());
  for (auto [i, p] : llvm::enumerate(toLastPerm))
    inverse[p] = i;
  return transpose(builder, loc, axisLast, inverse);
}

Value BlockedTensorBuilder::splitDim(Value t, int64_t dim,
                                     ArrayRef<int64_t> factors) const {
  auto tType = cast<RankedTensorType>(t.getType());
  int64_t size = tType.getDimSize(dim);
  int64_t product = 1;
  for (int64_t f : factors)
    product *= f;
  assert(!ShapedType::isDynamic(size) && size % product == 0 &&
         "splitting a dimension that is not a static multiple");
  SmallVector<OpFoldResult> inSizes = tensor::getMixedSizes(builder, loc, t);
  SmallVector<OpFoldResult> outSizes;
  SmallVector<int64_t> outShape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < tType.getRank(); ++d) {
    ReassociationIndices group;
    group.push_back(outShape.size());
    if (d != dim) {
      outSizes.push_back(inSizes[d]);
      outShape.push_back(tType.getDimSize(d));
    } else {
      outSizes.push_back(builder.getIndexAttr(size / product));
      outShape.push_back(size / product);
      for (int64_t f : factors) {
        group.push_back(outShape.size());
        outSizes.push_back(builder.getIndexAttr(f));
        outShape.push_back(f);
      }
    }
    groups.push_back(group);
  }
  auto resultType = RankedTensorType::get(outShape, tType.getElementType());
  return tensor::ExpandShapeOp::create(builder, loc, resultType, t, groups,
                                       outSizes);
}

Value BlockedTensorBuilder::splitLast(Value t,
                                      ArrayRef<int64_t> factors) const {
  return splitDim(t, cast<RankedTensorType>(t.getType()).getRank() - 1,
                  factors);
}

Value BlockedTensorBuilder::collapse(
    Value t, ArrayRef<ReassociationIndices> groups) const {
  return tensor::CollapseShapeOp::create(builder, loc, t, groups);
}

Value BlockedTensorBuilder::mergeTrailing(Value t, int64_t count) const {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank - count; ++d)
    groups.push_back({d});
  ReassociationIndices last;
  for (int64_t d = rank - count; d < rank; ++d)
    last.push_back(d);
  groups.push_back(last);
  return collapse(t, groups);
}

//===----------------------------------------------------------------------===//
// Tensors and generics
//===----------------------------------------------------------------------===//

SmallVector<OpFoldResult> BlockedTensorBuilder::outerSizes(Value like) const {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, like);
  sizes.resize(getNumOuter());
  return sizes;
}

Value BlockedTensorBuilder::emptyOuter(Value like, ArrayRef<int64_t> trailing,
                                       Type elementType) const {
  SmallVector<OpFoldResult> sizes = outerSizes(like);
  for (int64_t s : trailing)
    sizes.push_back(builder.getIndexAttr(s));
  return tensor::EmptyOp::create(builder, loc, sizes, elementType);
}

Value BlockedTensorBuilder::filledOuter(Value like, ArrayRef<int64_t> trailing,
                                        TypedAttr value) const {
  Value empty = emptyOuter(like, trailing, value.getType());
  Value scalar = arith::ConstantOp::create(builder, loc, value);
  return linalg::FillOp::create(builder, loc, scalar, empty).getResult(0);
}

AffineMap BlockedTensorBuilder::outerMap(int64_t numTrailingLoops,
                                         ArrayRef<int64_t> trailingLoops) const {
  int64_t numOuter = getNumOuter();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < numOuter; ++d)
    exprs.push_back(builder.getAffineDimExpr(d));
  for (int64_t t : trailingLoops)
    exprs.push_back(builder.getAffineDimExpr(numOuter + t));
  return AffineMap::get(numOuter + numTrailingLoops, 0, exprs,
                        builder.getContext());
}

AffineMap BlockedTensorBuilder::identityMap(int64_t numTrailingLoops) const {
  return builder.getMultiDimIdentityMap(getNumOuter() + numTrailingLoops);
}

SmallVector<Value> BlockedTensorBuilder::generic(
    ValueRange inputs, ArrayRef<AffineMap> inputMaps, ValueRange inits,
    ArrayRef<AffineMap> initMaps,
    ArrayRef<utils::IteratorType> trailingIterators, BodyFn body) const {
  SmallVector<utils::IteratorType> iterators(getNumOuter(),
                                             utils::IteratorType::parallel);
  llvm::append_range(iterators, trailingIterators);
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, initMaps);
  auto op = linalg::GenericOp::create(
      builder, loc, ValueRange(inits).getTypes(), inputs, inits, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> results = body(b, l, args);
        linalg::YieldOp::create(b, l, results);
      });
  return SmallVector<Value>(op.getResults());
}

Value BlockedTensorBuilder::map(Value like, ValueRange inputs,
                                ArrayRef<AffineMap> inputMaps,
                                Type resultElementType, BodyFn body) const {
  auto likeType = cast<RankedTensorType>(like.getType());
  ArrayRef<int64_t> trailing = likeType.getShape().drop_front(getNumOuter());
  Value init = emptyOuter(like, trailing, resultElementType);
  SmallVector<utils::IteratorType> iterators(trailing.size(),
                                             utils::IteratorType::parallel);
  return generic(inputs, inputMaps, init, identityMap(trailing.size()),
                 iterators, body)[0];
}

Value BlockedTensorBuilder::reduceAbsMaxDims(Value t,
                                             ArrayRef<int64_t> reduced) const {
  auto tType = cast<RankedTensorType>(t.getType());
  int64_t rank = tType.getRank();
  SmallVector<int64_t> kept;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, t);
  SmallVector<OpFoldResult> keptSizes;
  SmallVector<AffineExpr> keptExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(reduced, d)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    keptSizes.push_back(sizes[d]);
    keptExprs.push_back(builder.getAffineDimExpr(d));
  }
  Type f32 = builder.getF32Type();
  Value init = tensor::EmptyOp::create(builder, loc, keptSizes, f32);
  Value zero =
      arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(0.0f));
  init = linalg::FillOp::create(builder, loc, zero, init).getResult(0);
  SmallVector<AffineMap> maps = {
      builder.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, keptExprs, builder.getContext())};
  auto op = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ValueRange{t}, ValueRange{init},
      maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        ArithOps ops(b, l);
        // The accumulator is always a non-negative pattern, so its own bits
        // are its |acc| bits.
        Value acc = ops.bitcastToI32(args[1]);
        Value next = numerics::maxAbsBits(ops, acc,
                                          numerics::absBits(ops, args[0]));
        linalg::YieldOp::create(b, l, ops.bitcastToF32(next));
      });
  return op.getResult(0);
}

Value BlockedTensorBuilder::reduceAbsMax(Value t, int64_t count) const {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  return reduceAbsMaxDims(
      t, llvm::to_vector(llvm::seq<int64_t>(rank - count, rank)));
}

Value BlockedTensorBuilder::packCodes(Value like, ArrayRef<int64_t> halfShape,
                                      ValueRange inputs,
                                      ArrayRef<AffineMap> inputMaps,
                                      CodeFn codeFn) const {
  int64_t numTrailing = halfShape.size() + 1;
  Value init =
      filledOuter(like, halfShape, builder.getIntegerAttr(builder.getI8Type(), 0));
  SmallVector<int64_t> outLoops =
      llvm::to_vector(llvm::seq<int64_t>(0, halfShape.size()));
  SmallVector<utils::IteratorType> iterators(halfShape.size(),
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  int64_t pairLoop = getNumOuter() + halfShape.size();
  return generic(
      inputs, inputMaps, init, outerMap(numTrailing, outLoops), iterators,
      [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
        ArithOps ops(b, l);
        Value code = codeFn(b, l, args.drop_back());
        // Element 2k goes to the low nibble, 2k+1 to the high one; the two
        // iterations of the pair loop OR their nibble into a zero byte.
        Value pos = arith::IndexCastOp::create(
            b, l, b.getI32Type(), linalg::IndexOp::create(b, l, pairLoop));
        Value shift = ops.muli(pos, ops.i32(4));
        Value nibble = ops.shli(ops.andi(code, ops.i32(0xF)), shift);
        Value byte = arith::TruncIOp::create(b, l, b.getI8Type(), nibble);
        return {arith::OrIOp::create(b, l, args.back(), byte)};
      })[0];
}

Value BlockedTensorBuilder::unpackCodes(Value codes,
                                        ArrayRef<int64_t> halfShape,
                                        ValueRange inputs,
                                        ArrayRef<AffineMap> inputMaps,
                                        ValueFn valueFn) const {
  int64_t numTrailing = halfShape.size() + 1;
  SmallVector<int64_t> outShape(halfShape);
  outShape.push_back(2);
  Value init = emptyOuter(codes, outShape, builder.getF32Type());
  SmallVector<Value> allInputs = {codes};
  llvm::append_range(allInputs, inputs);
  SmallVector<AffineMap> maps = {outerMap(
      numTrailing, llvm::to_vector(llvm::seq<int64_t>(0, halfShape.size())))};
  llvm::append_range(maps, inputMaps);
  SmallVector<utils::IteratorType> iterators(numTrailing,
                                             utils::IteratorType::parallel);
  int64_t pairLoop = getNumOuter() + halfShape.size();
  return generic(
      allInputs, maps, init, identityMap(numTrailing), iterators,
      [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
        ArithOps ops(b, l);
        Value byte = arith::ExtUIOp::create(b, l, b.getI32Type(), args[0]);
        Value pos = arith::IndexCastOp::create(
            b, l, b.getI32Type(), linalg::IndexOp::create(b, l, pairLoop));
        Value code = ops.andi(ops.shrui(byte, ops.muli(pos, ops.i32(4))),
                              ops.i32(0xF));
        return {valueFn(b, l, code, args.drop_front().drop_back())};
      })[0];
}

//===----------------------------------------------------------------------===//
// Stochastic rounding
//===----------------------------------------------------------------------===//

void BlockedTensorBuilder::setLogicalShapeFrom(Value logical) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, logical);
  int64_t rank = sizes.size();
  logicalStrides.assign(rank, Value());
  Value stride = arith::ConstantIndexOp::create(builder, loc, 1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    logicalStrides[d] = stride;
    if (d > 0)
      stride = arith::MulIOp::create(
          builder, loc, stride,
          getValueOrCreateConstantIndexOp(builder, loc, sizes[d]));
  }
}

Value BlockedTensorBuilder::loopCoordinate(
    OpBuilder &b, Location l,
    ArrayRef<std::pair<int64_t, int64_t>> terms) const {
  Value coord = arith::ConstantIndexOp::create(b, l, 0);
  for (auto [loop, step] : terms) {
    Value idx = linalg::IndexOp::create(b, l, loop);
    if (step != 1)
      idx = arith::MulIOp::create(b, l, idx,
                                  arith::ConstantIndexOp::create(b, l, step));
    coord = arith::AddIOp::create(b, l, coord, idx);
  }
  return coord;
}

Value BlockedTensorBuilder::randomBitsAt(OpBuilder &b, Location l,
                                         uint32_t seed,
                                         ArrayRef<Value> axisLastCoords) const {
  assert(!logicalStrides.empty() && "setLogicalShapeFrom not called");
  assert(axisLastCoords.size() == toLastPerm.size() && "one coordinate per dim");
  Value linear = arith::ConstantIndexOp::create(b, l, 0);
  for (auto [coord, logicalDim] : llvm::zip(axisLastCoords, toLastPerm))
    linear = arith::AddIOp::create(
        b, l, linear,
        arith::MulIOp::create(b, l, coord, logicalStrides[logicalDim]));
  Value linear64 = arith::IndexCastUIOp::create(b, l, b.getI64Type(), linear);
  Value lo = arith::TruncIOp::create(b, l, b.getI32Type(), linear64);
  Value hi = arith::TruncIOp::create(
      b, l, b.getI32Type(),
      arith::ShRUIOp::create(
          b, l, linear64,
          arith::ConstantIntOp::create(b, l, b.getI64Type(), 32)));
  ArithOps ops(b, l);
  return numerics::counterRandom(ops, ops.i32(static_cast<int32_t>(seed)), lo,
                                 hi);
}

Value BlockedTensorBuilder::elementRandomBits(
    OpBuilder &b, Location l, uint32_t seed,
    ArrayRef<std::pair<int64_t, int64_t>> axisTerms) const {
  int64_t numOuter = getNumOuter();
  SmallVector<Value> coords;
  for (int64_t i = 0; i < numOuter; ++i)
    coords.push_back(linalg::IndexOp::create(b, l, i));
  SmallVector<std::pair<int64_t, int64_t>> terms;
  for (auto [loop, step] : axisTerms)
    terms.push_back({numOuter + loop, step});
  coords.push_back(loopCoordinate(b, l, terms));
  return randomBitsAt(b, l, seed, coords);
}
