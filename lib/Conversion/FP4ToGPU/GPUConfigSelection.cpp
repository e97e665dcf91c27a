//===- GPUConfigSelection.cpp - choosing #fp4.gpu_config per op -----------===//
//
// The chip's defaults are the attribute's own (measured on the H200, where
// every chip of the table shares them so far) plus the chip's decode/prefill
// boundary; a chip that needs other tiles sets them here, from its
// description, without touching a kernel.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/GPUConfigSelection.h"

#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/IR/GPUConfig.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// Largest decode-max-m: the decode kernel takes up to 16 rows, a larger
/// boundary sends 17..64 to the reference kernel (a tuning knob).
constexpr int64_t kMaxDecodeMaxM = 64;

struct OverrideKey {
  StringLiteral option;
  StringLiteral parameter;
  std::optional<int64_t> GPUConfigOverrides::*field;
};

const OverrideKey kOverrideKeys[] = {
    {"decode-warps", "warps", &GPUConfigOverrides::decodeWarps},
    {"decode-k-unroll", "k_unroll", &GPUConfigOverrides::decodeKUnroll},
    {"decode-rows-per-cta", "rows_per_cta",
     &GPUConfigOverrides::decodeRowsPerCTA},
    {"decode-split-k", "split_k", &GPUConfigOverrides::decodeSplitK},
    {"decode-prefetch", "prefetch", &GPUConfigOverrides::decodePrefetch},
    {"decode-max-registers", "max_registers",
     &GPUConfigOverrides::decodeMaxRegisters},
    {"prefill-tile-m", "tile_m", &GPUConfigOverrides::prefillTileM},
    {"prefill-tile-n", "tile_n", &GPUConfigOverrides::prefillTileN},
    {"prefill-tile-k", "tile_k", &GPUConfigOverrides::prefillTileK},
    {"prefill-warps-m", "warps_m", &GPUConfigOverrides::prefillWarpsM},
    {"prefill-warps-n", "warps_n", &GPUConfigOverrides::prefillWarpsN},
    {"prefill-stages", "stages", &GPUConfigOverrides::prefillStages},
    {"elementwise-threads", "threads", &GPUConfigOverrides::elementwiseThreads},
};

/// A config with the overrides of `family` applied to `defaults` (the
/// family's own when null).
GPUConfigAttr makeConfig(MLIRContext *ctx, GPUKernelFamily family,
                         const GPUConfigOverrides &o,
                         GPUConfigAttr defaults = {}) {
  if (!defaults)
    defaults = getDefaultGPUConfig(ctx, family);
  auto pick = [&](const std::optional<int64_t> &value, int64_t fallback,
                  GPUKernelFamily owner) {
    return value && owner == family ? *value : fallback;
  };
  using F = GPUKernelFamily;
  return GPUConfigAttr::get(
      ctx, family, pick(o.decodeWarps, defaults.getWarps(), F::Decode),
      pick(o.decodeKUnroll, defaults.getKUnroll(), F::Decode),
      pick(o.decodeRowsPerCTA, defaults.getRowsPerCta(), F::Decode),
      pick(o.decodeSplitK, defaults.getSplitK(), F::Decode),
      pick(o.decodePrefetch, defaults.getPrefetch(), F::Decode),
      pick(o.decodeMaxRegisters, defaults.getMaxRegisters(), F::Decode),
      pick(o.prefillTileM, defaults.getTileM(), F::Prefill),
      pick(o.prefillTileN, defaults.getTileN(), F::Prefill),
      pick(o.prefillTileK, defaults.getTileK(), F::Prefill),
      pick(o.prefillWarpsM, defaults.getWarpsM(), F::Prefill),
      pick(o.prefillWarpsN, defaults.getWarpsN(), F::Prefill),
      pick(o.prefillStages, defaults.getStages(), F::Prefill),
      o.prefillDequant && family == F::Prefill ? *o.prefillDequant
                                               : defaults.getDequant(),
      o.prefillMMA && family == F::Prefill   ? *o.prefillMMA
      : o.decodeMMA && family == F::Decode ? *o.decodeMMA
                                           : defaults.getMma(),
      pick(o.elementwiseThreads, defaults.getThreads(), F::Elementwise));
}

/// Whether the options choose the prefill tile themselves (then the medium
/// class does not replace it).
bool overridesPrefillTile(const GPUConfigOverrides &o) {
  return o.prefillTileM || o.prefillTileN || o.prefillTileK ||
         o.prefillWarpsM || o.prefillWarpsN;
}

