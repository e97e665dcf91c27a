//===- SchemeGPULoweringInterface.cpp - per-scheme GPU lowering -----------===//

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::fp4;

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.cpp.inc"

void mlir::fp4::registerSchemeGPULoweringInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, FP4Dialect *) {
    registerMXFP4GPULoweringModel(context);
    registerNVFP4GPULoweringModel(context);
    registerHiF4GPULoweringModel(context);
    registerMXFP4MacroGPULoweringModel(context);
  });
}
