//===- ResidualLowering.cpp - fp4.residual to linalg ----------------------===//
//
// Rewrite: %vals, %idx = fp4.residual %x, %q block B top k
//   %d     = the scheme's dequantization of %q's components (f32)
//   %r     = residualValue(f32(%x), %d) elementwise (one f32 subtraction)
//   %vals, %idx = block top-k of %r (BlockTopK.h), %vals rounded to its
//                 element type (nearest even)
//
//===----------------------------------------------------------------------===//

#include "BlockTopK.h"
#include "OpLowerings.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Numerics/Residual.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

struct ResidualOpLowering : public OpConversionPattern<ResidualOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ResidualOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange input = adaptor.getInput();
    if (input.size() != 1)
      return rewriter.notifyMatchFailure(op, "expected a single float input");
    Location loc = op.getLoc();
    std::string reason;
    FailureOr<Value> dequantized =
        dequantizeComponents(rewriter, loc, adaptor.getQuantized(),
                             op.getQuantized().getType(), reason);
    if (failed(dequantized))
      return rewriter.notifyMatchFailure(op, "quantized: " + reason);
    Value x =
        castFloatTensor(rewriter, loc, input.front(), rewriter.getF32Type());
    // Compute on the quantized type's shape (static where it is).
    if (x.getType() != dequantized->getType())
      x = tensor::CastOp::create(rewriter, loc, dequantized->getType(), x);

    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    Value init = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, x),
        rewriter.getF32Type());
    SmallVector<AffineMap> maps(3, rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto residual = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, ValueRange{x, *dequantized},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          ArithOps ops(b, l);
          linalg::YieldOp::create(
              b, l, numerics::residualValue(ops, args[0], args[1]));
        });

    Value blocks = splitIntoBlocks(rewriter, loc, residual.getResult(0),
                                   op.getBlockSize());
    Value ranks = buildBlockRanks(rewriter, loc, blocks);
    auto [values, indices] =
        gatherTopK(rewriter, loc, blocks, ranks, op.getK());
    auto valuesType = cast<RankedTensorType>(op.getValues().getType());
    values =
        castFloatTensor(rewriter, loc, values, valuesType.getElementType());
    SmallVector<Value> results = {values, indices};
    for (auto [value, result] : llvm::zip(results, op->getResults()))
      if (value.getType() != result.getType())
        value = tensor::CastOp::create(rewriter, loc, result.getType(), value);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateResidualOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ResidualOpLowering>(converter, patterns.getContext());
}
