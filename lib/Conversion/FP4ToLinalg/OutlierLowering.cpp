//===- OutlierLowering.cpp - fp4.split_outliers / split_channels to linalg ===//
//
// Rewrite: %rest, %vals, %idx = fp4.split_outliers %x block B top k
//   %xb    = tensor.expand_shape %x  [.., C] -> [.., C/B, B]
//   %ranks = ranks of |%xb| within each block (BlockTopK.h, on f32)
//   %rest  = collapse(select(%ranks < k, +0.0, %xb))   (in x's element type)
//   %vals, %idx = the elements of ranks 0..k-1, slot j = rank j; %vals
//                 rounded to its element type (nearest even)
//
// Rewrite: %rest, %g = fp4.split_channels %x channels [c0, c1, ...]
//   %rest = select(mask[k], +0.0, %x)        (mask: a constant i1 [K])
//   %g    = generic over [.., n]: tensor.extract %x[.., channels[j]]
//           (channels: a constant index [n]), rounded to %g's element type
//
//===----------------------------------------------------------------------===//

#include "BlockTopK.h"
#include "OpLowerings.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

struct SplitOutliersOpLowering : public OpConversionPattern<SplitOutliersOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SplitOutliersOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange input = adaptor.getInput();
    if (input.size() != 1)
      return rewriter.notifyMatchFailure(op, "expected a single float input");
    Location loc = op.getLoc();
    int64_t blockSize = op.getBlockSize(), k = op.getK();
    Value x = input.front();
    Value blocks = splitIntoBlocks(rewriter, loc, x, blockSize);
    Value keys = castFloatTensor(rewriter, loc, blocks, rewriter.getF32Type());
    Value ranks = buildBlockRanks(rewriter, loc, keys);

    // rest: the unselected elements as they are, exact in any float type.
    auto blocksType = cast<RankedTensorType>(blocks.getType());
    Type elementType = blocksType.getElementType();
    int64_t rank = blocksType.getRank();
    Value restInit = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, blocks),
        elementType);
    SmallVector<AffineMap> maps(3, rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto restOp = linalg::GenericOp::create(
        rewriter, loc, TypeRange{restInit.getType()}, ValueRange{blocks, ranks},
        ValueRange{restInit}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value kValue =
              arith::ConstantOp::create(b, l, b.getI32IntegerAttr(k));
          Value selected = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::slt, args[1], kValue);
          Value zero =
              arith::ConstantOp::create(b, l, b.getFloatAttr(elementType, 0.0));
          linalg::YieldOp::create(
              b, l,
              Value(arith::SelectOp::create(b, l, selected, zero, args[0])));
        });
    Value rest = mergeBlocks(rewriter, loc, restOp.getResult(0));

    auto [values, indices] = gatherTopK(rewriter, loc, keys, ranks, k);
    auto valuesType = cast<RankedTensorType>(op.getValues().getType());
    values =
        castFloatTensor(rewriter, loc, values, valuesType.getElementType());
    SmallVector<Value> results = {rest, values, indices};
    for (auto [value, result] : llvm::zip(results, op->getResults()))
      if (value.getType() != result.getType())
        value = tensor::CastOp::create(rewriter, loc, result.getType(), value);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct SplitChannelsOpLowering : public OpConversionPattern<SplitChannelsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SplitChannelsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange input = adaptor.getInput();
    if (input.size() != 1)
      return rewriter.notifyMatchFailure(op, "expected a single float input");
    Location loc = op.getLoc();
    Value x = input.front();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), cols = type.getShape().back();
    ArrayRef<int64_t> channels = op.getChannels();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap last =
        AffineMap::get(rank, 0, rewriter.getAffineDimExpr(rank - 1), ctx);

    // rest: a constant channel mask selects +0.0.
    SmallVector<bool> mask(cols, false);
    for (int64_t channel : channels)
      mask[channel] = true;
    Value maskValue = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({cols}, rewriter.getI1Type()),
            ArrayRef<bool>(mask)));
    Value restInit = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, x),
        type.getElementType());
    auto restOp = linalg::GenericOp::create(
        rewriter, loc, TypeRange{restInit.getType()}, ValueRange{x, maskValue},
        ValueRange{restInit}, SmallVector<AffineMap>{identity, last, identity},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value zero = arith::ConstantOp::create(
              b, l, b.getFloatAttr(type.getElementType(), 0.0));
          linalg::YieldOp::create(
              b, l,
              Value(arith::SelectOp::create(b, l, args[1], zero, args[0])));
        });

    // gathered: element j reads channel channels[j] of its row.
    int64_t n = channels.size();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    sizes.back() = rewriter.getIndexAttr(n);
    Value gatherInit =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    SmallVector<APInt> channelValues;
    for (int64_t channel : channels)
      channelValues.push_back(APInt(64, channel));
    Value channelsValue = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({n}, rewriter.getIndexType()),
            channelValues));
    auto gatherOp = linalg::GenericOp::create(
        rewriter, loc, TypeRange{gatherInit.getType()},
        ValueRange{channelsValue}, ValueRange{gatherInit},
        SmallVector<AffineMap>{last, identity}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank - 1; ++d)
            indices.push_back(linalg::IndexOp::create(b, l, d));
          indices.push_back(args[0]);
          linalg::YieldOp::create(
              b, l, Value(tensor::ExtractOp::create(b, l, x, indices)));
        });
    auto gatheredType = cast<RankedTensorType>(op.getGathered().getType());
    Value gathered = castFloatTensor(rewriter, loc, gatherOp.getResult(0),
                                     gatheredType.getElementType());
    SmallVector<Value> results = {restOp.getResult(0), gathered};
    for (auto [value, result] : llvm::zip(results, op->getResults()))
      if (value.getType() != result.getType())
        value = tensor::CastOp::create(rewriter, loc, result.getType(), value);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateSplitChannelsOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SplitChannelsOpLowering>(converter, patterns.getContext());
}

void mlir::fp4::detail::populateSplitOutliersOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SplitOutliersOpLowering>(converter, patterns.getContext());
}
