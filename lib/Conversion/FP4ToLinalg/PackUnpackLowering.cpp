//===- PackUnpackLowering.cpp - fp4.pack / fp4.unpack on components -------===//
//
// Rewrite: after the 1:N type conversion a quantized value *is* its
// components, so
//   %q = fp4.pack %c0, %c1, ...     -> %q replaced by (%c0, %c1, ...)
//   %c0, %c1, ... = fp4.unpack %q   -> results replaced by %q's components
// (the verifiers guarantee the component types match).
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

struct PackOpLowering : public OpConversionPattern<PackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> components;
    for (ValueRange operand : adaptor.getComponents())
      llvm::append_range(components, operand);
    if (components.size() != op.getComponents().size())
      return rewriter.notifyMatchFailure(op, "a component was converted 1:N");
    rewriter.replaceOpWithMultiple(op, {components});
    return success();
  }
};

struct UnpackOpLowering : public OpConversionPattern<UnpackOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(UnpackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange components = adaptor.getInput();
    if (components.size() != op.getNumResults())
      return rewriter.notifyMatchFailure(
          op, "the quantized operand was not converted to its components");
    rewriter.replaceOp(op, components);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populatePackUnpackOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<PackOpLowering, UnpackOpLowering>(converter,
                                                 patterns.getContext());
}
