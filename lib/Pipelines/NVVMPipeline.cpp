//===- NVVMPipeline.cpp - fp4-pipeline-nvvm -------------------------------===//
//
// The GPU counterpart of fp4-pipeline-cpu. The order follows upstream's
// gpu-lower-to-nvvm-pipeline, with the project's choices:
//  * the host part is exactly the CPU pipeline's (fp4 ops left on the host
//    lower there too, so a module mixes both freely), math included (erf,
//    rsqrt, tanh of real models: libm or expanded);
//  * kernels take bare pointers (static shapes): one parameter per buffer,
//    the ABI the Python launcher and the manifest describe;
//  * the PTX ISA version is given explicitly (the upstream default +ptx60
//    is rejected for sm_90, toolchain.md);
//  * the chip is an enum option over the chip description's table, whose
//    row gives both the kernels' limits and the NVVM target (chip, PTX
//    ISA), so an unsupported chip is an option error, not an LLVM crash;
//  * the output is reproducible: no compile times unless keep-compile-times;
//  * a missing ptxas is one line from fp4-check-cuda-toolkit, not the
//    serializer's error with the whole kernel module attached.
//
//===----------------------------------------------------------------------===//

#include "fp4/Pipelines/Pipelines.h"

#include "fp4/Conversion/FP4ToGPU/CUDAToolkit.h"
#include "fp4/Conversion/FP4ToGPU/FP4ToGPU.h"
#include "fp4/Conversion/Passes.h"
#include "fp4/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fp4::buildFP4NVVMPipeline(OpPassManager &pm,
                                     const FP4NVVMPipelineOptions &options) {
  GPUSelectionOptions selection = options.gpuOptions.getSelection();
  const ChipDescription &chip = selection.getChip();
  pm.addPass(createConvertFP4ToGPUPass(ConvertFP4ToGPUOptions(), selection));
  if (options.dependentLaunch) {
    FP4GPUDependentLaunchOptions dependent;
    if (options.dependentPrefetchBytes.hasValue())
      dependent.prefetchBytes = options.dependentPrefetchBytes;
    pm.addPass(createFP4GPUDependentLaunch(dependent));
  }

  // Host: identical to fp4-pipeline-cpu up to loops.
  FP4CPUPipelineOptions host;
  host.lowerToLLVM = false;
  buildFP4CPUPipeline(pm, host);
  pm.addPass(createFP4MaterializeGPULaunches());

  // Both sides to LLVM/NVVM.
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions attach;
  attach.triple = "nvptx64-nvidia-cuda";
  // The NVVM target comes from the same chip description as the kernels.
  attach.chip = chip.chip.str();
  attach.features = chip.ptxFeatures.str();
  attach.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  // Host math as in fp4-pipeline-cpu: rsqrt expanded (math-to-llvm has no
  // pattern, libm no rsqrtf), LLVM intrinsics where LLVM has one, libm for
  // the rest (erf of exact GELU, tanh). Here, after the kernels became
  // NVVM, so device math keeps its libdevice lowering; libm's func.call
  // declarations need a second func-to-llvm.
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt"};
  pm.addPass(math::createMathExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // The toolkit is resolved here, not left to gpu-module-to-binary, so the
  // check and the serializer look in the same place.
  std::string toolkit = resolveCUDAToolkitPath(options.cudaPath).path;
  pm.addPass(createFP4CheckCUDAToolkitPass(options.format, options.cudaPath));
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = stringifyGPUImageFormat(options.format).str();
  toBinary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  // Canonical constant globals and no compile times in the gpu.object
  // properties: the same input gives the same bytes.
  FP4ReproducibleOutputOptions reproducible;
  reproducible.keepCompileTimes = options.keepCompileTimes;
  pm.addPass(createFP4ReproducibleOutput(reproducible));
  // Always: without export-dir it writes nothing but still consumes the
  // module's #fp4.gpu_manifest, which mlir-translate could not parse.
  FP4ExportGPUKernelsOptions exportOptions;
  exportOptions.dir = options.exportDir;
  pm.addPass(createFP4ExportGPUKernels(exportOptions));
}
