//===- GPUSelectConfigPass.cpp - fp4-gpu-select-config --------------------===//
//
// The selection step alone: attaches the #fp4.gpu_config each op would get
// in convert-fp4-to-gpu, so that it can be inspected, tested or edited (a
// per-layer search) before the conversion, which honours it.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/GPUConfigOptions.h"
#include "fp4/Conversion/FP4ToGPU/GPUConfigSelection.h"
#include "fp4/Conversion/Passes.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4GPUSELECTCONFIG
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct FP4GPUSelectConfigPass
    : public fp4::impl::FP4GPUSelectConfigBase<FP4GPUSelectConfigPass> {
  using Base::Base;
  FP4GPUSelectConfigPass() = default;
  FP4GPUSelectConfigPass(const FP4GPUSelectConfigPass &other) : Base(other) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GPUSelectionOptions selection = gpuOptions.getSelection();
    const ChipDescription &chip = selection.getChip();
    if (failed(verifyGPUSelection(module, getArgument(), selection)))
      return signalPassFailure();
    unsigned attached = 0;
    module.walk([&](Operation *op) {
      if (!isa<MatmulOp, QuantizeOp, DequantizeOp>(op) ||
          op->hasAttr(GPUConfigAttr::kAttrName))
        return;
      if (GPUConfigAttr config =
              selectGPUConfig(op, chip, selection.overrides)) {
        op->setAttr(GPUConfigAttr::kAttrName, config);
        ++attached;
      } else {
        op->emitRemark() << getArgument()
                         << ": no kernel configuration (dynamic M)";
      }
    });
    if (attached == 0)
      module.emitWarning() << getArgument()
                           << ": no fp4.matmul, fp4.quantize or "
                              "fp4.dequantize without a gpu_config";
  }

  /// chip, native-fp4 and the kernel options (GPUConfigOptions.h).
  GPUConfigOptionSet<Option, Pass> gpuOptions{*this};
};

} // namespace