/// The prefill defaults for `rows` rows of A: the medium class up to the
/// chip's mediumMaxM. The 128-row tile would mostly multiply padding and
/// give too few CTAs up to 64 rows: there the tile takes roundUp(rows, 16)
/// rows (in 16-row warp slices), 64 columns at 16 rows and 128 above. Up to
/// mediumMaxM (one row of 128-row CTA tiles, N / 128 CTAs) every tile steps
/// K by 128, which halves the pipeline's barriers per byte of weight; with
/// two or more rows of CTA tiles the 64 step is faster. Measured on the
/// H200 at N = 14336, K = 4096 (docs/perf/medium_m_2026-12-04.txt,
/// decode_peel_and_medium_2026-12-04.txt, prefill_k128_2026-12-04.txt):
/// W4A4 recipe M = 32 70.5 -> 49.3 us, M = 64 83.0 -> 56.4 us; W4A16
/// M = 128 73.9 -> 66.3 us, M = 256 115 -> 130 us with the 128 step.
GPUConfigAttr prefillDefaults(MLIRContext *ctx, const ChipDescription &chip,
                              int64_t rows, bool sparseLhs,
                              int64_t lhsGroups,
                              std::optional<int64_t> stagesOverride) {
  GPUConfigAttr base = getDefaultGPUConfig(ctx, GPUKernelFamily::Prefill);
  if (rows <= 0 || rows > chip.mediumMaxM)
    return base;
  int64_t tileM = base.getTileM(), tileN = base.getTileN();
  int64_t warpsM = base.getWarpsM(), warpsN = base.getWarpsN();
  if (rows <= 64) {
    tileM = llvm::alignTo(rows, 16);
    tileN = tileM == 16 ? 64 : 128;
    // One 16-row slice per warp up to 48 rows (384 threads); at 64 rows 16
    // warps would leave ptxas 64 registers and a spill (W4A16), so 8 warps
    // of 32 rows.
    warpsM = tileM == 64 ? 2 : tileM / 16;
    warpsN = 4;
  }
  // The tile must fit the kernel's forms (W4A16 and W4A4; with the 2:4
  // residual where asked) in the chip's shared memory: the 128-row K-128
  // tile needs 188416 bytes (243712 with the residual), beyond sm_80's
  // 166912 and, with the residual, sm_90's 232448; the 32-row one 114688,
  // beyond the 101376 of sm_86/89/120a. A K step of 64, then the defaults,
  // where not.
  int64_t stages = stagesOverride.value_or(base.getStages());
  auto fits = [&](int64_t tileK, int64_t stages) {
    int64_t bytes = std::max(
        prefillSharedBytes(tileM, tileN, tileK, stages, /*w4a4=*/false,
                           /*sharedW=*/true, sparseLhs, lhsGroups),
        prefillSharedBytes(tileM, tileN, tileK, stages, /*w4a4=*/true,
                           /*sharedW=*/true, /*sparse=*/false));
    return bytes <= chip.maxSharedBytesPerBlock;
  };
  int64_t tileK = 128;
  if (!fits(tileK, stages))
    tileK = base.getTileK();
  if (!fits(tileK, stages))
    return base;
  // The 16-row tile streams the most weight per MMA row: without the 2:4
  // buffers a fourth stage keeps more of it in flight (H200, 16 x 14336 x
  // 4096, one A/B call: outlier top-1/2/4 43.5/50.7/58.4 -> 38.2/41.9/46.3
  // us; with the residual it measured slower, 56.0 -> 59.1;
  // docs/perf/prefill_stages_2026-12-04.txt, medium_m_2026-12-04.txt).
  if (tileM == 16 && !sparseLhs && !stagesOverride && fits(tileK, 4))
    stages = 4;
  return GPUConfigAttr::get(
      ctx, GPUKernelFamily::Prefill, base.getWarps(), base.getKUnroll(),
      base.getRowsPerCta(), base.getSplitK(), base.getPrefetch(),
      base.getMaxRegisters(), tileM, tileN, tileK, warpsM, warpsN, stages,
      base.getDequant(), base.getMma(), base.getThreads());
}

} // namespace

LogicalResult mlir::fp4::verifyGPUConfigOverrides(
    function_ref<InFlightDiagnostic()> emitError, StringRef passName,
    const GPUConfigOverrides &overrides) {
  if (overrides.decodeMaxM &&
      (*overrides.decodeMaxM < 0 || *overrides.decodeMaxM > kMaxDecodeMaxM))
    return emitError() << passName
                       << ": option decode-max-m=" << *overrides.decodeMaxM
                       << " is out of range (0.." << kMaxDecodeMaxM << ")";
  for (const OverrideKey &key : kOverrideKeys) {
    const std::optional<int64_t> &value = overrides.*key.field;
    if (value && failed(GPUConfigAttr::checkParameter(
                     emitError, key.parameter, *value,
                     (passName + ": option " + key.option).str())))
      return failure();
  }
  // Checked here, before makeConfig builds the attribute.
  if (overrides.decodeWarps && overrides.decodeRowsPerCTA &&
      failed(GPUConfigAttr::checkDecodeWarps(
          emitError, (passName + ": option decode-warps").str(),
          *overrides.decodeWarps, "decode-rows-per-cta",
          *overrides.decodeRowsPerCTA)))
    return failure();
  return success();
}

