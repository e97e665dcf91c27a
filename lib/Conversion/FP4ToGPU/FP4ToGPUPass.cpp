//===- FP4ToGPUPass.cpp - convert-fp4-to-gpu ------------------------------===//
//
// The pass around populateFP4ToGPUConversionPatterns (FP4ToGPUPatterns.cpp):
// validates the options into a target and kernel options, applies the
// patterns once per op with the walk driver (in program order, so kernel
// names and the manifest follow the ops) and writes the manifest. A pattern
// that declines an op leaves it on the host; its reason becomes a remark
// "stays on the host: <reason>" (option `remarks`, on by default, so that a
// run that lowers nothing says why).
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/CorrectionToGPU.h"
#include "fp4/Conversion/FP4ToGPU/FP4ToGPU.h"
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

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The patterns need the schemes' GPU models, attached when the fp4
    // dialect is loaded.
    registerSchemeGPULoweringInterfaceModels(registry);
  }

  void runOnOperation() override;

private:
  FailureOr<std::pair<GPUTarget, GPUKernelOptions>> validateOptions();
};

FailureOr<std::pair<GPUTarget, GPUKernelOptions>>
ConvertFP4ToGPUPass::validateOptions() {
  ModuleOp module = getOperation();
  std::optional<GPUTarget> target = lookupGPUTarget(chip);
  if (!target)
    return module.emitError()
           << "convert-fp4-to-gpu: unsupported chip '" << chip
           << "': the kernels need bf16 mma.sync (sm_80 or newer); "
              "supported: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, "
              "sm_120a";
  if (nativeFP4 && !target->hasNativeFP4)
    return module.emitError()
           << "convert-fp4-to-gpu: native-fp4 requested for " << chip
           << ", which has no FP4 conversion or block-scaled MMA "
              "instructions (they need sm_100a or sm_120a); use "
              "native-fp4=false for the bf16 emulation";
  if (nativeFP4)
    return module.emitError()
           << "convert-fp4-to-gpu: native-fp4 kernels for " << chip
           << " are not available in this version; use native-fp4=false "
              "(bf16 tensor-core emulation, bit-identical results)";
  auto check = [&](int64_t v, int64_t lo, int64_t hi, int64_t multiple,
                   StringRef name) -> LogicalResult {
    if (v < lo || v > hi || v % multiple != 0)
      return module.emitError()
             << "convert-fp4-to-gpu: option " << name << "=" << v
             << " is out of range (" << lo << ".." << hi
             << (multiple > 1 ? ", a multiple of " + std::to_string(multiple)
                              : std::string())
             << ")";
    return success();
  };
  if (failed(check(decodeMaxM, 0, 64, 1, "decode-max-m")) ||
      failed(check(decodeWarps, 0, 16, 1, "decode-warps")) ||
      failed(check(decodeKUnroll, 128, 1024, 128, "decode-k-unroll")) ||
      failed(check(decodeRowsPerCTA, 0, 256, 16, "decode-rows-per-cta")) ||
      failed(check(decodeSplitK, 0, 64, 1, "decode-split-k")) ||
      failed(check(decodePrefetch, 0, 2, 1, "decode-prefetch")) ||
      failed(check(decodeMaxRegisters, 0, 255, 1, "decode-max-registers")) ||
      failed(check(prefillTileM, 16, 256, 16, "prefill-tile-m")) ||
      failed(check(prefillTileN, 8, 256, 8, "prefill-tile-n")) ||
      failed(check(prefillTileK, 32, 256, 32, "prefill-tile-k")) ||
      failed(check(prefillWarpsM, 1, 8, 1, "prefill-warps-m")) ||
      failed(check(prefillWarpsN, 1, 8, 1, "prefill-warps-n")) ||
      failed(check(prefillStages, 2, 6, 1, "prefill-stages")) ||
      failed(check(elementwiseThreads, 32, 1024, 32, "elementwise-threads")))
    return failure();
  if (prefillWarpsM * prefillWarpsN > 32)
    return module.emitError() << "convert-fp4-to-gpu: prefill-warps-m * "
                                 "prefill-warps-n must be at most 32";
  if (prefillDequant != "shared" && prefillDequant != "registers")
    return module.emitError() << "convert-fp4-to-gpu: prefill-dequant must "
                                 "be 'shared' or 'registers', not '"
                              << prefillDequant << "'";
  GPUKernelOptions options;
  options.decodeMaxM = decodeMaxM;
  options.decodeWarps = decodeWarps;
  options.decodeKUnroll = decodeKUnroll;
  options.decodeRowsPerCTA = decodeRowsPerCTA;
  options.decodeSplitK = decodeSplitK;
  options.decodePrefetch = decodePrefetch;
  options.decodeMaxRegisters = decodeMaxRegisters;
  options.prefillTileM = prefillTileM;
  options.prefillTileN = prefillTileN;
  options.prefillTileK = prefillTileK;
  options.prefillWarpsM = prefillWarpsM;
  options.prefillWarpsN = prefillWarpsN;
  options.prefillStages = prefillStages;
  options.prefillDequant = prefillDequant;
  options.elementwiseThreads = elementwiseThreads;
  return std::make_pair(*target, options);
}

void ConvertFP4ToGPUPass::runOnOperation() {
  FailureOr<std::pair<GPUTarget, GPUKernelOptions>> config = validateOptions();
  if (failed(config))
    return signalPassFailure();
  ModuleOp module = getOperation();
  FP4ToGPULoweringState state(module, config->first, config->second,
                              kernelModule);
  // The accuracy-recipe ops first (CorrectionToGPU.h): a correction product
  // may become an fp4.matmul, which the conversion patterns then take.
  bool missingModel = false;
  FP4GPULaunchHooks hooks{
      state.getTarget(), state.getOptions(),
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
  if (missingModel)
    return signalPassFailure();
  HostRemarkListener listener;
  RewritePatternSet patterns(&getContext());
  populateFP4ToGPUConversionPatterns(patterns, state);
  walkAndApplyPatterns(module, std::move(patterns),
                       remarks ? &listener : nullptr);
  state.finalize();
}

} // namespace
