//===- HadamardRotation.cpp - rotate both fp4.matmul operands along K -----===//
//
// Rewrites (R = I (x) D Hn_d along K, the same rotation for both operands,
// so (x R)(W R)^T = x W^T):
//
//   %xq = fp4.quantize %x : tensor<MxKxbf16> -> !fp4.tensor<...>
//   %wq = fp4.quantize %w : tensor<NxKxbf16> -> !fp4.tensor<...>
//   %y  = fp4.matmul %xq, %wq
// into
//   %xr  = fp4.rotate %x hadamard 32 seed 0 axis 1
//          : tensor<MxKxbf16> -> tensor<MxKxf32>
//   %xq' = fp4.quantize %xr : tensor<MxKxf32> -> !fp4.tensor<...>
//   %wr  = fp4.rotate %w hadamard 32 seed 0 axis 1
//          : tensor<NxKxbf16> -> tensor<NxKxf32>
//   %wq' = fp4.quantize %wr : tensor<NxKxf32> -> !fp4.tensor<...>
//   %y   = fp4.matmul %xq', %wq'
//
// (a float operand is rotated directly). Rotations are computed in f32
// (the quantizer extends its input to f32 anyway) so no precision is lost
// before quantization. A constant %w then folds in fp4-fold-constants.
//
//===----------------------------------------------------------------------===//

#include "RotateMatmulOperands.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/Hadamard.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::fp4;

FailureOr<RotationMode> mlir::fp4::parseRotationMode(StringRef text) {
  if (std::optional<RotationMode> value =
          parseEnumName<RotationMode>(kRotationModeNames, text))
    return *value;
  return failure();
}

FailureOr<int64_t> mlir::fp4::getRotatableReductionSize(MatmulOp op,
                                                        std::string *reason) {
  auto fail = [&](const Twine &why) -> FailureOr<int64_t> {
    if (reason)
      *reason = why.str();
    return failure();
  };
  int64_t k = ShapedType::kDynamic;
  for (auto [name, value] : {std::pair<StringRef, Value>{"lhs", op.getLhs()},
                             {"rhs", op.getRhs()}}) {
    if (isa<QuantizedTensorType>(value.getType()) &&
        !value.getDefiningOp<QuantizeOp>())
      return fail(name +
                  " is a quantized value not produced by fp4.quantize (e.g. "
                  "an already folded weight or a function argument), and "
                  "rotating only the other operand would change the product");
    int64_t dim = cast<ShapedType>(value.getType()).getShape().back();
    if (!ShapedType::isDynamic(dim))
      k = dim;
  }
  if (ShapedType::isDynamic(k))
    return fail("K is dynamic");
  return k;
}

Value mlir::fp4::detail::getFloatSource(Value operand) {
  if (auto quantize = operand.getDefiningOp<QuantizeOp>())
    return quantize.getInput();
  return operand;
}

void mlir::fp4::detail::transformMatmulOperands(RewriterBase &rewriter,
                                                MatmulOp op,
                                                OperandTransform transform) {
  SmallVector<Value, 2> operands;
  for (Value operand : {op.getLhs(), op.getRhs()}) {
    OpBuilder::InsertionGuard guard(rewriter);
    auto quantize = operand.getDefiningOp<QuantizeOp>();
    if (!quantize) {
      rewriter.setInsertionPoint(op);
      operands.push_back(transform(rewriter, op.getLoc(), operand));
      continue;
    }
    // A fresh quantize per operand: the original may have other users
    // (another matmul with a different partner) that must keep its meaning.
    rewriter.setInsertionPoint(quantize);
    Value input = transform(rewriter, quantize.getLoc(), quantize.getInput());
    auto fresh = QuantizeOp::create(rewriter, quantize.getLoc(),
                                    quantize.getResult().getType(), input);
    fresh->setDiscardableAttrs(quantize->getDiscardableAttrDictionary());
    operands.push_back(fresh.getResult());
  }
  rewriter.modifyOpInPlace(op, [&] {
    op.getLhsMutable().assign(operands[0]);
    op.getRhsMutable().assign(operands[1]);
  });
}

namespace {
struct RotateMatmulOperands final : OpRewritePattern<MatmulOp> {
  RotateMatmulOperands(MLIRContext *context, const RotateOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<int64_t> k = getRotatableReductionSize(op, &reason);
    if (failed(k))
      return rewriter.notifyMatchFailure(op, reason);
    if (*k % options.size != 0)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "size " << options.size << " does not divide K = " << *k;
      });
    bool randomized = options.mode == RotationMode::Randomized;
    fp4::detail::transformMatmulOperands(
        rewriter, op, [&](OpBuilder &b, Location loc, Value x) -> Value {
          auto type = cast<RankedTensorType>(x.getType());
          auto f32Type = RankedTensorType::get(type.getShape(), b.getF32Type());
          return RotateOp::create(
              b, loc, f32Type, x, options.size, /*stride=*/1,
              randomized ? b.getUI32IntegerAttr(options.seed) : IntegerAttr(),
              type.getRank() - 1, /*inverse=*/false);
        });
    return success();
  }

  RotateOptions options;
};
} // namespace

void mlir::fp4::populateFP4RotatePatterns(RewritePatternSet &patterns,
                                          const RotateOptions &options) {
  patterns.add<RotateMatmulOperands>(patterns.getContext(), options);
}
