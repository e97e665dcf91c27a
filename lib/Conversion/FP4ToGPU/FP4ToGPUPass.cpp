//===- FP4ToGPUPass.cpp - convert-fp4-to-gpu ------------------------------===//
//
// The pass around populateFP4ToGPUConversionPatterns (FP4ToGPUPatterns.cpp):
// validates the chip and kernel options against the chip description (and
// the configs already on ops against the chip's limits), applies the
// patterns once per op with the walk driver (in program order, so kernel
// names and the manifest follow the ops) and writes the manifest. A pattern
// that declines an op leaves it on the host; its reason becomes a remark
// "stays on the host: <reason>" (option `remarks`, on by default, so that a
// run that lowers nothing says why).
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/CorrectionToGPU.h"
#include "fp4/Conversion/FP4ToGPU/FP4ToGPU.h"
#include "fp4/Conversion/FP4ToGPU/GPUConfigOptions.h"
#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_CONVERTFP4TOGPU
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// Turns the patterns' match failure reasons into remarks.
struct HostRemarkListener : public RewriterBase::Listener {
  void notifyMatchFailure(
      Location loc, function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic reason(loc, DiagnosticSeverity::Remark);
    reasonCallback(reason);
    emitRemark(loc) << "stays on the host: " << reason.str();
  }
};

struct ConvertFP4ToGPUPass
    : public fp4::impl::ConvertFP4ToGPUBase<ConvertFP4ToGPUPass> {
  using Base::Base;
  ConvertFP4ToGPUPass() = default;
  // The options of gpuOptions are re-registered; their values are copied by
  // the pass manager (copyOptionValuesFrom).
  ConvertFP4ToGPUPass(const ConvertFP4ToGPUPass &other) : Base(other) {}

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The patterns need the schemes' GPU models, attached when the fp4
    // dialect is loaded.
    registerSchemeGPULoweringInterfaceModels(registry);
  }

  void runOnOperation() override;

  /// chip, native-fp4 and the kernel options (GPUConfigOptions.h).
  GPUConfigOptionSet<Option, Pass> gpuOptions{*this};
};

void ConvertFP4ToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  GPUSelectionOptions selection = gpuOptions.getSelection();
  const ChipDescription &chip = selection.getChip();
  if (failed(verifyGPUSelection(module, getArgument(), selection)))
    return signalPassFailure();
  FP4ToGPULoweringState state(module, chip, selection.overrides, kernelModule);
  state.setRemarks(remarks);
  // The accuracy-recipe ops first (CorrectionToGPU.h): a correction product
  // may become an fp4.matmul, which the conversion patterns then take.
  bool missingModel = false;
  FP4GPULaunchHooks hooks{
      state.getTarget(),
      state.getOverrides(),
      [&] { return state.getOrCreateKernelModule(); },
      [&](StringRef stem) { return state.nextKernelName(stem); },
      [&](RewriterBase &rewriter, Location loc, Value value, StringRef name,
          SmallVector<KernelArg> &args) {
        FailureOr<SmallVector<Value>> inputs =
            appendKernelArgs(rewriter, loc, value, name, args);
        if (succeeded(inputs))
          return *inputs;
        missingModel = true;
        emitError(loc) << "convert-fp4-to-gpu: the scheme of '" << name
                       << "' has no GPU lowering model";
        return SmallVector<Value>{value};
      },
      [&](RewriterBase &rewriter, Operation *op, const KernelPlan &plan,
          ArrayRef<KernelArg> args, ArrayRef<Value> inputs,
          ArrayRef<std::pair<std::string, RankedTensorType>> outputs)
          -> FailureOr<SmallVector<Value>> {
        return state.emitHostLaunch(rewriter, op, plan, args, inputs,
                                    outputs);
      },
      remarks};
  // The correction patterns emit their remarks themselves (hooks.remarks).
  RewritePatternSet correctionPatterns(&getContext());
  populateFP4CorrectionToGPUPatterns(correctionPatterns, hooks);
  walkAndApplyPatterns(module, std::move(correctionPatterns));
  if (missingModel || state.hasInvalidPlan())
    return signalPassFailure();
  HostRemarkListener listener;
  RewritePatternSet patterns(&getContext());
  populateFP4ToGPUConversionPatterns(patterns, state);
  walkAndApplyPatterns(module, std::move(patterns),
                       remarks ? &listener : nullptr);
  if (state.hasInvalidPlan())
    return signalPassFailure();
  state.finalize();
}

} // namespace

std::unique_ptr<Pass>
mlir::fp4::createConvertFP4ToGPUPass(const ConvertFP4ToGPUOptions &options,
                                     const GPUSelectionOptions &selection) {
  auto pass = std::make_unique<ConvertFP4ToGPUPass>(options);
  pass->gpuOptions.setSelection(selection);
  return pass;
}
