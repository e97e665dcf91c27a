//===- CPUPipeline.cpp - fp4-pipeline-cpu ---------------------------------===//
//
// Every step is an upstream pass except the first; the order is the usual
// tensor -> buffer -> loops -> LLVM progression. A few choices matter:
//  * function boundaries are bufferized with identity layouts, so exported
//    functions take plain memref descriptors (what runners and the C
//    interface expect) and dense/dense_resource constants become
//    memref.global, which LLVM translation keeps as globals;
//  * lower-affine runs after expand-strided-metadata, which creates
//    affine.apply for subview offsets;
//  * arith is lowered without any fast-math, keeping the numerics rules'
//    one-rounding-per-operation guarantee;
//  * math: LLVM intrinsics where LLVM has one (exp, sqrt, log, ...), libm
//    calls for the rest (erf of exact GELU, tanh); rsqrt is expanded to
//    1 / sqrt first, since math-to-llvm has no pattern for it and libm has
//    no rsqrtf. llvm-request-c-wrappers (c-wrappers) runs first, before
//    the libm conversion creates declarations it would otherwise give C
//    wrappers that no library defines;
//  * fast changes the loops, not the arithmetic: each output element sees
//    the same operations in the same order (see fp4-contraction-loop-order
//    and fp4-contraction-to-runtime-call, whose kernel in
//    libfp4_cpu_runtime.so does the loops' multiply-then-add in k order),
//    so it is bit-identical to the default lowering;
//  * the last step, fp4-reproducible-output, gives bufferization's constant
//    globals canonical names, so the output does not change between runs.
//
//===----------------------------------------------------------------------===//

#include "fp4/Pipelines/Pipelines.h"

#include "fp4/Conversion/Passes.h"
#include "fp4/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fp4::buildFP4CPUPipeline(OpPassManager &pm,
                                    const FP4CPUPipelineOptions &options) {
  // Only the functions the user wrote get C wrappers: not the outlined
  // async tasks of `fast`, nor the libm declarations created later.
  if (options.cWrappers)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  if (options.mergeCorrections)
    pm.addPass(createFP4MergeConstantCorrections());
  pm.addPass(createConvertFP4ToLinalg());
  // Elementwise arith/math on tensors (common in hand-written and frontend
  // IR around the fp4 ops) has no bufferization: make it linalg first.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.fast)
    pm.addNestedPass<func::FuncOp>(createFP4FuseElementwise());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Weights as flat LLVM arrays (a nested array per row was most of the
  // JIT's time on a real model).
  pm.addPass(createFP4FlattenConstantGlobals());
  if (options.fast && options.microkernels)
    pm.addPass(createFP4ContractionToRuntimeCall());
  if (options.fast && !options.parallelLoops) {
    pm.addNestedPass<func::FuncOp>(createFP4ContractionLoopOrder());
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  } else if (options.fast) {
    pm.addNestedPass<func::FuncOp>(createFP4ContractionLoopOrder());
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createCanonicalizerPass());
    AsyncParallelForPassOptions parallelFor;
    parallelFor.asyncDispatch = true;
    parallelFor.numWorkerThreads = options.threads;
    parallelFor.minTaskSize = options.minTaskSize;
    pm.addPass(createAsyncParallelForPass(parallelFor));
    pm.addPass(createAsyncToAsyncRuntimePass());
    pm.addPass(createAsyncRuntimeRefCountingPass());
    pm.addPass(createAsyncRuntimeRefCountingOptPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A model's hundreds of loop nests in one function make LLVM's loop
  // passes superlinear (IndVarSimplify: 30 s of 36 at -O1 on MiniLM).
  if (options.fast)
    pm.addPass(createFP4OutlineLoopNests());
  if (!options.lowerToLLVM) {
    pm.addPass(createFP4ReproducibleOutput());
    return;
  }

  // Vector ops appear when a scheme model or the user builds vectorized
  // element code (ArithOps supports vector values) or prints.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  if (options.fast && options.parallelLoops)
    pm.addPass(createConvertAsyncToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createFP4ReproducibleOutput());
}

void mlir::fp4::registerFP4Pipelines() {
  PassPipelineRegistration<FP4CPUPipelineOptions>(
      "fp4-pipeline-cpu",
      "Lower fp4 IR on tensors to the LLVM dialect for CPU execution "
      "(convert-fp4-to-linalg, bufferization, loops, LLVM)",
      buildFP4CPUPipeline);
  PassPipelineRegistration<FP4NVVMPipelineOptions>(
      "fp4-pipeline-nvvm",
      "Lower fp4 IR on tensors to GPU kernels (PTX/cubin in gpu.binary) plus "
      "LLVM-dialect host code that launches them (convert-fp4-to-gpu, the "
      "CPU pipeline's host steps, NVVM, gpu-module-to-binary)",
      buildFP4NVVMPipeline);
}
