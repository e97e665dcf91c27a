//===- CUDAToolkit.h - where the CUDA tools are looked for ------*- C++ -*-===//
//
// gpu-module-to-binary runs ptxas (format=bin|fatbin) and fatbinary
// (format=fatbin) from <toolkit>/bin, else from PATH. These helpers make the
// same choice so fp4-pipeline-nvvm can name a missing tool before it runs
// (fp4-check-cuda-toolkit) instead of failing inside the serializer.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_CUDATOOLKIT_H
#define FP4_CONVERSION_FP4TOGPU_CUDATOOLKIT_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <optional>
#include <string>

namespace mlir {
class Pass;
} // namespace mlir

namespace mlir::fp4 {

/// The kernel image gpu-module-to-binary writes (its `format` option).
enum class GPUImageFormat {
  /// PTX (format=isa); no CUDA tool runs.
  ISA,
  /// cubin: ptxas.
  Bin,
  /// fatbin: ptxas and fatbinary.
  Fatbin,
};

/// "isa", "bin" or "fatbin": the option value and gpu-module-to-binary's
/// spelling.
llvm::StringRef stringifyGPUImageFormat(GPUImageFormat format);
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     GPUImageFormat format) {
  return os << stringifyGPUImageFormat(format);
}

/// The toolkit directory and what chose it.
struct CUDAToolkitPath {
  std::string path;
  /// "cuda-path", "$CUDA_ROOT", "$CUDA_HOME", "$CUDA_PATH" or "default".
  std::string origin;
};

/// `explicitPath` when not empty, else the first of $CUDA_ROOT, $CUDA_HOME,
/// $CUDA_PATH that is set (upstream's order), else /usr/local/cuda.
CUDAToolkitPath resolveCUDAToolkitPath(llvm::StringRef explicitPath);

/// The tools gpu-module-to-binary runs for `format` (isa: none).
llvm::SmallVector<llvm::StringRef> cudaToolsForFormat(GPUImageFormat format);

/// <toolkit>/bin/<tool> if executable, else <tool> on PATH, else nullopt.
std::optional<std::string> findCUDATool(llvm::StringRef toolkit,
                                        llvm::StringRef tool);

/// fp4-check-cuda-toolkit for images of `format` (the pass's `format`
/// option, GPUConfigOptions.h), as fp4-pipeline-nvvm creates it.
std::unique_ptr<Pass> createFP4CheckCUDAToolkitPass(GPUImageFormat format,
                                                    llvm::StringRef cudaPath);

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOGPU_CUDATOOLKIT_H
