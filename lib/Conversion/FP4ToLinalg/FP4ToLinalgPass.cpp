//===- FP4ToLinalgPass.cpp - convert-fp4-to-linalg ------------------------===//
//
// Assembles populateFP4ToLinalgConversion and runs a partial conversion:
// every fp4 op must go, everything else is rewritten only where it carries
// quantized values.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToLinalg/FP4ToLinalg.h"
#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_CONVERTFP4TOLINALG
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// Ops that carry quantized values through the lowering: the fp4 ops and the
/// ops the structural patterns of populateFP4ToLinalgConversion rewrite.
bool carriesQuantizedValues(Operation *op) {
  return isa<FP4Dialect>(op->getDialect()) ||
         isa<func::FuncOp, func::CallOp, func::ReturnOp, BranchOpInterface,
             scf::ForOp, scf::IfOp, scf::WhileOp, scf::ConditionOp,
             scf::YieldOp, scf::IndexSwitchOp>(op);
}

bool isQuantized(Type type) { return isa<QuantizedTensorType>(type); }

/// Any other op with a quantized operand, result or block argument would be
/// left with an unresolvable cast; say which op and why instead.
LogicalResult checkQuantizedUsers(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    if (carriesQuantizedValues(op))
      return WalkResult::advance();
    auto hasQuantized = [](TypeRange types) {
      return llvm::any_of(types, isQuantized);
    };
    bool quantized = hasQuantized(op->getOperandTypes()) ||
                     hasQuantized(op->getResultTypes());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        quantized |= hasQuantized(block.getArgumentTypes());
    if (!quantized)
      return WalkResult::advance();
    op->emitOpError()
        << "carries a quantized tensor (!fp4.tensor), which "
           "convert-fp4-to-linalg cannot lower: only fp4 ops, func.func/"
           "call/return, branches and scf.for/if/while/index_switch may "
           "take or produce quantized values; dequantize first or move the "
           "value through one of those";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct ConvertFP4ToLinalgPass
    : public fp4::impl::ConvertFP4ToLinalgBase<ConvertFP4ToLinalgPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The pass works without fp4::registerAllDialects: the scheme models
    // attach when the fp4 dialect is loaded.
    registerSchemeLoweringInterfaceModels(registry);
  }

  void runOnOperation() override {
    if (failed(checkQuantizedUsers(getOperation())))
      return signalPassFailure();
    MLIRContext *context = &getContext();
    TypeConverter converter;
    RewritePatternSet patterns(context);
    ConversionTarget target(*context);
    populateFP4ToLinalgConversion(converter, patterns, target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
