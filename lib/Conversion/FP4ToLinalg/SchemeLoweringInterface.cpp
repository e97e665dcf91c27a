//===- SchemeLoweringInterface.cpp - per-scheme CPU lowering --------------===//

#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::fp4;

#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.cpp.inc"

void mlir::fp4::registerSchemeLoweringInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, FP4Dialect *) {
    registerMXFP4LoweringModel(context);
    registerNVFP4LoweringModel(context);
    registerHiF4LoweringModel(context);
    registerMXFP4MacroLoweringModel(context);
  });
}
