//===- Checkpoint.h - quantize a safetensors checkpoint ---------*- C++ -*-===//
//
// fp4-quant's checkpoint mode: reads a safetensors checkpoint (one file, or
// shards listed by model.safetensors.index.json), quantizes the selected 2-D
// weights with the JIT-compiled quantizer, copies every other tensor and
// file unchanged, and writes either
//  - layout "compressed-tensors": the tensors and config.json
//    quantization_config that compressed-tensors and vLLM load
//    (mxfp4-pack-quantized / nvfp4-pack-quantized), or
//  - layout "fp4": the component arrays of docs/ABI.md with scheme and shape
//    in the safetensors __metadata__.
// docs/Checkpoints.md defines both exactly.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4QUANT_CHECKPOINT_H
#define FP4_TOOLS_FP4QUANT_CHECKPOINT_H

#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace fp4quant {

struct CheckpointOptions {
  std::string source;      // a .safetensors file, an index .json, or a folder
  std::string destination; // output folder
  std::string scheme = "mxfp4";
  std::string layout = "compressed-tensors";
  std::vector<std::string> include, exclude;
  bool quiet = false;
  std::string pipeline; // --pipeline override (tests)
};

/// Runs the checkpoint mode; returns the process exit status.
int quantizeCheckpoint(mlir::MLIRContext &ctx, const CheckpointOptions &options);

} // namespace fp4quant

#endif // FP4_TOOLS_FP4QUANT_CHECKPOINT_H
