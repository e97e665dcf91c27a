//===- InitAll.cpp - register every fp4 dialect, pass and pipeline --------===//

#include "fp4/InitAll.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Conversion/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Pipelines/Pipelines.h"
#include "fp4/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::fp4::registerAllDialects(DialectRegistry &registry) {
  registry.insert<fp4::FP4Dialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, tensor::TensorDialect>();
  registerSchemeLoweringInterfaceModels(registry);
  registerSchemeGPULoweringInterfaceModels(registry);
}

void mlir::fp4::registerAllPasses() {
  registerFP4Quantize();
  registerFP4FoldConstants();
  registerFP4Rotate();
  registerFP4ErrorReport();
  registerFP4MacroScale();
  registerFP4OutlierFallback();
  registerFP4Residual();
  registerFP4MergeConstantCorrections();
  registerConvertFP4ToLinalg();
  registerConvertFP4ToGPU();
  registerFP4GPUSelectConfig();
  registerFP4ExportGPUKernels();
  registerFP4CheckCUDAToolkit();
  registerFP4MaterializeGPULaunches();
  registerFP4GPUDependentLaunch();
  registerFP4ReproducibleOutput();
  registerFP4ContractionLoopOrder();
  registerFP4ContractionToRuntimeCall();
  registerFP4FlattenConstantGlobals();
  registerFP4FuseElementwise();
  registerFP4OutlineLoopNests();
  registerFP4Pipelines();
}
