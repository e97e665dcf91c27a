//===- SchemeGPULoweringInterface.h - per-scheme GPU lowering ---*- C++ -*-===//
//
// The data the scheme models of SchemeGPULoweringInterface.td exchange with
// the kernel families, and the registration of the models (one file per
// format in lib/Conversion/FP4ToGPU).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_SCHEMEGPULOWERINGINTERFACE_H
#define FP4_CONVERSION_FP4TOGPU_SCHEMEGPULOWERINGINTERFACE_H

#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Numerics/RoundingModes.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class DialectRegistry;
namespace fp4 {

/// How a scheme's codes become bf16 tensor-core operands (sm_80..sm_90,
/// which have no FP4 instructions): pair bits of e2m1 * 2^-126
/// (numerics/BF16Pair.h) times `restoreFactor` (when non-zero and the fast
/// form is not used) times the scale multiplier, every product exact.
struct BF16FragmentForm {
  /// Elements per scale byte (a multiple of 16).
  int64_t blockSize = 32;
  /// -1: no second-level factors; 0: one per row; else elements per factor
  /// (bf16 factors, not exact in a bf16 product: applied to f32 sums).
  int64_t macroBlock = -1;
  /// An f32 tensor scale component (index 2) multiplies the result.
  bool hasTensorScale = false;
  /// The products carry 2^-exponentOffset, restored on the f32 result.
  int64_t exponentOffset = 0;
  /// Non-zero: a first constant multiply (E8M0: 2^126, since one factor
  /// 2^(byte - 1) overflows bf16 above byte 128).
  float restoreFactor = 0.0f;
  /// A one-multiply form exists for bytes up to fastFormMaxByte.
  bool hasFastForm = false;
  int64_t fastFormMaxByte = 0;
  /// A scale byte of value 1 (for lanes past the end of K).
  int64_t unitScaleByte = 127;
};

/// A run of `size` consecutive elements along K that the quantizer reduces
/// over (a scale block, a rotation group, a macro block), and how many
/// threads may share one: 32 for warp shuffles, up to a CTA when a shared
/// memory step is emitted.
struct GPUReductionGroup {
  int64_t size;
  int64_t maxLanes = 32;
};

/// What a scheme's block algorithm asks of the quantize kernel.
struct GPUQuantizePlan {
  /// Kernel variant after "quantize_" (scheme name and options).
  std::string variant;
  /// Groups every thread chunk must fit.
  SmallVector<GPUReductionGroup> groups;
  /// Chunk bounds: at least minChunk; exactly exactChunk and at most
  /// maxChunk where non-zero.
  int64_t minChunk = 8, exactChunk = 0, maxChunk = 0;
  /// NVFP4 16x16 tiles: chunk g is line g mod 16 of a tile, so the 16 lanes
  /// of a tile hold its 16 lines.
  bool tileLines = false;
  /// Upper bound of the CTA size (0: none).
  int64_t maxBlockDim = 0;
  /// Elements of a group that may span several warps of one CTA (0: none):
  /// the CTA size is rounded to whole groups.
  int64_t ctaGroupSize = 0;
  /// A first kernel reduces the finite max |x| of the whole tensor into a
  /// scratch word ("scratch.amax") that the chunk algorithm reads.
  bool needsTensorAmax = false;
  /// Element rounding and its stochastic seed.
  numerics::ElementRounding rounding = numerics::ElementRounding::NearestEven;
  uint32_t seed = 0;
};

/// One thread's chunk inside the quantize kernel (QuantizeChunk.h).
struct QuantizeChunkContext;

/// Attaches the SchemeGPULoweringAttrInterface models of the four schemes
/// when the fp4 dialect is loaded.
void registerSchemeGPULoweringInterfaceModels(DialectRegistry &registry);

/// One registration function per format, each defined in its own file.
void registerMXFP4GPULoweringModel(MLIRContext *context);
void registerNVFP4GPULoweringModel(MLIRContext *context);
void registerHiF4GPULoweringModel(MLIRContext *context);
void registerMXFP4MacroGPULoweringModel(MLIRContext *context);

} // namespace fp4
} // namespace mlir

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h.inc"

#endif // FP4_CONVERSION_FP4TOGPU_SCHEMEGPULOWERINGINTERFACE_H
