//===- ExportGPUKernels.cpp - fp4-export-gpu-kernels ----------------------===//
//
// Writes what a launcher without MLIR needs (python/fp4/gpu.py on the GPU
// machine): each gpu.binary object as a file and kernels.json, derived from
// the module's #fp4.gpu_manifest (the launch plans the host code was built
// from) with the image file of every kernel filled in. The manifest is
// consumed (removed), with or without a directory to write to, so that the
// module translates to LLVM IR with upstream's mlir-translate.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/Passes.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4EXPORTGPUKERNELS
#include "fp4/Conversion/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

/// The kernels.json entries of `plan`, one per launch: the kernel, its
/// module's image file, the op, variant, geometry and arguments (name,
/// dtype, shape, whether scratch), the format python/fp4/gpu.py reads.
void appendEntries(fp4::LaunchPlanAttr plan,
                   const llvm::StringMap<std::string> &images,
                   llvm::json::Array &entries) {
  for (fp4::KernelLaunchAttr launch : plan.getLaunches()) {
    llvm::json::Array args;
    for (StringAttr name : launch.getArgs()) {
      // The plan's verifier guarantees the buffer exists.
      fp4::LaunchBufferAttr buffer = plan.lookupBuffer(name.getValue());
      MemRefType type = buffer.getType();
      args.push_back(llvm::json::Object{
          {"name", name.getValue()},
          {"dtype",
           fp4::LaunchBufferAttr::getManifestDType(type.getElementType())},
          {"shape", llvm::json::Array(type.getShape())},
          {"scratch", plan.isScratch(name.getValue())},
      });
    }
    entries.push_back(llvm::json::Object{
        {"name", launch.getKernelName()},
        {"module", launch.getKernelModuleName()},
        {"image", images.lookup(launch.getKernelModuleName())},
        {"op", plan.getOp()},
        {"variant", launch.getVariant()},
        {"grid", llvm::json::Array(launch.getGrid())},
        {"block", llvm::json::Array(launch.getBlock())},
        {"shared_bytes", launch.getSharedBytes()},
        {"args", std::move(args)},
    });
    // Only where set, so manifests without dependent launches keep their
    // bytes (the launcher reads a missing key as false).
    if (launch.getDependent())
      (*entries.back().getAsObject())["dependent"] = true;
  }
}

StringRef extensionFor(gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Assembly:
    return "ptx";
  case gpu::CompilationTarget::Binary:
    return "cubin";
  case gpu::CompilationTarget::Fatbin:
    return "fatbin";
  default:
    return "bin";
  }
}

struct FP4ExportGPUKernelsPass
    : public fp4::impl::FP4ExportGPUKernelsBase<FP4ExportGPUKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The manifest is consumed: the module must not keep an fp4 attribute,
    // or mlir-translate (which does not know the fp4 dialect) cannot read
    // the pipeline's output.
    auto manifest = module->getAttrOfType<fp4::GPUManifestAttr>(
        fp4::GPUManifestAttr::kAttrName);
    module->removeAttr(fp4::GPUManifestAttr::kAttrName);
    if (dir.empty())
      return;
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      module.emitError() << "fp4-export-gpu-kernels: cannot create '" << dir
                         << "': " << ec.message();
      return signalPassFailure();
    }
    llvm::StringMap<std::string> images;
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      auto objects = binary.getObjects();
      if (objects.size() != 1) {
        binary.emitError("fp4-export-gpu-kernels: expected one object per "
                         "gpu.binary (one target)");
        return signalPassFailure();
      }
      auto object = cast<gpu::ObjectAttr>(objects[0]);
      std::string file =
          (binary.getSymName() + "." + extensionFor(object.getFormat())).str();
      SmallString<256> path(dir);
      llvm::sys::path::append(path, file);
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
      if (ec) {
        binary.emitError() << "fp4-export-gpu-kernels: cannot write '" << path
                           << "': " << ec.message();
        return signalPassFailure();
      }
      os << object.getObject().getValue();
      images[binary.getSymName()] = file;
    }
    // kernels.json is derived from the typed manifest convert-fp4-to-gpu
    // recorded; a module without kernels gets an empty one.
    llvm::json::Array entries;
    if (manifest) {
      for (fp4::LaunchPlanAttr plan : manifest.getPlans()) {
        for (fp4::KernelLaunchAttr launch : plan.getLaunches()) {
          if (images.contains(launch.getKernelModuleName()))
            continue;
          // On the location: module.emitError would attach the module.
          emitError(module.getLoc())
              << "fp4-export-gpu-kernels: no gpu.binary for "
                 "kernel module '"
              << launch.getKernelModuleName()
              << "' (run after gpu-module-to-binary)";
          return signalPassFailure();
        }
        appendEntries(plan, images, entries);
      }
    }
    llvm::json::Object root;
    root["chip"] = manifest ? manifest.getChip().str() : std::string();
    root["kernels"] = std::move(entries);
    SmallString<256> path(dir);
    llvm::sys::path::append(path, "kernels.json");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
    if (ec) {
      module.emitError() << "fp4-export-gpu-kernels: cannot write '" << path
                         << "': " << ec.message();
      return signalPassFailure();
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  }
};

} // namespace
