//===- CorrectionMatmulLowering.cpp - fp4.correction_matmul to linalg -----===//
//
// Rewrite: %y = fp4.correction_matmul (L), (R) acc %acc
//   dense operands -> f32 tensors (dequantized, or extended exactly);
//   sparse values  -> f32 (exact), indices kept (i8, clamped to [0, B));
//   %sum = linalg.generic, init = f32(%acc) (or a zero fill), loops
//     dense  x dense : (b?, m, n, k)        acc + L[b?,m,k] * R[b?,n,k]
//     sparse x dense : (b?, m, n, c, s)     acc + vL[b?,m,c,s] * R[b?,n,col]
//     dense  x sparse: (b?, m, n, c, t)     acc + L[b?,m,col] * vR[b?,n,c,t]
//     sparse x sparse: (b?, m, n, c, s, t)  acc + vL * vR if the rhs entry t
//                                           of the block holding col is col
//   with col = c * B + index the column of a sparse entry; the dense
//   operand of a mixed product is read with tensor.extract at col (a
//   gather: only the stored entries cost work). The reduction loops run in
//   the order of the op's definition (blocks, then slots), each step one
//   f32 multiply and one f32 add (no FMA).
//   %y = %sum rounded to the result element type (nearest even).
//   A sparse product's generic carries the fp4.sparse_product tag
//   (SparseProductTag.h), so the fast CPU path can call a kernel for it.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Transforms/SparseProductTag.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

/// One operand of the product after conversion.
struct Side {
  /// Dense: the f32 [B?, R, K] tensor. Sparse: unset.
  Value dense;
  /// Sparse: f32 values and i8 indices [B?, R, nb, k], and the block size.
  Value values, indices;
  int64_t blockSize = 0;
  /// Logical rank (2 or 3).
  int64_t rank = 0;

  bool isSparse() const { return !dense; }
  /// The tensor whose dimension `rank - 2` is the R (M or N) size.
  Value shapeSource() const { return isSparse() ? values : dense; }
};