LogicalResult
mlir::fp4::verifyGPUConfigForChip(function_ref<InFlightDiagnostic()> emitError,
                                  GPUConfigAttr config,
                                  const ChipDescription &chip) {
  int64_t threads = 0;
  switch (config.getFamily()) {
  case GPUKernelFamily::Decode:
    threads = config.getWarps() * chip.warpSize;
    break;
  case GPUKernelFamily::Prefill:
    threads = config.getWarpsM() * config.getWarpsN() * chip.warpSize;
    break;
  case GPUKernelFamily::Elementwise:
    threads = config.getThreads();
    break;
  case GPUKernelFamily::Reference:
    break;
  }
  if (config.getMma() == GPUPrefillMMA::WGMMA && !chip.hasWGMMA)
    return emitError() << "gpu_config " << config << ": mma = wgmma needs "
                       << "a chip with warp-group MMA (sm_90a); "
                       << chip.chip << " has none";
  if (threads > chip.maxThreadsPerBlock)
    return emitError() << "gpu_config " << config << " needs " << threads
                       << " threads per block; " << chip.chip << " has at most "
                       << chip.maxThreadsPerBlock;
  if (int64_t cap = config.getMaxRegisters()) {
    if (cap > chip.maxRegistersPerThread)
      return emitError() << "gpu_config " << config
                         << ": max_registers = " << cap << " exceeds "
                         << chip.chip << "'s " << chip.maxRegistersPerThread
                         << " registers per thread";
    if (threads * cap > chip.registersPerSM)
      return emitError() << "gpu_config " << config << ": " << threads
                         << " threads x " << cap << " registers exceed "
                         << chip.chip << "'s register file of "
                         << chip.registersPerSM << " per SM";
  }
  return success();
}

int64_t mlir::fp4::getDecodeMaxM(const ChipDescription &chip,
                                 const GPUConfigOverrides &overrides) {
  return overrides.decodeMaxM.value_or(chip.decodeMaxM);
}

GPUConfigOverrides
mlir::fp4::withDecodeMMADefault(const ChipDescription &chip, int64_t rows,
                                GPUConfigOverrides overrides) {
  // Options that only the mma.sync form has (rows per CTA other than one
  // or two warp groups, two only for whole 16-row pieces of activations;
  // warps that are no whole K warps; prefetch; split-K) keep it.
  auto syncOnly = [&] {
    auto set = [](const std::optional<int64_t> &v) { return v && *v != 0; };
    const int64_t rowsPerCTA =
        set(overrides.decodeRowsPerCTA) ? *overrides.decodeRowsPerCTA : 64;
    const bool wgmmaRows =
        rowsPerCTA == 64 ||
        (rowsPerCTA == 128 && decodeWgmmaSharesRows(rows));
    return !wgmmaRows ||
           (set(overrides.decodeWarps) &&
            *overrides.decodeWarps % (rowsPerCTA / 16) != 0) ||
           set(overrides.decodePrefetch) ||
           (set(overrides.decodeSplitK) && *overrides.decodeSplitK > 1);
  };
  if (!overrides.decodeMMA)
    overrides.decodeMMA =
        chip.hasWGMMA && rows >= kDecodeWgmmaMinRows && !syncOnly()
            ? GPUPrefillMMA::WGMMA
            : GPUPrefillMMA::Sync;
  if (*overrides.decodeMMA == GPUPrefillMMA::WGMMA && !overrides.decodeKUnroll)
    overrides.decodeKUnroll = 128;
  // The warp-group form loads the next group's weight words while one is
  // staged and multiplied: H200, 16 x 14336 x 4096, W4A16 26.1 -> 25.1 us,
  // residual recipe 31.2 -> 28.2, full recipe (weight tile) 53.1 -> 45.2,
  // W4A4 25.55 -> 25.6 (docs/Performance.md, "Session 18").
  if (*overrides.decodeMMA == GPUPrefillMMA::WGMMA && !overrides.decodePrefetch)
    overrides.decodePrefetch = 1;
  return overrides;
}

GPUConfigAttr mlir::fp4::selectGPUConfig(Operation *op,
                                         const ChipDescription &chip,
                                         const GPUConfigOverrides &overrides) {
  MLIRContext *ctx = op->getContext();
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto lhs = dyn_cast<ShapedType>(matmul.getLhs().getType());
    if (!lhs || !lhs.hasRank() || lhs.getRank() != 2 || lhs.isDynamicDim(0))
      return {};
    int64_t m = lhs.getDimSize(0);
    if (m <= getDecodeMaxM(chip, overrides))
      return makeConfig(ctx, GPUKernelFamily::Decode,
                        withDecodeMMADefault(chip, m, overrides));
    return selectPrefillConfig(ctx, chip, m, overrides);
  }
  if (isa<QuantizeOp, DequantizeOp>(op))
    return makeConfig(ctx, GPUKernelFamily::Elementwise, overrides);
  return {};
}

