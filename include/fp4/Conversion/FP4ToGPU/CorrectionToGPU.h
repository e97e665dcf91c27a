//===- CorrectionToGPU.h - accuracy-recipe ops to GPU kernels ---*- C++ -*-===//
//
// Patterns that put the ops of the accuracy transforms (fp4-outlier-fallback,
// fp4-residual, fp4-rotate's standalone rotations and permutations) on the GPU, so that a
// whole recipe compiled by fp4-pipeline-nvvm leaves no fp4 op on the host:
//
//   fp4.split_outliers, fp4.residual  -> one block top-k kernel
//   fp4.split_channels                -> one channel-split kernel
//   fp4.rotate (not fused into a quantize) -> one rotation kernel (in
//       registers for stride 1 and size <= 64, else staged in shared memory:
//       the two-level mode's cross-block rotation)
//   fp4.permute                       -> one gather kernel (two-level mode)
//   fp4.correction_matmul             -> a sparse (gather) product kernel, or,
//       for a dense-enough bf16 sparse lhs against a quantized rhs, a
//       densify kernel + fp4.matmul (the W4A16 tensor-core families) + an
//       accumulate kernel
//
// The patterns build kernels with the KernelBuilders.h conventions and leave
// the host side (launch function, buffers, manifest entry) to the
// conversion that owns it, through FP4GPULaunchHooks, so they do not depend
// on how convert-fp4-to-gpu is organized.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_CORRECTIONTOGPU_H
#define FP4_CONVERSION_FP4TOGPU_CORRECTIONTOGPU_H

#include "fp4/Conversion/FP4ToGPU/GPUConfigSelection.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>
#include <utility>

namespace mlir::fp4 {

/// What the patterns need from the conversion that hosts them.
struct FP4GPULaunchHooks {
  GPUTarget target;
  /// The option overrides of the kernel-config selection.
  GPUConfigOverrides options;
  /// The gpu.module the kernels go into (created on first use).
  std::function<gpu::GPUModuleOp()> getKernelModule;
  /// A fresh kernel symbol name from `stem`.
  std::function<std::string(StringRef stem)> nextKernelName;
  /// Appends the kernel arguments of `value` named `name` (its ABI
  /// components when quantized) and returns the host tensors carrying them.
  std::function<SmallVector<Value>(RewriterBase &, Location, Value value,
                                   StringRef name, SmallVector<KernelArg> &)>
      appendArgs;
  /// Host code launching `plan` over `args` (inputs first, bound to
  /// `inputs`); returns the tensors of the named outputs.
  std::function<FailureOr<SmallVector<Value>>(
      RewriterBase &, Operation *op, const KernelPlan &plan,
      ArrayRef<KernelArg> args, ArrayRef<Value> inputs,
      ArrayRef<std::pair<std::string, RankedTensorType>> outputs)>
      emitHost;
  /// Whether a declined op is reported as a remark ("stays on the host").
  bool remarks = true;
};

/// Adds one pattern per op above. `hooks` must outlive the patterns. Ops the
/// kernels cannot take fail to match with the reason (and a remark when
/// hooks.remarks) and stay for the CPU lowering. Run them before the
/// conversion of fp4.matmul / fp4.quantize so that the fp4.matmul a
/// correction product may become is converted too.
void populateFP4CorrectionToGPUPatterns(RewritePatternSet &patterns,
                                        const FP4GPULaunchHooks &hooks);

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOGPU_CORRECTIONTOGPU_H
