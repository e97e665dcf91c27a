//===- GPUConfigSelection.h - choosing #fp4.gpu_config per op ---*- C++ -*-===//
//
// The selection step of the GPU lowering: for each fp4.matmul, fp4.quantize
// and fp4.dequantize a kernel configuration (#fp4.gpu_config) from the chip
// description and the op's shape, with explicit option values overriding
// the chip's defaults. A config already on the op (`fp4.gpu_config`, set by
// a user, a search or fp4-gpu-select-config) is honoured as it is. The
// kernel builders read only the config.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_GPUCONFIGSELECTION_H
#define FP4_CONVERSION_FP4TOGPU_GPUCONFIGSELECTION_H

#include "fp4/Conversion/FP4ToGPU/ChipDescription.h"
#include "fp4/Conversion/FP4ToGPU/GPUConfigOptions.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::fp4 {

/// Checks every set override against the ranges of #fp4.gpu_config (one
/// error "<pass>: option <name>=<value> is out of range (...)").
LogicalResult
verifyGPUConfigOverrides(function_ref<InFlightDiagnostic()> emitError,
                         StringRef passName,
                         const GPUConfigOverrides &overrides);

/// Checks `config` against the limits of `chip` (threads per block,
/// registers per thread and per SM).
LogicalResult
verifyGPUConfigForChip(function_ref<InFlightDiagnostic()> emitError,
                       GPUConfigAttr config, const ChipDescription &chip);

/// The largest M of the decode matmul family: the override, else the
/// chip's.
int64_t getDecodeMaxM(const ChipDescription &chip,
                      const GPUConfigOverrides &overrides);

/// Smallest activation row count from which the decode kernel runs on
/// warp-group MMA by default where the chip has it (decode-mma unset).
constexpr int64_t kDecodeWgmmaMinRows = 9;

/// Whether the decode kernel's warp-group form can give each K warp two
/// 64-row warp groups (decode-rows-per-cta = 128) for `rows` activation
/// rows: the groups share the staged activations in whole 16-row pieces.
inline bool decodeWgmmaSharesRows(int64_t rows) {
  return (rows + 7) / 8 % 2 == 0;
}

/// `overrides` with the decode kernel's instruction for `rows` activation
/// rows filled in where decode-mma is unset: wgmma on chips with warp-group
/// MMA from kDecodeWgmmaMinRows rows (below, mma.sync's 16-row tiles waste
/// less: 1 x 14336 x 4096 W4A16 15.0 us against 20.4 on wgmma, 16 rows
/// 27.6 against 26.0, 32 stacked rows 43.0 (the prefill medium tile)
/// against 29.9; H200, docs/Performance.md "Session 15"), else sync; and
/// in the wgmma form 128 K elements per warp-group iteration unless
/// decode-k-unroll is given (its A fragments stay live until the group's
/// wgmmas complete: 256 needs 180 registers at 32 rows, 128 needs 111).
GPUConfigOverrides withDecodeMMADefault(const ChipDescription &chip,
                                        int64_t rows,
                                        GPUConfigOverrides overrides);

/// The configuration `chip` and `overrides` choose for `op`: fp4.matmul with
/// static rank-2 operands gets the decode family for M <= getDecodeMaxM,
/// else prefill (selectPrefillConfig); fp4.quantize / fp4.dequantize the elementwise family.
/// Null for other ops and for matmuls whose M is not static. The overrides
/// must have passed verifyGPUConfigOverrides.
GPUConfigAttr selectGPUConfig(Operation *op, const ChipDescription &chip,
                              const GPUConfigOverrides &overrides);

/// The configuration of `family` with the overrides that belong to it
/// applied to the family's defaults: for kernels a lowering builds without
/// an op of their own (the products of a fused correction chain).
GPUConfigAttr selectGPUConfigForFamily(MLIRContext *ctx,
                                       GPUKernelFamily family,
                                       const GPUConfigOverrides &overrides);

/// The prefill configuration for a product of `rows` rows of A: the medium
/// class's tile (roundUp(rows, 16) x 64 or 128 rows up to 64, 128 x 128
/// above, K steps of 128) up to the chip's mediumMaxM, as far as the chip's
/// shared memory holds it (with the 2:4-sparse lhs's buffers when
/// `sparseLhs`, with `lhsGroups` A tiles per stage for a stacked lhs),
/// else the family's defaults; overrides applied. An
/// override of the tile (prefill-tile-m/n/k, prefill-warps-m/n) turns the
/// medium class off: the options then give the tile for every M.
GPUConfigAttr selectPrefillConfig(MLIRContext *ctx, const ChipDescription &chip,
                                  int64_t rows,
                                  const GPUConfigOverrides &overrides,
                                  bool sparseLhs = false,
                                  int64_t lhsGroups = 1);

/// The op's own `fp4.gpu_config` when it has one, else selectGPUConfig.
GPUConfigAttr getOrSelectGPUConfig(Operation *op, const ChipDescription &chip,
                                   const GPUConfigOverrides &overrides);

/// What a pass checks before selecting: `selection` (a bad override, an
/// unimplemented native path or options beyond the chip's limits: one
/// error on `root` naming `passName`) and the `fp4.gpu_config` of every op
/// under `root` against the chip's limits (an error on each such op).
LogicalResult verifyGPUSelection(Operation *root, StringRef passName,
                                 const GPUSelectionOptions &selection);

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOGPU_GPUCONFIGSELECTION_H
