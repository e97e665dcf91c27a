//===- Pipelines.h - fp4 named pass pipelines -------------------*- C++ -*-===//
//
// `fp4-pipeline-cpu`: fp4 IR on tensors all the way to the LLVM dialect, for
// mlir-runner, mlir-translate and the ExecutionEngine. Embedders call
// buildFP4CPUPipeline on their own pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_PIPELINES_PIPELINES_H
#define FP4_PIPELINES_PIPELINES_H

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
};

/// convert-fp4-to-linalg, canonicalize + cse, one-shot bufferization (whole
/// functions, identity-layout memrefs at function boundaries), the buffer
/// deallocation pipeline, linalg to loops and then (lower-to-llvm) the LLVM
/// dialect conversions. Functions keep `llvm.emit_c_interface`.
void buildFP4CPUPipeline(OpPassManager &pm,
                         const FP4CPUPipelineOptions &options);

/// Registers `fp4-pipeline-cpu`.
void registerFP4Pipelines();

} // namespace fp4
} // namespace mlir

#endif // FP4_PIPELINES_PIPELINES_H
