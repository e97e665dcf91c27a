//===- FP4Plugin.cpp - fp4 as an mlir-opt plugin --------------------------===//
//
// Entry points of the upstream plugin API (mlir/Tools/Plugins), so a stock
// mlir-opt gains the fp4 dialect, every fp4 pass and both pipelines:
//
//   mlir-opt --load-dialect-plugin=FP4Plugin.so \
//            --load-pass-plugin=FP4Plugin.so in.mlir -fp4-quantize ...
//
// One library serves both flags. It links libMLIR.so like mlir-opt itself,
// so the process holds one copy of MLIR (one pass registry, one TypeID per
// class); a plugin with the static MLIR archives inside would register
// everything twice.
//
//===----------------------------------------------------------------------===//

#include "fp4/InitAll.h"
#include "fp4/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

using namespace mlir;

static void registerFP4Dialects(DialectRegistry *registry) {
  fp4::registerAllDialects(*registry);
  // fp4-pipeline-nvvm's gpu-module-to-binary translates kernels to LLVM IR
  // in-process; register every translation so the plugin does not depend on
  // which ones the host tool happened to register.
  registerAllToLLVMIRTranslations(*registry);
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FP4",
          fp4::getFP4Version().data(), registerFP4Dialects};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FP4", fp4::getFP4Version().data(),
          [] { fp4::registerAllPasses(); }};
}
