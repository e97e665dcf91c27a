//===- GPUConfig.h - #fp4.gpu_config helpers --------------------*- C++ -*-===//
//
// Kept out of the generated attribute class so that the many users of
// FP4Dialect.h do not rebuild when these change.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_GPUCONFIG_H
#define FP4_DIALECT_FP4_IR_GPUCONFIG_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

namespace mlir::fp4 {

/// The parameter defaults of #fp4.gpu_config (FP4GPUConfigAttr.td's, which
/// the printer elides), measured on the H200.
struct GPUConfigDefaults {
  static constexpr int64_t warps = 0, kUnroll = 256, rowsPerCta = 0, splitK = 0,
                           prefetch = 0, maxRegisters = 0, tileM = 128,
                           tileN = 128, tileK = 64, warpsM = 2, warpsN = 4,
                           stages = 3, threads = 256;
};

/// `#fp4.gpu_config<family = F>`: every parameter at its default (the
/// values the parser fills in; GPUConfigAttr.cpp, tested by the printed
/// selection in test/Conversion/FP4ToGPU/select-config.mlir).
GPUConfigAttr getDefaultGPUConfig(MLIRContext *context, GPUKernelFamily family);

} // namespace mlir::fp4

#endif // FP4_DIALECT_FP4_IR_GPUCONFIG_H
