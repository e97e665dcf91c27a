//===- Pipelines.h - fp4 named pass pipelines -------------------*- C++ -*-===//
//
// `fp4-pipeline-cpu`: fp4 IR on tensors all the way to the LLVM dialect, for
// mlir-runner, mlir-translate and the ExecutionEngine. Embedders call
// buildFP4CPUPipeline on their own pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_PIPELINES_PIPELINES_H
#define FP4_PIPELINES_PIPELINES_H

#include "fp4/Conversion/FP4ToGPU/GPUConfigOptions.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace fp4 {

struct FP4CPUPipelineOptions
    : public PassPipelineOptions<FP4CPUPipelineOptions> {
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Lower to the LLVM dialect; when false, stop after "
                     "bufferization and linalg-to-loops (memref + scf + "
                     "arith), e.g. to plug into another LLVM lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> cWrappers{
      *this, "c-wrappers",
      llvm::cl::desc("Give every function a C interface wrapper "
                     "(llvm-request-c-wrappers, run before the libm "
                     "conversion so libm declarations keep plain C names); "
                     "frontend IR such as torch-mlir's has none"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> fast{
      *this, "fast",
      llvm::cl::desc("Fast CPU code, same results bit for bit: contractions "
                     "reordered for vectorizable loops "
                     "(fp4-contraction-loop-order), parallel loops run on "
                     "threads of MLIR's async runtime (async-parallel-for; "
                     "link or load libmlir_async_runtime.so)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> microkernels{
      *this, "microkernels",
      llvm::cl::desc("With fast: f32 contractions and the block-sparse "
                     "correction products call fp4's packed, "
                     "multi-threaded CPU kernels "
                     "(fp4-contraction-to-runtime-call; load or link "
                     "libfp4_cpu_runtime.so), bit-identical to the loops; "
                     "false keeps them as loops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("With fast: the loops left (elementwise, reductions) "
                     "run on MLIR's async runtime threads "
                     "(async-parallel-for); false runs them serially, which "
                     "compiles much faster (each parallel loop becomes "
                     "several outlined functions)"),
      llvm::cl::init(true)};
  PassOptions::Option<int> threads{
      *this, "threads",
      llvm::cl::desc("With fast: worker threads async-parallel-for plans "
                     "for (-1: the runtime's thread count at run time)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int> minTaskSize{
      *this, "min-task-size",
      llvm::cl::desc("With fast: fewest loop iterations per async task"),
      llvm::cl::init(1024)};
  PassOptions::Option<bool> mergeCorrections{
      *this, "merge-corrections",
      llvm::cl::desc("Run fp4-merge-constant-corrections first: the terms "
                     "of a corrected product that share an lhs part and "
                     "whose rhs parts are constant (a weight's quantized "
                     "rest and its outliers) become one term against their "
                     "exact f32 sum. Fewer, cheaper products; the f32 sum "
                     "is reassociated, so results differ from the default "
                     "by rounding (not bit for bit)"),
      llvm::cl::init(false)};
};

/// convert-fp4-to-linalg, canonicalize + cse, one-shot bufferization (whole
/// functions, identity-layout memrefs at function boundaries), the buffer
/// deallocation pipeline, linalg to loops (fast: reordered contractions,
/// parallel loops on async threads) and then (lower-to-llvm) the LLVM
/// dialect conversions, math through LLVM intrinsics where LLVM has them,
/// rsqrt expanded to 1 / sqrt, the rest (erf, tanh, ...) as libm calls.
/// Functions keep `llvm.emit_c_interface`; c-wrappers adds it to all.
void buildFP4CPUPipeline(OpPassManager &pm,
                         const FP4CPUPipelineOptions &options);

struct FP4NVVMPipelineOptions
    : public PassPipelineOptions<FP4NVVMPipelineOptions> {
  /// chip, native-fp4 and the kernel options of convert-fp4-to-gpu,
  /// declared once (GPUConfigOptions.h).
  GPUConfigOptionSet<PassOptions::Option, PassOptions> gpuOptions{*this};
  /// isa, bin or fatbin (GPUConfigOptions.h).
  GPUImageFormatOption<PassOptions::Option, PassOptions> format{*this};
  PassOptions::Option<std::string> exportDir{
      *this, "export-dir",
      llvm::cl::desc("When set, write the kernel images and kernels.json "
                     "here (fp4-export-gpu-kernels)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit for ptxas / fatbinary (format=bin|fatbin); "
                     "empty: $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, then "
                     "/usr/local/cuda (PATH if DIR/bin lacks the tool)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> dependentLaunch{
      *this, "dependent-launch",
      llvm::cl::desc("Programmatic dependent launch: every kernel may start "
                     "while the previous one finishes "
                     "(fp4-gpu-dependent-launch; sm_90+)"),
      llvm::cl::init(false)};
  // No default of its own: unset, the pass's prefetch-bytes default holds.
  PassOptions::Option<int64_t> dependentPrefetchBytes{
      *this, "dependent-prefetch-bytes",
      llvm::cl::desc("With dependent-launch: at most this many bytes of each "
                     "kernel's large read-only arguments prefetched into L2 "
                     "before it waits (fp4-gpu-dependent-launch's "
                     "prefetch-bytes, whose default applies when unset)")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("NVPTX optimization level (0-3)"),
      llvm::cl::init(3)};
  PassOptions::Option<bool> keepCompileTimes{
      *this, "keep-compile-times",
      llvm::cl::desc("Keep the compile times gpu-module-to-binary records in "
                     "gpu.object properties (off: reproducible output)"),
      llvm::cl::init(false)};
};

/// convert-fp4-to-gpu, then the CPU pipeline's host steps (fp4 leftovers to
/// linalg, bufferization, loops), then the NVVM lowering of the kernels
/// (nvvm-attach-target, convert-gpu-to-nvvm with bare-pointer kernel
/// arguments), gpu-to-llvm for the host, gpu-module-to-binary and
/// fp4-export-gpu-kernels (writing the images and kernels.json with
/// export-dir; consuming the fp4.gpu_manifest always). The result translates to
/// LLVM IR with mlir-translate and links against libfp4_cuda_runtime.so.
void buildFP4NVVMPipeline(OpPassManager &pm,
                          const FP4NVVMPipelineOptions &options);

/// Registers `fp4-pipeline-cpu` and `fp4-pipeline-nvvm`.
void registerFP4Pipelines();

} // namespace fp4
} // namespace mlir

#endif // FP4_PIPELINES_PIPELINES_H
