//===- FP4ToLinalg.cpp - type conversion and pattern assembly -------------===//
//
// !fp4.tensor converts 1:N to its component tensors; function signatures,
// calls, returns, branches and scf ops carrying quantized values are
// converted by the upstream structural patterns, so functions taking and
// returning !fp4.tensor lower to functions over the components.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToLinalg/FP4ToLinalg.h"

#include "OpLowerings.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;

void mlir::fp4::populateFP4ToLinalgTypeConversion(TypeConverter &converter) {
  converter.addConversion(
      [](QuantizedTensorType type,
         SmallVectorImpl<Type> &results) -> std::optional<LogicalResult> {
        llvm::append_range(results, type.getComponentTypes());
        return success();
      });
}

void mlir::fp4::populateFP4ToLinalgConversionPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  detail::populateQuantizeOpLowering(converter, patterns);
  detail::populateDequantizeOpLowering(converter, patterns);
  detail::populateMatmulOpLowering(converter, patterns);
  detail::populatePackUnpackOpLowering(converter, patterns);
  detail::populateSplitOutliersOpLowering(converter, patterns);
  detail::populateSplitChannelsOpLowering(converter, patterns);
  detail::populateResidualOpLowering(converter, patterns);
  detail::populateCorrectionMatmulOpLowering(converter, patterns);
  detail::populateRotateOpLowering(converter, patterns);
}

void mlir::fp4::populateFP4ToLinalgConversion(TypeConverter &converter,
                                              RewritePatternSet &patterns,
                                              ConversionTarget &target) {
  // Conversions are tried last-added first: identity is the fallback.
  converter.addConversion([](Type type) { return type; });
  populateFP4ToLinalgTypeConversion(converter);

  populateFP4ToLinalgConversionPatterns(converter, patterns);
  target.addIllegalDialect<FP4Dialect>();

  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  target.addDynamicallyLegalOp<func::FuncOp>([&converter](func::FuncOp op) {
    return converter.isSignatureLegal(op.getFunctionType()) &&
           converter.isLegal(&op.getBody());
  });
  populateCallOpTypeConversionPattern(patterns, converter);
  target.addDynamicallyLegalOp<func::CallOp>(
      [&converter](func::CallOp op) { return converter.isLegal(op); });
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateBranchOpInterfaceTypeConversionPattern(patterns, converter);
  target.markUnknownOpDynamicallyLegal([&converter](Operation *op) {
    return isNotBranchOpInterfaceOrReturnLikeOp(op) ||
           isLegalForBranchOpInterfaceTypeConversionPattern(op, converter) ||
           isLegalForReturnOpTypeConversionPattern(op, converter);
  });
  // scf.for/if/while carrying quantized values (after the catch-all above,
  // so its legality rules for scf ops take precedence).
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
}
