//===- Registration.cpp - register fp4 (and upstream) from C --------------===//
//
// The upstream registration functions live in libMLIR.so, like every MLIR
// symbol this library uses: one copy of the registries per process.
//
//===----------------------------------------------------------------------===//

#include "fp4-c/Registration.h"

#include "fp4/InitAll.h"
#include "mlir/CAPI/IR.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include <mutex>

void fp4RegisterDialects(MlirDialectRegistry registry) {
  mlir::fp4::registerAllDialects(*unwrap(registry));
}

void fp4RegisterPasses(void) {
  // Pipeline registration refuses duplicates, and Python may create many
  // contexts: register once per process.
  static std::once_flag once;
  std::call_once(once, [] { mlir::fp4::registerAllPasses(); });
}

void fp4RegisterAllDialects(MlirDialectRegistry registry) {
  mlir::DialectRegistry &reg = *unwrap(registry);
  mlir::registerAllDialects(reg);
  mlir::registerAllExtensions(reg);
  mlir::registerAllToLLVMIRTranslations(reg);
  // Last, so that fp4's extensions see the upstream dialects they extend.
  mlir::fp4::registerAllDialects(reg);
}

void fp4RegisterAllPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { mlir::registerAllPasses(); });
  fp4RegisterPasses();
}

MlirContext fp4ContextCreate(bool threadingEnabled) {
  mlir::DialectRegistry registry;
  fp4RegisterAllDialects(wrap(&registry));
  auto *ctx = new mlir::MLIRContext(
      registry, threadingEnabled ? mlir::MLIRContext::Threading::ENABLED
                                 : mlir::MLIRContext::Threading::DISABLED);
  return wrap(ctx);
}
