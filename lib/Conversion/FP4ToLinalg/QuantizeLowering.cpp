//===- QuantizeLowering.cpp - fp4.quantize to component tensors -----------===//
//
// Rewrite: %q = fp4.quantize %x : tensor<SxT> -> !fp4.tensor<S, scheme, axis>
//   becomes the component tensors built by the scheme's
//   SchemeLoweringAttrInterface::buildQuantize on %x extended to f32
//   (exactly; bf16/f16 inputs), replacing %q 1:N.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

namespace {

struct QuantizeOpLowering : public OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    QuantizedTensorType type = op.getResult().getType();
    auto lowering = dyn_cast<SchemeLoweringAttrInterface>(
        static_cast<Attribute>(type.getScheme()));
    if (!lowering)
      return rewriter.notifyMatchFailure(
          op, "the scheme has no SchemeLoweringAttrInterface model (call "
              "registerSchemeLoweringInterfaceModels)");
    ValueRange input = adaptor.getInput();
    if (input.size() != 1)
      return rewriter.notifyMatchFailure(op, "expected a single float input");

    Location loc = op.getLoc();
    Value x = castFloatTensor(rewriter, loc, input.front(),
                              rewriter.getF32Type());
    // Build on the result's shape so each component gets its declared type
    // (the verifier only requires the shapes to be compatible).
    auto f32Type = RankedTensorType::get(type.getShape(), rewriter.getF32Type());
    if (x.getType() != f32Type)
      x = tensor::CastOp::create(rewriter, loc, f32Type, x);
    FailureOr<SmallVector<Value>> components =
        lowering.buildQuantize(rewriter, loc, x, type);
    if (failed(components))
      return rewriter.notifyMatchFailure(
          op, "the scheme's lowering does not support this tensor type");
    SmallVector<Type> expected = type.getComponentTypes();
    if (components->size() != expected.size())
      return rewriter.notifyMatchFailure(
          op, "the scheme's lowering built the wrong number of components");
    for (auto [value, want] : llvm::zip(*components, expected))
      if (value.getType() != want)
        value = tensor::CastOp::create(rewriter, loc, want, value);
    rewriter.replaceOpWithMultiple(op, {*components});
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateQuantizeOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<QuantizeOpLowering>(converter, patterns.getContext());
}
