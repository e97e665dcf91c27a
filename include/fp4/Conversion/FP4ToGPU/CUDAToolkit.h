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
#include <optional>
#include <string>

namespace mlir::fp4 {

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
llvm::SmallVector<llvm::StringRef> cudaToolsForFormat(llvm::StringRef format);

/// <toolkit>/bin/<tool> if executable, else <tool> on PATH, else nullopt.
std::optional<std::string> findCUDATool(llvm::StringRef toolkit,
                                        llvm::StringRef tool);

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOGPU_CUDATOOLKIT_H
