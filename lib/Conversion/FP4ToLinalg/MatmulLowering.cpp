//===- MatmulLowering.cpp - fp4.matmul to a linalg contraction ------------===//
//
// Rewrite: %y = fp4.matmul %lhs, %rhs : A, B -> tensor<...xT>
//   quantized operands -> their dequantized f32 values (scheme model);
//   float operands -> extended to f32 (exact, castFloatTensor);
//   %acc = linalg.fill 0.0 : f32 of [B?, M, N]
//   %sum = linalg.generic (K-major operands, rhs transposed):
//            [M,K] x [N,K]:     (m, n, k)    lhs(m, k)    rhs(n, k)
//            [B,M,K] x [N,K]:   (b, m, n, k) lhs(b, m, k) rhs(n, k)
//            [B,M,K] x [B,N,K]: (b, m, n, k) lhs(b, m, k) rhs(b, n, k)
//          { acc + l * r }  (two f32 roundings, no FMA)
//   %y = %sum rounded to T (nearest even) when T is not f32.
//
//===----------------------------------------------------------------------===//

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

struct MatmulOpLowering : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  /// The operand as an f32 tensor: dequantized if it is quantized.
  FailureOr<Value> floatOperand(ConversionPatternRewriter &rewriter,
                                Location loc, Value original,
                                ValueRange converted,
                                std::string &reason) const {
    if (auto type = dyn_cast<QuantizedTensorType>(original.getType()))
      return dequantizeComponents(rewriter, loc, converted, type, reason);
    if (converted.size() != 1) {
      reason = "expected a single float tensor operand";
      return failure();
    }
    return castFloatTensor(rewriter, loc, converted.front(),
                           rewriter.getF32Type());
  }

  LogicalResult
  matchAndRewrite(MatmulOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string reason;
    FailureOr<Value> lhs =
        floatOperand(rewriter, loc, op.getLhs(), adaptor.getLhs(), reason);
    if (failed(lhs))
      return rewriter.notifyMatchFailure(op, "lhs: " + reason);
    FailureOr<Value> rhs =
        floatOperand(rewriter, loc, op.getRhs(), adaptor.getRhs(), reason);
    if (failed(rhs))
      return rewriter.notifyMatchFailure(op, "rhs: " + reason);

    int64_t lhsRank = cast<RankedTensorType>(lhs->getType()).getRank();
    int64_t rhsRank = cast<RankedTensorType>(rhs->getType()).getRank();
    bool batched = lhsRank == 3;
    MLIRContext *ctx = rewriter.getContext();
    int64_t numLoops = batched ? 4 : 3;
    AffineExpr b, m, n, k;
    SmallVector<AffineExpr> lhsExprs, rhsExprs, outExprs;
    if (batched) {
      bindDims(ctx, b, m, n, k);
      lhsExprs = {b, m, k};
      rhsExprs = rhsRank == 3 ? SmallVector<AffineExpr>{b, n, k}
                              : SmallVector<AffineExpr>{n, k};
      outExprs = {b, m, n};
    } else {
      bindDims(ctx, m, n, k);
      lhsExprs = {m, k};
      rhsExprs = {n, k};
      outExprs = {m, n};
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(numLoops, 0, lhsExprs, ctx),
        AffineMap::get(numLoops, 0, rhsExprs, ctx),
        AffineMap::get(numLoops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);

    SmallVector<OpFoldResult> lhsSizes =
        tensor::getMixedSizes(rewriter, loc, *lhs);
    SmallVector<OpFoldResult> rhsSizes =
        tensor::getMixedSizes(rewriter, loc, *rhs);
    SmallVector<OpFoldResult> outSizes(lhsSizes.begin(), lhsSizes.end() - 1);
    outSizes.push_back(rhsSizes[rhsRank - 2]);
    Type f32 = rewriter.getF32Type();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f));
    Value acc = tensor::EmptyOp::create(rewriter, loc, outSizes, f32);
    acc = linalg::FillOp::create(rewriter, loc, zero, acc).getResult(0);
    auto contraction = linalg::GenericOp::create(
        rewriter, loc, TypeRange{acc.getType()}, ValueRange{*lhs, *rhs},
        ValueRange{acc}, maps, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value product = arith::MulFOp::create(nb, l, args[0], args[1]);
          linalg::YieldOp::create(nb, l,
                                  Value(arith::AddFOp::create(nb, l, args[2],
                                                              product)));
        });

    RankedTensorType resultType = op.getResult().getType();
    Value result = castFloatTensor(rewriter, loc, contraction.getResult(0),
                                   resultType.getElementType());
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateMatmulOpLowering(const TypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns.add<MatmulOpLowering>(converter, patterns.getContext());
}
