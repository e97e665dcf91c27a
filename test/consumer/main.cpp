//===- main.cpp - a C++ embedder of fp4-mlir ------------------------------===//
//
// What another compiler does with the installed package: register the fp4
// dialects and passes (fp4/InitAll.h), parse IR containing fp4 ops, build fp4
// types from C++, run a pass pipeline by name, print the result. Exits
// non-zero (with the MLIR diagnostic on stderr) if any step fails.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

static const char *kModule = R"mlir(
func.func @matmul(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>)
                     outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

func.func @roundtrip(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  mlir::fp4::registerAllDialects(registry);
  mlir::fp4::registerAllPasses();
  mlir::registerCanonicalizerPass();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  if (!module) {
    llvm::errs() << "consumer: failed to parse the module\n";
    return 1;
  }

  // Types and attributes from C++, through the installed generated headers.
  auto scheme = mlir::fp4::NVFP4Attr::get(
      &context, /*fourOverSix=*/true, /*tile2d=*/false,
      mlir::fp4::ElementRounding::NearestEven, /*seed=*/0);
  auto type = mlir::fp4::QuantizedTensorType::get({16, 128}, scheme, 1);
  llvm::outs() << "type: " << type << "\n";
  llvm::outs() << "components: " << type.getComponentTypes().size() << "\n";

  // The quantization pass if this build has it, canonicalize in any case.
  // The text is added to a pass manager anchored on builtin.module, so it
  // names no anchor itself.
  std::string pipeline;
  if (mlir::PassInfo::lookup("fp4-quantize"))
    pipeline += "fp4-quantize{scheme=nvfp4},";
  pipeline += "canonicalize";
  llvm::outs() << "pipeline: " << pipeline << "\n";

  mlir::PassManager pm(&context);
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, errorStream))) {
    llvm::errs() << "consumer: bad pipeline: " << error << "\n";
    return 1;
  }
  if (mlir::failed(pm.run(*module))) {
    llvm::errs() << "consumer: pass pipeline failed\n";
    return 1;
  }
  module->print(llvm::outs());
  llvm::outs() << "\nconsumer: ok\n";
  return 0;
}
