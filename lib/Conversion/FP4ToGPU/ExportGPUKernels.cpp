//===- ExportGPUKernels.cpp - fp4-export-gpu-kernels ----------------------===//
//
// Writes what a launcher without MLIR needs (python/fp4/gpu.py on the GPU
// machine): each gpu.binary object as a file and kernels.json, the
// fp4.gpu_kernels manifest with the image file of every kernel filled in.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/Passes.h"

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

llvm::json::Value toJSON(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  // BoolAttr is an IntegerAttr of i1: test it first.
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute e : a)
      out.push_back(toJSON(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object out;
    for (NamedAttribute e : d)
      out[e.getName().getValue()] = toJSON(e.getValue());
    return out;
  }
  return nullptr;
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
    if (dir.empty()) {
      module.emitError("fp4-export-gpu-kernels: option dir is required");
      return signalPassFailure();
    }
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
    auto kernels = module->getAttrOfType<ArrayAttr>("fp4.gpu_kernels");
    llvm::json::Array entries;
    for (Attribute a : kernels ? kernels.getValue() : ArrayRef<Attribute>()) {
      llvm::json::Value v = toJSON(a);
      llvm::json::Object &entry = *v.getAsObject();
      std::string moduleName = entry.getString("module")->str();
      auto it = images.find(moduleName);
      if (it == images.end()) {
        module.emitError() << "fp4-export-gpu-kernels: no gpu.binary for "
                              "kernel module '"
                           << moduleName
                           << "' (run after gpu-module-to-binary)";
        return signalPassFailure();
      }
      entry["image"] = it->second;
      entries.push_back(std::move(v));
    }
    llvm::json::Object root;
    auto chipAttr = module->getAttrOfType<StringAttr>("fp4.gpu_chip");
    root["chip"] = chipAttr ? chipAttr.getValue().str() : std::string();
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