GPUConfigAttr
mlir::fp4::selectGPUConfigForFamily(MLIRContext *ctx, GPUKernelFamily family,
                                    const GPUConfigOverrides &overrides) {
  return makeConfig(ctx, family, overrides);
}

GPUConfigAttr
mlir::fp4::selectPrefillConfig(MLIRContext *ctx, const ChipDescription &chip,
                               int64_t rows,
                               const GPUConfigOverrides &overrides,
                               bool sparseLhs, int64_t lhsGroups) {
  // The chip's instruction unless an option says otherwise: wgmma where
  // the chip has it (4096^3 W4A16 on the H200: 441 -> 338 us, W4A4 518 ->
  // 408, docs/perf/prefill_wgmma_2026-12-04.txt).
  GPUConfigOverrides o = overrides;
  if (!o.prefillMMA)
    o.prefillMMA = chip.hasWGMMA ? GPUPrefillMMA::WGMMA : GPUPrefillMMA::Sync;
  if (overridesPrefillTile(o))
    return makeConfig(ctx, GPUKernelFamily::Prefill, o);
  return makeConfig(ctx, GPUKernelFamily::Prefill, o,
                    prefillDefaults(ctx, chip, rows, sparseLhs, lhsGroups,
                                    o.prefillStages));
}

GPUConfigAttr
mlir::fp4::getOrSelectGPUConfig(Operation *op, const ChipDescription &chip,
                                const GPUConfigOverrides &overrides) {
  if (auto own = op->getAttrOfType<GPUConfigAttr>(GPUConfigAttr::kAttrName))
    return own;
  return selectGPUConfig(op, chip, overrides);
}

namespace {

/// The options part of verifyGPUSelection.
LogicalResult verifyOptions(Operation *anchor, StringRef passName,
                            const ChipDescription &chip, bool nativeFP4,
                            const GPUConfigOverrides &overrides) {
  auto emitError = [&] { return anchor->emitError(); };
  if (nativeFP4 && !chip.hasNativeFP4)
    return emitError() << passName << ": native-fp4 requested for " << chip.chip
                       << ", which has no FP4 conversion or block-scaled MMA "
                          "instructions (they need sm_100a or sm_120a); use "
                          "native-fp4=false for the bf16 emulation";
  if (nativeFP4 && !chip.nativeFP4Implemented)
    return emitError() << passName << ": native-fp4 kernels for " << chip.chip
                       << " are not available in this version (not "
                          "implemented for chip "
                       << chip.chip
                       << ": block-scaled FP4 MMA); use native-fp4=false "
                          "(bf16 tensor-core emulation, bit-identical "
                          "results)";
  if (failed(verifyGPUConfigOverrides(emitError, passName, overrides)))
    return failure();
  // The configs the overrides produce must fit the chip.
  MLIRContext *ctx = anchor->getContext();
  SmallVector<GPUConfigAttr> configs;
  for (GPUKernelFamily family :
       {GPUKernelFamily::Decode, GPUKernelFamily::Prefill,
        GPUKernelFamily::Elementwise})
    configs.push_back(makeConfig(ctx, family, overrides));
  // The medium class's tiles.
  for (int64_t rows = 16; rows <= chip.mediumMaxM; rows += 16)
    configs.push_back(selectPrefillConfig(ctx, chip, rows, overrides));
  for (GPUConfigAttr config : configs) {
    if (failed(verifyGPUConfigForChip(
            [&] {
              InFlightDiagnostic diag = emitError();
              diag << passName << ": the options give ";
              return diag;
            },
            config, chip)))
      return failure();
  }
  return success();
}

/// The attached-configs part of verifyGPUSelection.
LogicalResult verifyAttachedConfigs(Operation *root,
                                    const ChipDescription &chip) {
  bool ok = true;
  root->walk([&](Operation *op) {
    if (auto config =
            op->getAttrOfType<GPUConfigAttr>(GPUConfigAttr::kAttrName))
      ok &= succeeded(verifyGPUConfigForChip([&] { return op->emitOpError(); },
                                             config, chip));
  });
  return success(ok);
}

} // namespace

LogicalResult
mlir::fp4::verifyGPUSelection(Operation *root, StringRef passName,
                              const GPUSelectionOptions &selection) {
  const ChipDescription &chip = selection.getChip();
  if (failed(verifyOptions(root, passName, chip, selection.nativeFP4,
                           selection.overrides)))
    return failure();
  return verifyAttachedConfigs(root, chip);
}
