//===- CUDAToolkit.cpp - fp4-check-cuda-toolkit ---------------------------===//
//
// Without ptxas, gpu-module-to-binary fails with an error attached to the
// gpu.module, and mlir-opt prints that whole (LLVM dialect) module as a note:
// hundreds of KB that bury the one useful sentence (a missing libdevice is
// reported the same way, even for PTX). This pass runs just before it and
// reports what is missing in one line: which tool or file, where it was
// looked for, and how to point at a toolkit.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/CUDAToolkit.h"
#include "fp4/Conversion/FP4ToGPU/GPUConfigOptions.h"
#include "fp4/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4CHECKCUDATOOLKIT
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

fp4::CUDAToolkitPath fp4::resolveCUDAToolkitPath(StringRef explicitPath) {
  if (!explicitPath.empty())
    return {explicitPath.str(), "cuda-path"};
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(var); value && *value)
      return {value, (llvm::Twine("$") + var).str()};
  return {"/usr/local/cuda", "default"};
}

StringRef fp4::stringifyGPUImageFormat(GPUImageFormat format) {
  switch (format) {
  case GPUImageFormat::ISA:
    return "isa";
  case GPUImageFormat::Bin:
    return "bin";
  case GPUImageFormat::Fatbin:
    return "fatbin";
  }
  llvm_unreachable("unknown GPUImageFormat");
}

SmallVector<StringRef> fp4::cudaToolsForFormat(GPUImageFormat format) {
  switch (format) {
  case GPUImageFormat::ISA:
    return {};
  case GPUImageFormat::Bin:
    return {"ptxas"};
  case GPUImageFormat::Fatbin:
    return {"ptxas", "fatbinary"};
  }
  llvm_unreachable("unknown GPUImageFormat");
}

std::optional<std::string> fp4::findCUDATool(StringRef toolkit,
                                             StringRef tool) {
  if (!toolkit.empty()) {
    SmallString<128> path(toolkit);
    llvm::sys::path::append(path, "bin", tool);
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName(tool))
    return *onPath;
  return std::nullopt;
}

namespace {

struct CheckCUDAToolkitPass
    : public fp4::impl::FP4CheckCUDAToolkitBase<CheckCUDAToolkitPass> {
  using Base::Base;
  CheckCUDAToolkitPass() = default;
  // The format option is re-registered; its value is copied by the pass
  // manager (copyOptionValuesFrom).
  CheckCUDAToolkitPass(const CheckCUDAToolkitPass &other) : Base(other) {}

  /// The image format, a real enum declared once (GPUConfigOptions.h).
  fp4::GPUImageFormatOption<Option, Pass> format{*this};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Nothing to assemble, nothing to run.
    if (module.getOps<gpu::GPUModuleOp>().empty())
      return;
    fp4::CUDAToolkitPath toolkit = fp4::resolveCUDAToolkitPath(cudaPath);
    std::string from =
        toolkit.origin == "default"
            ? std::string("the default: $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH "
                          "and cuda-path unset")
            : "from " + toolkit.origin;
    // emitError on a location, not on the op: op->emitError would attach
    // the whole module to the diagnostic.
    Location loc = module.getLoc();

    // Kernels calling CUDA's math library (__nv_fabsf, ...) link libdevice
    // from the toolkit in every format. Without it the serializer prints an
    // error with the module attached and still succeeds, leaving the calls
    // unresolved in the PTX: a failure that only shows when it is loaded.
    if (std::optional<StringRef> callee = findLibDeviceCall(module)) {
      SmallString<128> libdevice(toolkit.path);
      llvm::sys::path::append(libdevice, "nvvm", "libdevice",
                              "libdevice.10.bc");
      if (!llvm::sys::fs::is_regular_file(libdevice)) {
        emitError(loc) << "the kernels call " << *callee
                       << ", which needs libdevice from the CUDA toolkit: "
                       << libdevice << " not found (" << from
                       << "); install the CUDA toolkit and set the pipeline "
                       << "option cuda-path=DIR or CUDA_ROOT=DIR "
                       << "(DIR/nvvm/libdevice/libdevice.10.bc)";
        return signalPassFailure();
      }
    }

    for (StringRef tool : fp4::cudaToolsForFormat(format)) {
      if (fp4::findCUDATool(toolkit.path, tool))
        continue;
      emitError(loc) << "format=" << fp4::stringifyGPUImageFormat(format)
                     << " needs '" << tool
                     << "' from the CUDA toolkit: not found in " << toolkit.path
                     << "/bin (" << from
                     << ") nor on PATH; install the CUDA toolkit and set the "
                     << "pipeline option cuda-path=DIR or CUDA_ROOT=DIR "
                     << "(DIR/bin/" << tool << "), or use format=isa for PTX";
      return signalPassFailure();
    }
  }

  /// The first libdevice function a kernel module declares, if any.
  static std::optional<StringRef> findLibDeviceCall(ModuleOp module) {
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
        if (func.isExternal() && func.getName().starts_with("__nv_"))
          return func.getName();
    return std::nullopt;
  }
};

} // namespace

std::unique_ptr<Pass> fp4::createFP4CheckCUDAToolkitPass(GPUImageFormat format,
                                                         StringRef cudaPath) {
  FP4CheckCUDAToolkitOptions options;
  options.cudaPath = cudaPath.str();
  auto pass = std::make_unique<CheckCUDAToolkitPass>(options);
  pass->format = format;
  return pass;
}
