//===- MacroScale.cpp - MXFP4 quantization to macro-block-scaled MXFP4 ----===//
//
// Rewrites an fp4.quantize to MXFP4 (blocks of 32) into the macro-block-
// scaled scheme with the same scale and element rounding (numerics.md 5):
//
//   %q = fp4.quantize %x : tensor<16x4096xf32>
//       -> !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
// becomes
//   %q = fp4.quantize %x : tensor<16x4096xf32>
//       -> !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
//
// Only the result type changes, in place, so every use sees the new type.
// That is sound only for users whose verifiers take any scheme and whose own
// types do not depend on it: fp4.matmul, fp4.dequantize and the other fp4
// ops without quantized results (fp4.unpack excluded: its component types
// are the scheme's). A quantize with any other user (func.return, scf.yield,
// a call, fp4.unpack) is left alone with a match-failure reason, as is one
// whose blocked axis is not a multiple of the macro-block size.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fp4;

/// Whether `user` keeps verifying, with unchanged types, when one of its
/// quantized operands switches scheme.
static bool acceptsAnyScheme(Operation *user) {
  if (isa<MatmulOp, DequantizeOp>(user))
    return true;
  if (!isa_and_present<FP4Dialect>(user->getDialect()) || isa<UnpackOp>(user))
    return false;
  return llvm::none_of(user->getResultTypes(),
                       [](Type t) { return isa<QuantizedTensorType>(t); });
}

std::optional<MXFP4Attr> mlir::fp4::getMacroScalableScheme(Type type) {
  auto quantized = dyn_cast<QuantizedTensorType>(type);
  if (!quantized)
    return std::nullopt;
  auto mx = dyn_cast<MXFP4Attr>(quantized.getScheme());
  if (!mx || mx.getBlockSize() != 32)
    return std::nullopt;
  return mx;
}

namespace {
struct MacroScaleQuantize final : OpRewritePattern<QuantizeOp> {
  MacroScaleQuantize(MLIRContext *context, const MacroScaleOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    QuantizedTensorType type = op.getResult().getType();
    auto mx = dyn_cast<MXFP4Attr>(type.getScheme());
    if (!mx)
      return failure(); // Not MXFP4: nothing to say.
    if (mx.getBlockSize() != 32)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "MXFP4 blocks of " << mx.getBlockSize()
             << " elements; macro-block scaling is defined on blocks of 32";
      });
    int64_t axisSize = type.getAxisSize();
    if (options.macroBlock != 0 && axisSize % options.macroBlock != 0)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "the blocked axis has " << axisSize
             << " elements, not a multiple of macro-block = "
             << options.macroBlock;
      });
    for (Operation *user : op.getResult().getUsers())
      if (!acceptsAnyScheme(user))
        return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
          diag << "the result is used by '" << user->getName()
               << "', whose types would have to change with the scheme";
        });

    auto macro = MXFP4MacroAttr::get(op.getContext(), options.macroBlock,
                                     options.search, mx.getScaleRounding(),
                                     mx.getRounding(), mx.getSeed());
    auto newType =
        QuantizedTensorType::get(type.getShape(), macro, type.getAxis());
    rewriter.modifyOpInPlace(op, [&] { op.getResult().setType(newType); });
    return success();
  }

  MacroScaleOptions options;
};
} // namespace

void mlir::fp4::populateFP4MacroScalePatterns(
    RewritePatternSet &patterns, const MacroScaleOptions &options) {
  patterns.add<MacroScaleQuantize>(patterns.getContext(), options);
}
