//===- DequantizeLowering.cpp - fp4.dequantize from component tensors -----===//
//
// Rewrite: %x = fp4.dequantize %q : !fp4.tensor<...> -> tensor<SxT>
//   becomes the scheme's SchemeLoweringAttrInterface::buildDequantize on the
//   components of %q (an f32 tensor), rounded to T (nearest even) for bf16
//   and f16 results.
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

FailureOr<Value> mlir::fp4::detail::dequantizeComponents(
    OpBuilder &builder, Location loc, ValueRange components,
    QuantizedTensorType type, std::string &reason) {
  auto lowering = dyn_cast<SchemeLoweringAttrInterface>(
      static_cast<Attribute>(type.getScheme()));
  if (!lowering) {
    reason = "the scheme has no SchemeLoweringAttrInterface model (call "
             "registerSchemeLoweringInterfaceModels)";
    return failure();
  }
  if (components.size() != type.getComponentTypes().size()) {
    reason = "the quantized operand was not converted to its components";
    return failure();
  }
  FailureOr<Value> values =
      lowering.buildDequantize(builder, loc, components, type);
  if (failed(values))
    reason = "the scheme's lowering does not support this tensor type";
  return values;
}

namespace {

struct DequantizeOpLowering : public OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string reason;
    FailureOr<Value> values = dequantizeComponents(
        rewriter, loc, adaptor.getInput(), op.getInput().getType(), reason);
    if (failed(values))
      return rewriter.notifyMatchFailure(op, reason);
    RankedTensorType resultType = op.getResult().getType();
    Value result =
        castFloatTensor(rewriter, loc, *values, resultType.getElementType());
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateDequantizeOpLowering(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DequantizeOpLowering>(converter, patterns.getContext());
}
