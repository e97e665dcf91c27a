//===- ResidualCorrection.cpp - add the sparse residual to fp4.matmul -----===//
//
// Rewrites (numerics.md 8), for each selected operand (activations by
// default):
//
//   %q = fp4.quantize %x : tensor<MxKxbf16> -> !fp4.tensor<MxK, scheme>
//   %y = fp4.matmul %q, %w -> tensor<MxNxbf16>
// into
//   %v, %i = fp4.residual %x, %q block 4 top 2       (2:4 of r = x - deq(q))
//   %y0 = fp4.matmul %q, %w -> tensor<MxNxf32>
//   %y  = fp4.correction_matmul (%v, %i block 4), (%w) acc %y0
//           -> tensor<MxNxbf16>
//
// i.e. y = deq(Q(x)) W^T + S(r) W^T. On a product that already has
// correction terms (CorrectedProduct.h) the residual part gets one term per
// part of the other side.
//
//===----------------------------------------------------------------------===//

#include "CorrectedProduct.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

struct AddResidualCorrection final : OpRewritePattern<MatmulOp> {
  AddResidualCorrection(MLIRContext *context, const ResidualOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    CorrectedProduct product(op);
    SmallVector<ProductSide> sides;
    std::string reasons;
    for (auto [side, name, operand] :
         {std::tuple{ProductSide::Lhs, StringRef("lhs"), op.getLhs()},
          std::tuple{ProductSide::Rhs, StringRef("rhs"), op.getRhs()}}) {
      bool selected = options.operands == CorrectionOperands::Both ||
                      (options.operands == CorrectionOperands::Activations) ==
                          (side == ProductSide::Lhs);
      if (!selected)
        continue;
      std::string reason = check(product, side, operand);
      if (reason.empty()) {
        sides.push_back(side);
        continue;
      }
      if (!reasons.empty())
        reasons += "; ";
      reasons += (name + " " + reason).str();
    }
    if (sides.empty())
      return rewriter.notifyMatchFailure(op, reasons);
    for (ProductSide side : sides)
      addResidual(rewriter, op, side);
    return success();
  }

private:
  /// Why the residual of `operand` cannot be added, or "".
  std::string check(const CorrectedProduct &product, ProductSide side,
                    Value operand) const {
    auto quantize = operand.getDefiningOp<QuantizeOp>();
    if (!quantize)
      return isa<QuantizedTensorType>(operand.getType())
                 ? "is not produced by fp4.quantize (a function argument or "
                   "an already folded constant)"
                 : "is not quantized";
    if (ShapedType::isDynamic(
            cast<RankedTensorType>(quantize.getInput().getType())
                .getShape()
                .back()))
      return "is quantized from a tensor with a dynamic K";
    for (const ProductPart &part : product.getParts(side))
      if (part.isSparse())
        if (auto residual = part.values.getDefiningOp<ResidualOp>())
          if (residual.getQuantized() == operand)
            return "already has a residual correction";
    int64_t k = quantize.getResult().getType().getAxisSize();
    if (k % options.blockSize != 0)
      return "has K = " + std::to_string(k) +
             ", not a multiple of the residual block size " +
             std::to_string(options.blockSize);
    return "";
  }

  void addResidual(PatternRewriter &rewriter, MatmulOp op,
                   ProductSide side) const {
    CorrectedProduct product(op);
    Value operand = side == ProductSide::Lhs ? op.getLhs() : op.getRhs();
    auto quantize = operand.getDefiningOp<QuantizeOp>();
    Value x = quantize.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> sideShape(xType.getShape().drop_back());
    sideShape.push_back(quantize.getResult().getType().getAxisSize() /
                        options.blockSize);
    sideShape.push_back(options.k);
    rewriter.setInsertionPointAfter(quantize);
    auto residual = ResidualOp::create(
        rewriter, quantize.getLoc(),
        RankedTensorType::get(sideShape, rewriter.getBF16Type()),
        RankedTensorType::get(sideShape, rewriter.getI8Type()), x, operand,
        options.blockSize, options.k);
    product.addPart(rewriter, side,
                    ProductPart::getSparse(residual.getValues(),
                                           residual.getIndices(),
                                           options.blockSize));
  }

  ResidualOptions options;
};

} // namespace

void mlir::fp4::populateFP4ResidualPatterns(RewritePatternSet &patterns,
                                            const ResidualOptions &options) {
  patterns.add<AddResidualCorrection>(patterns.getContext(), options);
}
