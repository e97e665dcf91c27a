//===- FP4ToGPU.h - fp4 ops to GPU kernels as rewrite patterns --*- C++ -*-===//
//
// The patterns of convert-fp4-to-gpu, public so that other compilers can
// lower fp4 ops to our kernels without our pass: one pattern per op kind
// (fp4.matmul, fp4.quantize with a fused fp4.rotate, fp4.dequantize), each
// replacing its op with a kernel in a gpu.module plus host launch code, or
// failing with a reason (notifyMatchFailure) when the op stays on the host.
// The patterns of one module share an FP4ToGPULoweringState: the chip
// description, the option overrides of the config selection, the gpu.module
// and the launch plans (#fp4.launch_plan), which finalize() records in the
// module's #fp4.gpu_manifest for fp4-export-gpu-kernels. Each op's kernel
// follows its #fp4.gpu_config: the op's own `fp4.gpu_config` attribute when
// present, else the selection's (GPUConfigSelection.h).
//
// Typical use (what the pass does):
//
//   FP4ToGPULoweringState state(module, getChipDescription(GPUChip::SM90),
//                               overrides, "fp4_kernels");
//   RewritePatternSet patterns(ctx);
//   populateFP4ToGPUConversionPatterns(patterns, state);
//   walkAndApplyPatterns(module, std::move(patterns), &listener);
//   state.finalize();
//
// The patterns create IR only when they succeed (the kernel families build
// their kernels with their own builder and remove declined attempts), so any
// driver may run them; they never match ops inside a gpu.module. (The one
// exception is an invalid launch plan, a kernel family's bug: the pattern
// then fails with an error after creating the operands' fp4.unpack, and the
// pass fails.)
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_FP4TOGPU_H
#define FP4_CONVERSION_FP4TOGPU_FP4TOGPU_H

#include "fp4/Conversion/FP4ToGPU/GPUConfigSelection.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"
#include "fp4/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir {
namespace fp4 {

/// What the patterns of one module share.
class FP4ToGPULoweringState {
public:
  FP4ToGPULoweringState(ModuleOp module, const ChipDescription &target,
                        GPUConfigOverrides overrides,
                        StringRef kernelModuleName)
      : module(module), target(target), overrides(std::move(overrides)),
        kernelModuleName(kernelModuleName) {}

  const GPUTarget &getTarget() const { return target; }
  const GPUConfigOverrides &getOverrides() const { return overrides; }
  /// The kernel configuration of `op` (its own, else the selection's).
  GPUConfigAttr getConfig(Operation *op) const {
    return getOrSelectGPUConfig(op, target, overrides);
  }
  StringRef getKernelModuleName() const { return kernelModuleName; }
  /// Whether the patterns remark on plans that are not what the selection
  /// chose (the pass's `remarks` option).
  bool remarksEnabled() const { return remarks; }
  void setRemarks(bool enabled) { remarks = enabled; }

  /// The gpu.module the kernels go to (created on first use; the module
  /// becomes a gpu container module).
  gpu::GPUModuleOp getOrCreateKernelModule();
  /// A fresh kernel symbol `stem`_N in the kernel module.
  std::string nextKernelName(StringRef stem);

  /// Host code for `plan` over `args` (inputs first, `inputTensors` carrying
  /// them, then outputs): a private launch function declared with the plan
  /// as a typed #fp4.launch_plan (attribute fp4.launch_plan; bodies by
  /// fp4-gpu-materialize-launches) and its call between
  /// bufferization.to_buffer / to_tensor, at the rewriter's insertion point.
  /// Records the plan for the module's manifest. Returns the tensors of
  /// `outputs` (KernelArg name, type), or failure, with an error on `op` and
  /// the plan's kernels erased, when the plan does not verify (a kernel
  /// family's bug; hasInvalidPlan() then says so).
  FailureOr<SmallVector<Value>>
  emitHostLaunch(RewriterBase &rewriter, Operation *op, const KernelPlan &plan,
                 ArrayRef<KernelArg> args, ArrayRef<Value> inputTensors,
                 ArrayRef<std::pair<std::string, RankedTensorType>> outputs);

  /// Whether emitHostLaunch rejected a plan (the pass then fails).
  bool hasInvalidPlan() const { return invalidPlan; }

  /// Sets the module's manifest (#fp4.gpu_manifest, attribute
  /// fp4.gpu_manifest: the chip and every recorded plan, after those of an
  /// existing manifest) when a kernel was generated; returns whether one
  /// was.
  bool finalize();

private:
  /// The typed plan of `plan` over `args` (the first `numInputs` are
  /// inputs); null, with an error on `op`, when it does not verify.
  LaunchPlanAttr buildLaunchPlan(Operation *op, const KernelPlan &plan,
                                 ArrayRef<KernelArg> args, size_t numInputs);

  ModuleOp module;
  GPUTarget target;
  GPUConfigOverrides overrides;
  std::string kernelModuleName;
  gpu::GPUModuleOp kernelModule;
  unsigned kernelCounter = 0;
  SmallVector<LaunchPlanAttr> plans;
  bool invalidPlan = false;
  bool remarks = true;
};

/// Appends the kernel arguments of `value` named `name` (its components,
/// named by the scheme's GPU model, when quantized) and returns the host
/// tensors carrying them (fp4.unpack of a quantized value). Fails when a
/// quantized value's scheme has no GPU lowering model. For patterns outside
/// this file that launch kernels through FP4ToGPULoweringState.
FailureOr<SmallVector<Value>> appendKernelArgs(RewriterBase &rewriter,
                                               Location loc, Value value,
                                               StringRef name,
                                               SmallVector<KernelArg> &args);

/// Adds the patterns lowering fp4.matmul, fp4.quantize (with a producing
/// fp4.rotate fused) and fp4.dequantize to GPU kernels. `state` must
/// outlive the patterns. The schemes' SchemeGPULoweringAttrInterface models
/// must be registered (registerSchemeGPULoweringInterfaceModels).
void populateFP4ToGPUConversionPatterns(RewritePatternSet &patterns,
                                        FP4ToGPULoweringState &state,
                                        PatternBenefit benefit = 1);

/// convert-fp4-to-gpu with its TableGen'd options and the chip / kernel
/// options of `selection` (GPUConfigOptions.h), as fp4-pipeline-nvvm
/// creates it.
std::unique_ptr<Pass>
createConvertFP4ToGPUPass(const ConvertFP4ToGPUOptions &options,
                          const GPUSelectionOptions &selection);

} // namespace fp4
} // namespace mlir

#endif // FP4_CONVERSION_FP4TOGPU_FP4TOGPU_H