struct CorrectionMatmulOpLowering
    : public OpConversionPattern<CorrectionMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  FailureOr<Side> convertSide(ConversionPatternRewriter &rewriter, Location loc,
                              ValueRange original,
                              ArrayRef<ValueRange> converted,
                              std::optional<int64_t> blockSize,
                              std::string &reason) const {
    Side side;
    if (original.size() == 2) {
      if (converted.size() != 2 || converted[0].size() != 1 ||
          converted[1].size() != 1) {
        reason = "expected (values, indices) tensors";
        return failure();
      }
      side.values = castFloatTensor(rewriter, loc, converted[0].front(),
                                    rewriter.getF32Type());
      side.indices = converted[1].front();
      side.blockSize = *blockSize;
      side.rank = cast<RankedTensorType>(side.values.getType()).getRank() - 1;
      return side;
    }
    if (converted.size() != 1) {
      reason = "expected one dense operand";
      return failure();
    }
    if (auto type = dyn_cast<QuantizedTensorType>(original[0].getType())) {
      FailureOr<Value> values =
          dequantizeComponents(rewriter, loc, converted[0], type, reason);
      if (failed(values))
        return failure();
      side.dense = *values;
    } else {
      if (converted[0].size() != 1) {
        reason = "expected a single float tensor";
        return failure();
      }
      side.dense = castFloatTensor(rewriter, loc, converted[0].front(),
                                   rewriter.getF32Type());
    }
    side.rank = cast<RankedTensorType>(side.dense.getType()).getRank();
    return side;
  }

  LogicalResult
  matchAndRewrite(CorrectionMatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string reason;
    FailureOr<Side> lhs =
        convertSide(rewriter, loc, op.getLhs(), adaptor.getLhs(),
                    op.getLhsBlockSize(), reason);
    if (failed(lhs))
      return rewriter.notifyMatchFailure(op, "lhs: " + reason);
    FailureOr<Side> rhs =
        convertSide(rewriter, loc, op.getRhs(), adaptor.getRhs(),
                    op.getRhsBlockSize(), reason);
    if (failed(rhs))
      return rewriter.notifyMatchFailure(op, "rhs: " + reason);

    // The f32 accumulator [B?, M, N].
    Type f32 = rewriter.getF32Type();
    bool batched = lhs->rank == 3;
    int64_t numOuter = batched ? 3 : 2;
    Value init;
    if (op.getAcc()) {
      ValueRange accConverted = adaptor.getAcc();
      if (accConverted.size() != 1)
        return rewriter.notifyMatchFailure(op, "expected one accumulator");
      init = castFloatTensor(rewriter, loc, accConverted.front(), f32);
    } else {
      SmallVector<OpFoldResult> sizes;
      SmallVector<OpFoldResult> lhsSizes =
          tensor::getMixedSizes(rewriter, loc, lhs->shapeSource());
      SmallVector<OpFoldResult> rhsSizes =
          tensor::getMixedSizes(rewriter, loc, rhs->shapeSource());
      if (batched)
        sizes.push_back(lhsSizes[0]);
      sizes.push_back(lhsSizes[lhs->rank - 2]);
      sizes.push_back(rhsSizes[rhs->rank - 2]);
      Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, f32);
      Value zero =
          arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
      init = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    }

    // Loops: [b?, m, n] then the reductions of the case.
    int64_t numReductions = !lhs->isSparse() && !rhs->isSparse() ? 1
                            : lhs->isSparse() && rhs->isSparse() ? 3
                                                                 : 2;
    int64_t numLoops = numOuter + numReductions;
    MLIRContext *ctx = rewriter.getContext();
    auto dim = [&](int64_t d) { return rewriter.getAffineDimExpr(d); };
    AffineExpr bDim = dim(0), mDim = dim(numOuter - 2),
               nDim = dim(numOuter - 1);
    auto map = [&](bool withBatch, ArrayRef<AffineExpr> rest) {
      SmallVector<AffineExpr> exprs;
      if (withBatch)
        exprs.push_back(bDim);
      llvm::append_range(exprs, rest);
      return AffineMap::get(numLoops, 0, exprs, ctx);
    };
    bool rhsBatched = batched && rhs->rank == 3;
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    AffineExpr r0 = dim(numOuter), r1 = dim(numOuter + 1),
               r2 = numReductions == 3 ? dim(numOuter + 2) : AffineExpr();
    if (!lhs->isSparse() && !rhs->isSparse()) {
      inputs = {lhs->dense, rhs->dense};
      maps = {map(batched, {mDim, r0}), map(rhsBatched, {nDim, r0})};
    } else if (lhs->isSparse()) {
      inputs = {lhs->values, lhs->indices};
      maps = {map(batched, {mDim, r0, r1}), map(batched, {mDim, r0, r1})};
      if (rhs->isSparse()) {
        // The rhs slot loop t is read through tensor.extract only; a
        // [k] operand gives linalg its range.
        int64_t rhsK =
            cast<RankedTensorType>(rhs->values.getType()).getShape().back();
        auto slotsType = RankedTensorType::get({rhsK}, rewriter.getI8Type());
        inputs.push_back(arith::ConstantOp::create(
            rewriter, loc,
            DenseElementsAttr::get(slotsType, rewriter.getI8IntegerAttr(0))));
        maps.push_back(AffineMap::get(numLoops, 0, {r2}, ctx));
      }
    } else {
      inputs = {rhs->values, rhs->indices};
      maps = {map(rhsBatched, {nDim, r0, r1}), map(rhsBatched, {nDim, r0, r1})};
    }
    maps.push_back(map(batched, {mDim, nDim}));
    SmallVector<utils::IteratorType> iterators(numOuter,
                                               utils::IteratorType::parallel);
    iterators.append(numReductions, utils::IteratorType::reduction);

    auto body = [&](OpBuilder &b, Location l, ValueRange args) {
      Value acc = args.back();
      auto index = [&](int64_t d) -> Value {
        return linalg::IndexOp::create(b, l, d);
      };
      auto constIndex = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, l, v);
      };
      // Column of a sparse entry: block * B + clamp(index, 0, B - 1).
      auto column = [&](Value block, Value index8, int64_t blockSize) {
        Value idx = arith::IndexCastOp::create(b, l, b.getIndexType(), index8);
        idx = arith::MaxSIOp::create(b, l, idx, constIndex(0));
        idx = arith::MinSIOp::create(b, l, idx, constIndex(blockSize - 1));
        Value base = arith::MulIOp::create(b, l, block, constIndex(blockSize));
        return Value(arith::AddIOp::create(b, l, base, idx));
      };
      auto extract = [&](Value tensor, bool withBatch,
                         ArrayRef<Value> indices) -> Value {
        SmallVector<Value> all;
        if (withBatch)
          all.push_back(index(0));
        llvm::append_range(all, indices);
        return tensor::ExtractOp::create(b, l, tensor, all);
      };
      auto multiplyAdd = [&](Value x, Value y) -> Value {
        Value product = arith::MulFOp::create(b, l, x, y);
        return arith::AddFOp::create(b, l, acc, product);
      };
      Value sum;
      if (!lhs->isSparse() && !rhs->isSparse()) {
        sum = multiplyAdd(args[0], args[1]);
      } else if (lhs->isSparse() && !rhs->isSparse()) {
        Value col = column(index(numOuter), args[1], lhs->blockSize);
        Value other =
            extract(rhs->dense, rhsBatched, {index(numOuter - 1), col});
        sum = multiplyAdd(args[0], other);
      } else if (!lhs->isSparse()) {
        Value col = column(index(numOuter), args[1], rhs->blockSize);
        Value other = extract(lhs->dense, batched, {index(numOuter - 2), col});
        sum = multiplyAdd(other, args[0]);
      } else {
        // The lhs entry's column, then the rhs block holding it: its entry
        // t matches when its in-block index is the column's.
        Value col = column(index(numOuter), args[1], lhs->blockSize);
        Value rhsBlock =
            arith::DivUIOp::create(b, l, col, constIndex(rhs->blockSize));
        Value inBlock =
            arith::RemUIOp::create(b, l, col, constIndex(rhs->blockSize));
        SmallVector<Value> at = {index(numOuter - 1), rhsBlock,
                                 index(numOuter + 2)};
        Value rhsIndex = extract(rhs->indices, rhsBatched, at);
        Value rhsValue = extract(rhs->values, rhsBatched, at);
        Value rhsCol =
            arith::IndexCastOp::create(b, l, b.getIndexType(), rhsIndex);
        Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                          rhsCol, inBlock);
        sum = arith::SelectOp::create(b, l, hit, multiplyAdd(args[0], rhsValue),
                                      acc);
      }
      linalg::YieldOp::create(b, l, sum);
    };
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
        maps, iterators, body);
    if (lhs->isSparse() || rhs->isSparse()) {
      SmallVector<NamedAttribute> tag;
      StringRef kind = !rhs->isSparse()  ? "sparse_dense"
                       : !lhs->isSparse() ? "dense_sparse"
                                          : "sparse_sparse";
      tag.push_back(rewriter.getNamedAttr(kSparseProductKind,
                                          rewriter.getStringAttr(kind)));
      if (lhs->isSparse())
        tag.push_back(rewriter.getNamedAttr(
            kSparseProductLhsBlock, rewriter.getI64IntegerAttr(lhs->blockSize)));
      if (rhs->isSparse())
        tag.push_back(rewriter.getNamedAttr(
            kSparseProductRhsBlock, rewriter.getI64IntegerAttr(rhs->blockSize)));
      generic->setAttr(kSparseProductAttr, rewriter.getDictionaryAttr(tag));
    }

    RankedTensorType resultType = op.getResult().getType();
    Value result = castFloatTensor(rewriter, loc, generic.getResult(0),
                                   resultType.getElementType());
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateCorrectionMatmulOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<CorrectionMatmulOpLowering>(converter, patterns.getContext());
}
