//===- CorrectionToGPU.cpp - accuracy-recipe ops to GPU kernels -----------===//
//
// One OpRewritePattern per op of CorrectionToGPU.h. Each checks what its
// kernel needs (static rank-2 shapes, blocked along the last axis), builds
// the kernel spec in manifest order (inputs as ABI components, then the
// results), asks the builder for a plan and hands the host side to the
// conversion's hooks. A declined op fails to match with the reason and
// stays for the CPU lowering.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/CorrectionToGPU.h"
#include "CorrectionKernels.h"
#include "FragmentDequant.h"
#include "FusedActivationPrep.h"
#include "FusedCorrectionChain.h"
#include "SparseWeightEntries.h"
#include "TransposedSum.h"

#include "fp4/Conversion/FP4ToGPU/GPUConfigSelection.h"
#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <memory>
#include <type_traits>

using namespace mlir;
using namespace mlir::fp4;

namespace {

MemRefType memrefOf(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return MemRefType::get(t.getShape(), t.getElementType());
}

bool isStaticRank(Type type, int64_t rank) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() && shaped.getRank() == rank &&
         shaped.getNumElements() > 0;
}

/// The W4A16 product of `rows` stacked bf16 activation rows with the
/// chain's quantized weight, into `result` elements; arguments not yet
/// added.
static MatmulKernelSpec stackedProductSpec(const FusedCorrectionChain &chain,
                                           int64_t rows, Type result) {
  MatmulKernelSpec spec;
  spec.m = rows;
  spec.n = chain.n;
  spec.k = chain.k;
  spec.lhsElementType = BFloat16Type::get(chain.weight.getContext());
  spec.rhs = cast<QuantizedTensorType>(chain.weight.getType());
  spec.resultElementType = result;
  return spec;
}

/// The same at prefill with the chain's block-sparse weight part written
/// into the weight tile (MatmulKernelSpec::WeightEntries), f32 result.
static MatmulKernelSpec prefillEntriesSpec(const FusedCorrectionChain &chain,
                                           int64_t rows) {
  MatmulKernelSpec spec = stackedProductSpec(
      chain, rows, Float32Type::get(chain.weight.getContext()));
  spec.weightEntries = MatmulKernelSpec::WeightEntries{
      chain.weightBlockSize,
      cast<RankedTensorType>(chain.weightValues.getType()).getShape().back()};
  return spec;
}

/// decode-k-unroll of the decode kernel that stages the activation sum for
/// the weight outliers, where the option is not given.
constexpr int64_t kStagedSumKUnroll = 512;
/// The register patch's mma.sync k-unroll: one 128-element chunk per warp
/// and iteration (decodeChainLaunches says why).
constexpr int64_t kPatchSyncKUnroll = 128;

/// The one prefill product of a chain's activation parts (sparse or
/// grouped forms below): the stacked lhs rows, the weight outliers as
/// entries of the weight tile, an f32 result when an outer acc follows.
static MatmulKernelSpec
prefillChainProductSpec(const FusedCorrectionChain &chain) {
  MLIRContext *ctx = chain.weight.getContext();
  Type result = chain.outerAcc ? Float32Type::get(ctx)
                               : chain.resultType.getElementType();
  MatmulKernelSpec spec = stackedProductSpec(chain, chain.m, result);
  if (chain.weightValues)
    spec.weightEntries = prefillEntriesSpec(chain, chain.m).weightEntries;
  return spec;
}

/// At prefill, a chain whose activation side is Q(x) (with its outliers)
/// and a bf16 2:4 residual that the activation prep computes: the prep
/// writes the residual compressed and one prefill kernel adds its product
/// on the sparse tensor cores (mma.sp, or wgmma.sp on the wgmma form) into
/// the dense product's accumulators, from the same dequantized weight tile
/// (MatmulKernelSpec::sparseLhs). Returns the product's spec (arguments
/// not yet added) when both kernels take the chain, else none: the chain
/// then keeps the stacked rows, and `why` says why when the chain has a
/// prefill residual that could have gone there.
static std::optional<MatmulKernelSpec>
sparsePrefillSpec(const FusedCorrectionChain &chain,
                  const FusedActivationPrep &prep, const GPUTarget &target,
                  GPUConfigAttr prefillConfig, std::string &why) {
  if (chain.decode || !prep.residual || chain.groups.size() != 2 ||
      !chain.groups[0].dense || chain.groups[1].dense ||
      chain.groups[1].values != ResidualOp(prep.residual).getValues())
    return std::nullopt;
  ActivationPrepKernelSpec prepSpec = prep.spec;
  prepSpec.compressedResidual = true;
  prepSpec.outputGroups = {1};
  ActivationPrepLayout layout;
  if (failed(planActivationPrep(prepSpec, layout, why)))
    return std::nullopt;
  MatmulKernelSpec spec = prefillChainProductSpec(chain);
  spec.sparseLhs = true;
  if (failed(checkPrefillMatmulKernel(spec, target, prefillConfig, why)))
    return std::nullopt;
  return spec;
}

/// At prefill on the wgmma form (mma = wgmma, sm_90a): a chain of several
/// activation row groups (e.g. Q(x) with its outliers and the densified
/// 2:4 residual) as one product of the stacked rows, every group's A tile
/// issued into the same accumulators against one weight tile
/// (MatmulKernelSpec::lhsGroups): no row-group epilogue, the residual's
/// half of zeros multiplied densely on the faster instruction (4096^3 full
/// recipe on the H200, against mma.sp: docs/perf/prefill_groups_2026-12-
/// 04.txt). Returns the product's spec (arguments not yet added) when the
/// kernel takes it.
static std::optional<MatmulKernelSpec>
groupedPrefillSpec(const FusedCorrectionChain &chain, const GPUTarget &target,
                   const GPUConfigOverrides &options) {
  auto groups = static_cast<int64_t>(chain.groups.size());
  if (chain.decode || groups < 2)
    return std::nullopt;
  MLIRContext *ctx = chain.weight.getContext();
  GPUConfigAttr config =
      selectPrefillConfig(ctx, target, chain.m, options, /*sparseLhs=*/false,
                          groups);
  if (config.getMma() != GPUPrefillMMA::WGMMA)
    return std::nullopt;
  MatmulKernelSpec spec = prefillChainProductSpec(chain);
  spec.lhsGroups = groups;
  std::string why;
  if (failed(checkPrefillMatmulKernel(spec, target, config, why)))
    return std::nullopt;
  return spec;
}

/// Activation rows one decode launch of a fused chain takes (the decode
/// kernel's four mma n-tiles): M = 16 with the 2:4 residual is one launch.
constexpr int64_t kStackedDecodeRows = 32;
/// Proven weight outliers go into the warp-group form's weight tile by
/// default only above this many stacked rows, where two or more 16-row
/// groups share the tile: H200, 16 x 14336 x 4096 full recipe (32 rows)
/// 45.2 us against 51.5 on the prefill kernel's entries; outliers alone
/// (16 rows) top-1 38.2 against 38.4, top-2 / top-4 slower unpipelined
/// (docs/Performance.md, "Session 18").
constexpr int64_t kDecodeTileDefaultMinRows = 16;
/// With at most kDecodePatchMaxUnitEntries entries per 32-element unit the
/// register patch (below) is the default from 9 stacked rows: H100,
/// 16 x 14336 x 4096 outlier top-1 (16 rows) 33.6 us against 38.0 on the
/// prefill kernel's entries (docs/Performance.md, "Session 20"); top-2
/// with the f16x2 compare 37.45 against 41.47 (session 22,
/// docs/perf/s22/s21f_log.txt; its images passed gpu_check on an H100 in
/// session 24, docs/perf/s24/s24a_log.txt); top-4 53.7 against 44.3
/// (session 20), so more entries keep the prefill kernel's.
constexpr int64_t kDecodePatchEntriesMinRows = 8;
/// By default proven entries go into the register fragments (the patch)
/// for at most this many entries per unit, else into the weight tile:
/// H100, 16 x 14336 x 4096 full recipe (32 rows, top-2) 41.0 us with 128
/// rows per CTA (43.4 with 64) against 44.8 for the tile.
constexpr int64_t kDecodePatchMaxUnitEntries = 2;
/// By default the patch's constant entries (what fp4-fold-constants leaves)
/// are packed at compile time in the lanes' load order
/// (packPatchWeightEntries: two coalesced loads per lane and chunk instead
/// of four small ones) and the product keeps 64 weight rows per CTA: H100,
/// 16 x 14336 x 4096, recipe us, two repetitions, one call: full recipe
/// 36.87 / 36.82 against 40.38 / 40.67 for the patch from the stored
/// entries at 128 rows (packed at 128 rows: 39.66 / 39.48 at prefetch 2,
/// 42.15 / 42.04 at 1; the patch at 64 rows 40.39 / 40.14); top-2 34.66 /
/// 34.55 against 37.22 / 37.09 (docs/perf/s25/s25b_log.txt, s25a_log.txt);
/// the same call as the one-run table: 36.98-37.01 against 40.35-40.59,
/// top-2 34.27-34.29 against 37.24-37.25 (docs/perf/s25/s25c_log.txt).
/// Only for exactly this many entries per unit: the packed form always
/// loads and patches two, and top-1 measured slower packed (34.17-34.25
/// against 31.85-32.0). Entries split at run time keep the patch from the
/// stored arrays.
constexpr int64_t kDecodePackedPatchUnitEntries = 2;

/// A decode-kernel launch of a decode chain's fused plan: its spec
/// (arguments not yet added) and the options it runs under.
struct DecodeChainLaunch {
  MatmulKernelSpec spec;
  GPUConfigOverrides overrides;
  /// With entries packed at compile time (WeightEntries::sparse or
  /// ::packed): the packed values and the metadata (sparse) or keys (packed)
  /// the launch takes instead of the entries.
  DenseResourceElementsAttr packedValues, packedMeta;
  /// Why decode-outliers=sparse|packed fell back to the patch from the
  /// stored entries (empty: it did not).
  std::string packDeclined;
};

/// Compile-time packings of constant weight entries, shared by a pattern
/// set and keyed by the constants' attributes (uniqued, so a rewrite that
/// erases the constant ops cannot alias a key) with the outlier block and
/// the form (1: the patch's keys, 0: the sparse metadata). The chain
/// analysis builds a chain's launches once per op of the chain before the
/// lowering builds them again, and each packing walks every entry (3.7 M
/// at 14336 x 4096: the full recipe's convert-fp4-to-gpu took 1.85 s with
/// five packings against 0.76 s with none).
struct PackedEntries {
  DenseResourceElementsAttr values, meta;
  std::string declined;
};
using PackedEntriesCache =
    llvm::DenseMap<std::tuple<Attribute, Attribute, int64_t, int64_t>,
                   PackedEntries>;

/// packConstantSparseEntries through `cache`: false with `declined` set
/// where the entries do not pack.
static bool packEntriesOnce(PackedEntriesCache &cache,
                            const FusedCorrectionChain &chain, bool forPatch,
                            PackedEntries &out) {
  Attribute values, indices;
  const bool constant = matchPattern(chain.weightValues, m_Constant(&values)) &&
                        matchPattern(chain.weightIndices, m_Constant(&indices));
  auto pack = [&](PackedEntries &p) {
    return succeeded(packConstantSparseEntries(
        chain.weightValues, chain.weightIndices, chain.n, chain.k,
        chain.weightBlockSize, p.values, p.meta, p.declined, forPatch));
  };
  if (!constant) // Fails at once, saying why.
    return pack(out);
  auto key = std::make_tuple(values, indices, chain.weightBlockSize,
                             static_cast<int64_t>(forPatch));
  auto it = cache.find(key);
  if (it == cache.end()) {
    PackedEntries p;
    pack(p);
    it = cache.try_emplace(key, std::move(p)).first;
  }
  out = it->second;
  return static_cast<bool>(out.values);
}

/// The decode-kernel launches of a decode chain's fused plan, by
/// lowerFusedChain's rules: one launch with the epilogue in the kernel when
/// one product holds every row group (`epilogueInKernel`), else one per
/// chunk of stacked row groups (`chunks`: groups per product). The chain
/// analysis asks the decode kernel about each before anything is built
/// (decodeTakesChain), so a declined plan runs term by term instead of
/// failing after the activation side is lowered.
static SmallVector<DecodeChainLaunch, 1>
decodeChainLaunches(const FusedCorrectionChain &chain,
                    const ChipDescription &chip,
                    const GPUConfigOverrides &options,
                    ArrayRef<int64_t> chunks, bool &epilogueInKernel,
                    PackedEntriesCache &packCache) {
  MLIRContext *ctx = chain.weight.getContext();
  const int64_t m = chain.m, k = chain.k;
  const auto numGroups = static_cast<int64_t>(chain.groups.size());
  GPUConfigAttr decodeConfig =
      selectGPUConfigForFamily(ctx, GPUKernelFamily::Decode, options);
  // Weight-outlier entries of one row in a lane's 32-element unit.
  const int64_t unitEntries =
      chain.weightValues
          ? cast<RankedTensorType>(chain.weightValues.getType())
                    .getShape()
                    .back() *
                (chain.weightBlockSize == 16 ? 2 : 1)
          : 0;
  bool needsEpilogue = numGroups > 1 || chain.weightValues ||
                       chain.outerAcc ||
                       !chain.resultType.getElementType().isF32();
  // The one product of every row group on the decode kernel's warp-group
  // form (withDecodeMMADefault; macro weights keep mma.sync there). With
  // weight outliers only by the option: its per-group slices of the sum
  // measured far slower than the mma.sync forms and the prefill kernel
  // (16 x 14336 x 4096 full recipe: 89 us against 52 on the prefill
  // kernel's entries, docs/perf/decode_wgmma_outliers_2026-12-05.txt).
  // Proven outliers are written into that form's weight tile instead: the
  // analysis sets weightEntriesProven only for the chains it placed there
  // (decode-outliers=tile, or by default above kDecodeTileDefaultMinRows
  // stacked rows: ChainAnalysisContext::decodeEntriesAboveRows), so that
  // decision is taken once, there. Unproven ones keep mma.sync.
  // decode-outliers=patch patches proven entries into either form's
  // register fragments, so the rows choose the form as for a plain product.
  // decode-outliers=sparse falls back to the patch where the entries do
  // not pack (decided below, once the form is known).
  const bool packedAsked = options.decodeOutliers == GPUDecodeOutliers::Sparse ||
                          options.decodeOutliers == GPUDecodeOutliers::Packed;
  const bool patchByDefault =
      !options.decodeOutliers && unitEntries <= kDecodePatchMaxUnitEntries;
  const bool patchEntries =
      chain.weightValues && chain.weightEntriesProven &&
      (options.decodeOutliers == GPUDecodeOutliers::Patch || packedAsked ||
       patchByDefault);
  GPUConfigOverrides chainOptions = options;
  if (patchEntries && !chainOptions.decodeMMA)
    chainOptions.decodeMMA =
        chip.hasWGMMA && (numGroups * m >= kDecodeWgmmaMinRows || packedAsked)
            ? GPUPrefillMMA::WGMMA
            : GPUPrefillMMA::Sync;
  if (chain.weightValues && !chainOptions.decodeMMA)
    chainOptions.decodeMMA = chain.weightEntriesProven ? GPUPrefillMMA::WGMMA
                                                       : GPUPrefillMMA::Sync;
  const GPUConfigOverrides wgmmaOverrides =
      withDecodeMMADefault(chip, numGroups * m, chainOptions);
  std::string why;
  std::optional<BF16FragmentDequant> weightForm = BF16FragmentDequant::get(
      cast<QuantizedTensorType>(chain.weight.getType()), why);
  const bool onWgmma = wgmmaOverrides.decodeMMA == GPUPrefillMMA::WGMMA &&
                       chip.hasWGMMA && weightForm &&
                       !weightForm->hasMacroFactors();
  // On that form, weight outliers proven to sit on +-0 weights go into the
  // weight operand (MatmulKernelSpec::WeightEntries): its shared weight
  // tile, or with the patch the register fragments (either form): no
  // activation sum, no gathers; the operand holds the weight's values, so
  // its scheme has no tensor factor or exponent offset.
  const bool entriesInWeight =
      chain.weightValues && chain.weightEntriesProven &&
      (onWgmma || (patchEntries && weightForm &&
                   !weightForm->hasMacroFactors())) &&
      weightForm->exponentOffset() == 0 && !weightForm->hasTensorScale() &&
      (chain.weightBlockSize == 16 || chain.weightBlockSize % 32 == 0) &&
      k % chain.weightBlockSize == 0;
  // Weight outliers join the decode kernel when their activation sum fits
  // in its shared memory (K * M f32 <= 32 KB), or on its warp-group form,
  // which stages the sum's slice per group of chunks; larger sums go to
  // the epilogue kernel (its slot or sliced form), which gathered them
  // faster than the decode kernel reading the sum from L1 (full recipe, 16
  // x 14336 x 4096: 95.2 against 101.9 us, measured during development on
  // 2026-12-03; that log was not kept).
  bool outliersFit =
      !chain.weightValues ||
      ((chain.weightBlockSize == 16 || chain.weightBlockSize % 32 == 0) &&
       k % chain.weightBlockSize == 0 &&
       (onWgmma || k * m * 4 <= kDecodeEpilogueMaxSumBytes));
  epilogueInKernel = chunks.size() == 1 && needsEpilogue && outliersFit &&
                     decodeConfig.getSplitK() <= 1;
  SmallVector<DecodeChainLaunch, 1> launches;
  if (!epilogueInKernel) {
    for (int64_t groups : chunks)
      launches.push_back({stackedProductSpec(chain, groups * m,
                                             Float32Type::get(ctx)),
                          withDecodeMMADefault(chip, groups * m, chainOptions),
                          {}, {}, {}});
    return launches;
  }
  MatmulKernelSpec spec = stackedProductSpec(
      chain, numGroups * m, chain.resultType.getElementType());
  MatmulKernelSpec::Epilogue epilogue;
  epilogue.rowGroups = numGroups;
  // decode-outliers=sparse: constant, finite entries, at most 2 per unit,
  // packed here for the warp-group form's sparse tensor cores
  // (SparseWeightEntries.h); where they do not pack, the patch.
  // decode-outliers=packed: the same constants, packed for the register
  // patch's loads (keys instead of metadata); where they do not pack, the
  // patch from the entries as they are.
  // By default (kDecodePackedPatchUnitEntries) the patch on the warp-group
  // form packs constant entries too; where they do not pack it keeps the
  // stored arrays without a remark, since nobody asked for the packing.
  DenseResourceElementsAttr packedValues, packedMeta;
  bool entriesPacked = false;
  const bool packByDefault = patchByDefault && entriesInWeight && onWgmma &&
                             unitEntries == kDecodePackedPatchUnitEntries;
  const bool forPatch =
      options.decodeOutliers == GPUDecodeOutliers::Packed || packByDefault;
  std::string packDeclined;
  if (entriesInWeight && (packedAsked || packByDefault)) {
    if (!onWgmma)
      packDeclined = "the decode kernel's warp-group form does not take "
                       "the product (sm_90a, no macro factors)";
    else if (unitEntries > 2)
      packDeclined = std::to_string(unitEntries) +
                       " entries per 32-element unit (at most 2)";
    else {
      PackedEntries p;
      entriesPacked = packEntriesOnce(packCache, chain, forPatch, p);
      packedValues = p.values;
      packedMeta = p.meta;
      packDeclined = p.declined;
    }
    if (!packedAsked)
      packDeclined.clear();
  }
  if (entriesInWeight) {
    spec.weightEntries = MatmulKernelSpec::WeightEntries{
        chain.weightBlockSize,
        cast<RankedTensorType>(chain.weightValues.getType()).getShape().back(),
        patchEntries && (forPatch || !entriesPacked),
        entriesPacked && !forPatch, entriesPacked && forPatch};
  } else if (chain.weightValues) {
    auto valuesType = cast<RankedTensorType>(chain.weightValues.getType());
    epilogue.outlierBlockSize = chain.weightBlockSize;
    epilogue.outlierEntries = valuesType.getShape().back();
    epilogue.outlierValuesType = valuesType.getElementType();
    // Default: the tail form for at most 2 entries per 32-element unit
    // (its copy of the CTA's entries streams them alongside the weights,
    // docs/Performance.md "Session 14"); more entries keep the loop form.
    // The warp-group form has no tail (its main loop gathers from the
    // sum's slices).
    // (decode-outliers=tile where the tile cannot take them: the default.)
    std::optional<GPUDecodeOutliers> form = options.decodeOutliers;
    if (isEntriesForm(form))
      form.reset();
    epilogue.outlierTail =
        !onWgmma && form.value_or(unitEntries <= 2
                                      ? GPUDecodeOutliers::Tail
                                      : GPUDecodeOutliers::Loop) ==
                        GPUDecodeOutliers::Tail;
    // The tail's gathers read the sum lane-banked where its lane runs are
    // whole outlier blocks (TransposedSum.h).
    if (epilogue.outlierTail)
      epilogue.sumBankColumns = laneBankedSumColumns(
          k, epilogue.outlierBlockSize, epilogue.outlierEntries);
  }
  if (chain.outerAcc)
    epilogue.accElementType =
        cast<RankedTensorType>(chain.outerAcc.getType()).getElementType();
  spec.epilogue = epilogue;
  // With the activation sum staged (weight outliers), 512 K elements per
  // warp and iteration unless decode-k-unroll says otherwise: full
  // recipe, 1 x 14336 x 4096, decode kernel 23.1 / 23.3 us against 25.3
  // at 256 (1024: 25.7; prefetch 1 with either: slower; other CTA
  // shapes: slower), docs/perf/decode_staged_sweep_2026-12-04.txt.
  // Only where K gives that CTA shape's two K warps whole iterations (a
  // short K would run masked ones), and for at most 2 entries per
  // 32-element unit: top-4 measured slower at 512 (outlier_k4, same
  // shape: 34.8 us against 31.4, docs/perf/gpu_all_2026-12-04_s9.txt).
  // The tail form's loop is the plain product's: the default unroll; the
  // warp-group form has its own (withDecodeMMADefault). The register
  // patch on mma.sync takes one chunk per iteration: its loop holds each
  // chunk's 32 patched pairs at once (full recipe, 1 x 14336 x 4096,
  // ptxas sm_90a: 70 registers at 128; 96 and a 4-byte spill at 256; 161
  // at 512).
  GPUConfigOverrides overrides = wgmmaOverrides;
  if (entriesInWeight && !onWgmma && !overrides.decodeKUnroll)
    overrides.decodeKUnroll = kPatchSyncKUnroll;
  // The patch above 16 stacked rows: two 64-row warp groups per K warp
  // group share its activation slot (each CTA stages the 32 stacked rows
  // once per 128 weight rows; 112 CTAs of 16 warps): 41.0 against 43.4 us
  // with 64 rows (H100, full recipe at 16 x 14336 x 4096, Session 20),
  // where the rows are whole 16-row pieces. The packed patch keeps 64 rows
  // (kDecodePackedPatchUnitEntries: 36.85 against 39.4-42.1 us with 128).
  const int64_t stackedRows = numGroups * m;
  const bool packedPatch = entriesPacked && forPatch;
  if (entriesInWeight && patchEntries && onWgmma && !packedPatch &&
      (!options.decodeOutliers || entriesPacked || forPatch) &&
      stackedRows > kDecodeTileDefaultMinRows &&
      decodeWgmmaSharesRows(stackedRows) &&
      !overrides.decodeRowsPerCTA && !overrides.decodeWarps) {
    overrides.decodeRowsPerCTA = 128;
    // The sparse form's loop holds the packed values and metadata a group
    // ahead: at 16 warps (128 registers a thread) ptxas 13.0 spills 12
    // bytes (16 x 14336 x 4096 and K = 512); at 8 warps (one K warp group)
    // it takes 120-122 registers, no spills. 16 warps measured faster
    // (full recipe, 16 x 14336 x 4096, H100: 46.5-46.9 us against 54.3),
    // but both are slower than the patch (40.5; docs/perf/s23), so the
    // opt-in form keeps the spill-free shape.
    overrides.decodeWarps = entriesPacked ? 8 : 16;
  }
  if (chain.weightValues && !entriesInWeight && !epilogue.outlierTail &&
      !onWgmma &&
      !overrides.decodeKUnroll && k % (2 * kStagedSumKUnroll) == 0 &&
      unitEntries <= 2)
    overrides.decodeKUnroll = kStagedSumKUnroll;
  launches.push_back(
      {spec, overrides, packedValues, packedMeta, packDeclined});
  return launches;
}

/// The stacked row groups per decode product (lowerFusedChain's chunks).
static SmallVector<int64_t> decodeChunks(const FusedCorrectionChain &chain) {
  const auto numGroups = static_cast<int64_t>(chain.groups.size());
  const int64_t perChunk = std::max<int64_t>(1, kStackedDecodeRows / chain.m);
  SmallVector<int64_t> chunks;
  for (int64_t g = 0; g < numGroups; g += perChunk)
    chunks.push_back(std::min(perChunk, numGroups - g));
  return chunks;
}

/// Shared by the patterns: the hooks, the decline path and the launch.
template <typename OpTy>
struct CorrectionPattern : public OpRewritePattern<OpTy> {
  CorrectionPattern(MLIRContext *ctx, const FP4GPULaunchHooks &hooks,
                    std::shared_ptr<LoweredSplits> splits,
                    std::shared_ptr<llvm::DenseSet<Operation *>> remarked,
                    std::shared_ptr<PackedEntriesCache> packed)
      : OpRewritePattern<OpTy>(ctx), hooks(hooks), splits(std::move(splits)),
        remarkedChains(std::move(remarked)), packedEntries(std::move(packed)) {
  }

  /// The chain analysis' view of this conversion (FusedCorrectionChain.h).
  ChainAnalysisContext chainContext() const {
    const bool stacksOnWgmma =
        withDecodeMMADefault(hooks.target, kStackedDecodeRows, hooks.options)
            .decodeMMA == GPUPrefillMMA::WGMMA;
    const bool tileAsked = isEntriesForm(hooks.options.decodeOutliers);
    return ChainAnalysisContext{
        getDecodeMaxM(hooks.target, hooks.options), *splits,
        [this](const FusedCorrectionChain &chain, std::string &reason) {
          auto rows = static_cast<int64_t>(chain.groups.size() * chain.m);
          MatmulKernelSpec spec =
              chain.weightValues
                  ? prefillEntriesSpec(chain, rows)
                  : stackedProductSpec(chain, rows,
                                       Float32Type::get(this->getContext()));
          return checkPrefillMatmulKernel(
              spec, hooks.target,
              selectPrefillConfig(this->getContext(), hooks.target, spec.m,
                                  hooks.options),
              reason);
        },
        // The user's decode-max-m is the boundary as given.
        hooks.options.decodeMaxM ? 0 : hooks.target.correctionPrefillMinM,
        // From correctionPrefillMinM rows a chain without weight outliers
        // keeps the decode plan where its stacked product runs on wgmma.
        stacksOnWgmma,
        // Weight outliers on it (decodeChainLaunches): all of them with
        // decode-mma=wgmma; proven ones with decode-outliers=tile, or by
        // default above 16 stacked rows where the stacked product's
        // default form is wgmma.
        hooks.options.decodeMMA == GPUPrefillMMA::WGMMA,
        hooks.target.hasWGMMA &&
            (tileAsked || (!hooks.options.decodeOutliers && stacksOnWgmma)),
        tileAsked ? 0 : kDecodeTileDefaultMinRows,
        tileAsked ? 0 : kDecodePatchEntriesMinRows,
        kDecodePatchMaxUnitEntries,
        [this](const FusedCorrectionChain &chain, std::string &reason) {
          bool epilogueInKernel = false;
          for (const DecodeChainLaunch &l : decodeChainLaunches(
                   chain, hooks.target, hooks.options, decodeChunks(chain),
                   epilogueInKernel, *packedEntries)) {
            GPUConfigAttr config = selectGPUConfigForFamily(
                this->getContext(), GPUKernelFamily::Decode, l.overrides);
            if (failed(checkDecodeMatmulKernel(l.spec, hooks.target, config,
                                               reason)))
              return failure();
          }
          return success();
        }};
  }

  LogicalResult decline(OpTy op, PatternRewriter &rewriter,
                        const Twine &reason) const {
    if (hooks.remarks)
      op->emitRemark() << "stays on the host: " << reason;
    return rewriter.notifyMatchFailure(op, reason);
  }

  /// Builds the kernel named after `stem` with `build(name, reason)`, then
  /// the host launch; returns the named outputs.
  template <typename BuildFn>
  FailureOr<SmallVector<Value>>
  launch(OpTy op, PatternRewriter &rewriter, StringRef stem,
         ArrayRef<KernelArg> args, ArrayRef<Value> inputs,
         ArrayRef<std::pair<std::string, RankedTensorType>> outputs,
         BuildFn build) const {
    gpu::GPUModuleOp module = hooks.getKernelModule();
    std::string name = hooks.nextKernelName(stem);
    std::string reason;
    FailureOr<KernelPlan> plan = build(module, name, reason);
    if (failed(plan)) {
      if (Operation *stale = module.lookupSymbol(name))
        stale->erase();
      for (Value v : inputs)
        if (auto unpack = v.getDefiningOp<UnpackOp>();
            unpack && unpack->use_empty())
          rewriter.eraseOp(unpack);
      (void)decline(op, rewriter, reason);
      return failure();
    }
    return hooks.emitHost(rewriter, op, *plan, args, inputs, outputs);
  }

  /// launch(), then replaces the op by the outputs.
  template <typename BuildFn>
  LogicalResult
  replaceWithLaunch(OpTy op, PatternRewriter &rewriter, StringRef stem,
                    ArrayRef<KernelArg> args, ArrayRef<Value> inputs,
                    ArrayRef<std::pair<std::string, RankedTensorType>> outputs,
                    BuildFn build) const {
    FailureOr<SmallVector<Value>> results =
        launch(op, rewriter, stem, args, inputs, outputs, build);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }

  /// Appends `value`'s arguments as inputs.
  SmallVector<Value> input(PatternRewriter &rewriter, Location loc, Value value,
                           StringRef name, SmallVector<KernelArg> &args) const {
    return hooks.appendArgs(rewriter, loc, value, name, args);
  }

  const FP4GPULaunchHooks &hooks;
  /// Shared by the patterns of one set: the splits converted so far.
  std::shared_ptr<LoweredSplits> splits;
  /// The ends of the chains whose term-by-term remark was emitted (each
  /// link, lowered in turn, would otherwise see the rest of the chain and
  /// say it again).
  std::shared_ptr<llvm::DenseSet<Operation *>> remarkedChains;
  /// Shared by the patterns of one set: constant entries packed so far.
  std::shared_ptr<PackedEntriesCache> packedEntries;
};

/// Appends an output argument and its (name, type) for emitHost.
void addOutput(SmallVector<KernelArg> &args,
               SmallVector<std::pair<std::string, RankedTensorType>> &outputs,
               StringRef name, Type type) {
  args.push_back({name.str(), memrefOf(type), /*readOnly=*/false});
  outputs.push_back({name.str(), cast<RankedTensorType>(type)});
}

/// fp4.split_outliers and fp4.residual: the block top-k kernel, on x or on
/// its quantization residual.
template <typename OpTy>
struct BlockTopKToGPU : public CorrectionPattern<OpTy> {
  using CorrectionPattern<OpTy>::CorrectionPattern;
  static constexpr bool isResidual = std::is_same_v<OpTy, ResidualOp>;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    // Computed by its chain's activation prep, at the chain's end.
    if (isFusedIntoActivationPrep(op, this->chainContext()))
      return rewriter.notifyMatchFailure(op,
                                         "fused into the activation prep");
    auto type = cast<RankedTensorType>(op.getInput().getType());
    BlockTopKKernelSpec spec;
    if constexpr (isResidual)
      spec.quantized = cast<QuantizedTensorType>(op.getQuantized().getType());
    if (!isStaticRank(type, 2) || (spec.quantized && spec.quantized.getAxis() != 1))
      return this->decline(op, rewriter,
                           "the GPU block top-k needs a static, non-empty "
                           "rank-2 input (quantized along its last axis)");
    spec.rows = type.getDimSize(0);
    spec.cols = type.getDimSize(1);
    spec.blockSize = op.getBlockSize();
    spec.k = op.getK();
    spec.inputElementType = type.getElementType();
    spec.valuesElementType = op.getValues().getType().getElementType();
    Location loc = op.getLoc();
    SmallVector<Value> inputs =
        this->input(rewriter, loc, op.getInput(), "input", spec.args);
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    if constexpr (isResidual)
      llvm::append_range(inputs, this->input(rewriter, loc, op.getQuantized(),
                                             "quantized", spec.args));
    else
      addOutput(spec.args, outputs, "rest", op.getRest().getType());
    addOutput(spec.args, outputs, "values", op.getValues().getType());
    addOutput(spec.args, outputs, "indices", op.getIndices().getType());
    FailureOr<SmallVector<Value>> results = this->launch(
        op, rewriter, isResidual ? "fp4_residual" : "fp4_split_outliers",
        spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildBlockTopKKernel(rewriter, loc, module, name, spec,
                                      reason);
        });
    if (failed(results))
      return failure();
    if constexpr (!isResidual)
      (*this->splits)[(*results)[0]] =
          LoweredSplit{(*results)[1], (*results)[2], spec.blockSize};
    rewriter.replaceOp(op, *results);
    return success();
  }
};

struct SplitChannelsToGPU : public CorrectionPattern<SplitChannelsOp> {
  using CorrectionPattern::CorrectionPattern;
  LogicalResult matchAndRewrite(SplitChannelsOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (!isStaticRank(type, 2))
      return decline(op, rewriter,
                     "the GPU channel split needs a static, non-empty rank-2 "
                     "input");
    SplitChannelsKernelSpec spec;
    spec.rows = type.getDimSize(0);
    spec.cols = type.getDimSize(1);
    llvm::append_range(spec.channels, op.getChannels());
    spec.inputElementType = type.getElementType();
    spec.gatheredElementType = op.getGathered().getType().getElementType();
    Location loc = op.getLoc();
    SmallVector<Value> inputs =
        input(rewriter, loc, op.getInput(), "input", spec.args);
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    addOutput(spec.args, outputs, "rest", op.getRest().getType());
    addOutput(spec.args, outputs, "gathered", op.getGathered().getType());
    return replaceWithLaunch(
        op, rewriter, "fp4_split_channels", spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildSplitChannelsKernel(rewriter, loc, module, name, spec,
                                          reason);
        });
  }
};

struct RotateToGPU : public CorrectionPattern<RotateOp> {
  using CorrectionPattern::CorrectionPattern;
  LogicalResult matchAndRewrite(RotateOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    // The quantizer kernel fuses the rotation it alone reads (the same test
    // as its conversion); leave that one to it, without a remark.
    if (op->hasOneUse() && isa<QuantizeOp>(*op->getUsers().begin()) &&
        op.getStride() == 1 && op.getAxis() == 1 && isStaticRank(type, 2))
      return rewriter.notifyMatchFailure(op, "fused into its fp4.quantize");
    if (isFusedIntoActivationPrep(op, chainContext()))
      return rewriter.notifyMatchFailure(op, "fused into the activation prep");
    if (!isStaticRank(type, 2) || op.getAxis() != 1)
      return decline(op, rewriter,
                     "the GPU rotation kernel needs a static, non-empty "
                     "rank-2 input rotated along its last axis");
    RotateKernelSpec spec;
    spec.rows = type.getDimSize(0);
    spec.cols = type.getDimSize(1);
    spec.size = op.getSize();
    spec.stride = op.getStride();
    if (std::optional<uint32_t> seed = op.getSeed())
      spec.seed = *seed;
    spec.inverse = op.getInverse();
    spec.inputElementType = type.getElementType();
    spec.resultElementType = op.getResult().getType().getElementType();
    Location loc = op.getLoc();
    SmallVector<Value> inputs =
        input(rewriter, loc, op.getInput(), "input", spec.args);
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    addOutput(spec.args, outputs, "result", op.getResult().getType());
    return replaceWithLaunch(
        op, rewriter, "fp4_rotate", spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildRotateKernel(rewriter, loc, module, name, spec, reason);
        });
  }
};

/// fp4.permute of the two-level rotation (the activation side that
/// PermutationFolding could not move into a producer's weights).
struct PermuteToGPU : public CorrectionPattern<PermuteOp> {
  using CorrectionPattern::CorrectionPattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    Type element = type.getElementType();
    if (!isStaticRank(type, 2) || op.getAxis() != 1 ||
        !(isa<FloatType>(element) || element.isSignlessInteger()))
      return decline(op, rewriter,
                     "the GPU permutation kernel needs a static, non-empty "
                     "rank-2 float or integer tensor permuted along its last "
                     "axis");
    PermuteKernelSpec spec;
    spec.rows = type.getDimSize(0);
    spec.cols = type.getDimSize(1);
    Location loc = op.getLoc();
    SmallVector<int32_t> table(op.getPermutation().begin(),
                               op.getPermutation().end());
    auto tableType =
        RankedTensorType::get({spec.cols}, rewriter.getI32Type());
    Value permutation = arith::ConstantOp::create(
        rewriter, loc, DenseIntElementsAttr::get(tableType, ArrayRef(table)));
    SmallVector<Value> inputs =
        input(rewriter, loc, op.getInput(), "input", spec.args);
    llvm::append_range(inputs, input(rewriter, loc, permutation,
                                     "permutation", spec.args));
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    addOutput(spec.args, outputs, "result", op.getResult().getType());
    return replaceWithLaunch(
        op, rewriter, "fp4_permute", spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildPermuteKernel(rewriter, loc, module, name, spec, reason);
        });
  }
};

/// At decode sizes, a sparse lhs keeping at least this fraction of K goes
/// through the W4A16 tensor-core families (densified) rather than the
/// gather kernel: the gather reads one weight element per entry and
/// thread, which costs more than streaming the whole weight once when
/// entries are that dense (2:4 keeps 1/2; block top-2 of 32 keeps 1/16).
/// At prefill sizes the tensor cores win for any density (measured on the
/// H200: docs/GPU.md).
constexpr int64_t kDenseRouteNumerator = 1, kDenseRouteDenominator = 4;

struct CorrectionMatmulToGPU : public CorrectionPattern<CorrectionMatmulOp> {
  using CorrectionPattern::CorrectionPattern;

  /// Describes one side (values/indices or the dense tensor) and appends
  /// its kernel arguments.
  FailureOr<CorrectionOperand>
  describe(CorrectionMatmulOp op, PatternRewriter &rewriter, ValueRange side,
           std::optional<int64_t> blockSize, StringRef name,
           SmallVector<KernelArg> &args, SmallVector<Value> &inputs) const {
    CorrectionOperand operand;
    Location loc = op.getLoc();
    if (side.size() == 2) {
      operand.blockSize = *blockSize;
      auto values = cast<RankedTensorType>(side[0].getType());
      operand.k = values.getShape().back();
      operand.valuesElementType = values.getElementType();
      llvm::append_range(inputs, input(rewriter, loc, side[0],
                                       (name + ".values").str(), args));
      llvm::append_range(inputs, input(rewriter, loc, side[1],
                                       (name + ".indices").str(), args));
      return operand;
    }
    if (auto q = dyn_cast<QuantizedTensorType>(side[0].getType())) {
      if (q.getAxis() != 1)
        return failure();
      operand.quantized = q;
    } else {
      operand.floatType = cast<RankedTensorType>(side[0].getType())
                              .getElementType();
    }
    llvm::append_range(inputs, input(rewriter, loc, side[0], name, args));
    return operand;
  }

  LogicalResult matchAndRewrite(CorrectionMatmulOp op,
                                PatternRewriter &rewriter) const override {
    // A recipe's chain of terms lowers as one plan (FusedCorrectionChain.h)
    // at its last product; the earlier links wait for it, without remark.
    std::string unfused;
    bool sayWhyUnfused = false;
    CorrectionMatmulOp end = findCorrectionChainEnd(op);
    FailureOr<FusedCorrectionChain> chain =
        analyzeCorrectionChain(end, chainContext(), unfused,
                               &sayWhyUnfused);
    if (succeeded(chain)) {
      if (end != op)
        return rewriter.notifyMatchFailure(op, "fused into the chain's end");
      return lowerFusedChain(*chain, op, rewriter);
    }
    // Still on the GPU, but term by term: say why once per chain, at the
    // first link the walk reaches (the later links, lowered in turn, still
    // see the rest of the chain and its end).
    if (sayWhyUnfused && hooks.remarks &&
        remarkedChains->insert(end.getOperation()).second)
      op->emitRemark() << unfused;
    // The end is lowered (and erased) now; a later op may reuse its address.
    if (end == op)
      remarkedChains->erase(end.getOperation());
    RankedTensorType resultType = op.getResult().getType();
    for (Value v : op->getOperands())
      if (!cast<ShapedType>(v.getType()).hasStaticShape())
        return decline(op, rewriter,
                       "the GPU correction product needs static shapes");
    if (!isStaticRank(resultType, 2) || op.getLhsShape().size() != 2 ||
        op.getRhsShape().size() != 2)
      return decline(op, rewriter,
                     "the GPU correction product takes rank-2 operands "
                     "(batched products stay on the host)");
    if (op.getLhsShape()[1] == 0)
      return decline(op, rewriter, "K is empty (nothing to compute)");
    if (succeeded(denseRoute(op, rewriter)))
      return success();

    CorrectionProductKernelSpec spec;
    spec.m = resultType.getDimSize(0);
    spec.n = resultType.getDimSize(1);
    spec.k = op.getLhsShape()[1];
    spec.resultElementType = resultType.getElementType();
    SmallVector<Value> inputs;
    FailureOr<CorrectionOperand> lhs =
        describe(op, rewriter, op.getLhs(), op.getLhsBlockSize(), "lhs",
                 spec.args, inputs);
    FailureOr<CorrectionOperand> rhs =
        describe(op, rewriter, op.getRhs(), op.getRhsBlockSize(), "rhs",
                 spec.args, inputs);
    if (failed(lhs) || failed(rhs)) {
      for (Value v : inputs)
        if (auto unpack = v.getDefiningOp<UnpackOp>();
            unpack && unpack->use_empty())
          rewriter.eraseOp(unpack);
      return decline(op, rewriter,
                     "quantized operands must be blocked along K (axis 1)");
    }
    spec.lhs = *lhs;
    spec.rhs = *rhs;
    if (Value acc = op.getAcc()) {
      spec.accElementType = cast<RankedTensorType>(acc.getType()).getElementType();
      llvm::append_range(inputs, input(rewriter, op.getLoc(), acc, "acc",
                                       spec.args));
    }
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    addOutput(spec.args, outputs, "result", resultType);
    Location loc = op.getLoc();
    return replaceWithLaunch(
        op, rewriter, "fp4_correction", spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildCorrectionProductKernel(rewriter, loc, module, name,
                                              spec, reason);
        });
  }

  /// The fused plan: the stacker, one W4A16 product per chunk of row
  /// groups (the decode kernel takes up to kStackedDecodeRows rows, so
  /// decode chunks hold that / M groups; at prefill one fp4.matmul takes
  /// them all), then the epilogue unless the single product already is the
  /// result.
  LogicalResult lowerFusedChain(const FusedCorrectionChain &chain,
                                CorrectionMatmulOp end,
                                PatternRewriter &rewriter) const {
    Location loc = end.getLoc();
    const int64_t m = chain.m, n = chain.n, k = chain.k;
    const int64_t numGroups = static_cast<int64_t>(chain.groups.size());
    const int64_t perChunk =
        chain.decode ? std::max<int64_t>(1, kStackedDecodeRows / m)
                     : numGroups;
    Type bf16 = rewriter.getBF16Type(), f32 = rewriter.getF32Type();
    auto sparseOperand = [](Value values, int64_t blockSize) {
      CorrectionOperand operand;
      auto type = cast<RankedTensorType>(values.getType());
      operand.blockSize = blockSize;
      operand.k = type.getShape().back();
      operand.valuesElementType = type.getElementType();
      return operand;
    };

    StackActivationsKernelSpec stack;
    stack.rows = m;
    stack.cols = k;
    for (int64_t g = 0; g < numGroups; g += perChunk)
      stack.outputGroups.push_back(std::min(perChunk, numGroups - g));
    // Decode with one product: the decode kernel does the epilogue too (no
    // second launch, no [groups * M, N] round trip), unless the product
    // alone already is the result (decodeChainLaunches; the chain analysis
    // asked the decode kernel about these launches before any IR changed).
    bool epilogueInKernel = false;
    SmallVector<DecodeChainLaunch, 1> decodeLaunches;
    if (chain.decode)
      decodeLaunches = decodeChainLaunches(chain, hooks.target, hooks.options,
                                           stack.outputGroups,
                                           epilogueInKernel, *packedEntries);
    // The decode plans add the weight outliers' product from the activation
    // sum, unless the decode kernel writes them into its weight tile; at
    // prefill the outliers go into the weight tile too.
    const bool entriesInWeight =
        epilogueInKernel && decodeLaunches.front().spec.weightEntries;
    const bool outlierEpilogue =
        chain.weightValues && chain.decode && !entriesInWeight;
    if (outlierEpilogue && hooks.remarks &&
        isEntriesForm(hooks.options.decodeOutliers))
      end->emitRemark()
          << "decode-outliers="
          << [&] {
               std::string text;
               llvm::raw_string_ostream(text) << *hooks.options.decodeOutliers;
               return text;
             }()
          << ": the weight outliers are multiplied from the activation sum, "
             "not written into the weight operand ("
          << (!chain.weightEntriesProven
                  ? "the quantized weight is not proven +-0 at their "
                    "positions"
                  : "the decode kernel's warp-group form does not take one "
                    "product of the chain")
          << ")";
    if (entriesInWeight && hooks.remarks &&
        !decodeLaunches.front().packDeclined.empty()) {
      const bool forPatch =
          hooks.options.decodeOutliers == GPUDecodeOutliers::Packed;
      end->emitRemark() << "decode-outliers="
                        << (forPatch ? "packed" : "sparse") << ": "
                        << decodeLaunches.front().packDeclined
                        << "; the entries take the register patch"
                        << (forPatch ? " from their stored arrays" : "");
    }
    stack.transposedSum = outlierEpilogue;
    // The decode kernel's tail form reads it lane-banked (decided with the
    // launch, in decodeChainLaunches); the epilogue kernel as [K, M].
    if (outlierEpilogue && epilogueInKernel)
      if (const auto &e = decodeLaunches.front().spec.epilogue)
        stack.sumBankColumns = e->sumBankColumns;
    // The activation side: one prep kernel from x where the chain's
    // activation ops allow it (FusedActivationPrep.h), else the stacker
    // over the parts the ops' own kernels computed.
    std::string noPrep;
    FailureOr<FusedActivationPrep> prep = analyzeActivationPrep(chain, noPrep);
    // Decided before any IR changes (both kernels were asked). The 2:4
    // residual's product (option prefill-residual): `rows` multiplies it
    // densified, as a row group (on the wgmma form in the same
    // accumulators); `sparse` packed on the sparse tensor cores (wgmma.sp
    // on the wgmma form, else mma.sp). Not given: the row groups where the
    // wgmma form takes them (faster than mma.sp on the H200:
    // docs/perf/prefill_groups_2026-12-04.txt), else the sparse product.
    // wgmma.sp is not the default until it has run on the hardware.
    std::optional<GPUPrefillResidual> form = hooks.options.prefillResidual;
    std::optional<MatmulKernelSpec> groupedSpec;
    if (form != GPUPrefillResidual::Sparse)
      groupedSpec = groupedPrefillSpec(chain, hooks.target, hooks.options);
    std::optional<MatmulKernelSpec> sparseSpec;
    std::string notSparse;
    if (succeeded(prep) && !groupedSpec && form != GPUPrefillResidual::Rows)
      sparseSpec = sparsePrefillSpec(
          chain, *prep, hooks.target,
          selectPrefillConfig(rewriter.getContext(), hooks.target, chain.m,
                              hooks.options, /*sparseLhs=*/true),
          notSparse);
    if (!sparseSpec && !groupedSpec && !notSparse.empty() && hooks.remarks)
      end->emitRemark() << "the 2:4 residual runs as stacked dense rows, "
                           "not on the sparse tensor cores: "
                        << notSparse;
    if (sparseSpec)
      stack.outputGroups = {1};
    FailureOr<SmallVector<Value>> stacked;
    if (succeeded(prep)) {
      stacked = launchActivationPrep(*prep, stack, end, rewriter,
                                     /*compressedResidual=*/
                                     sparseSpec.has_value());
    } else {
      SmallVector<Value> inputs;
      for (auto [i, group] : llvm::enumerate(chain.groups)) {
        StackedActivationGroup spec;
        std::string prefix = "group" + std::to_string(i);
        if (group.dense) {
          if (auto q = dyn_cast<QuantizedTensorType>(group.dense.getType()))
            spec.dense.quantized = q;
          else
            spec.dense.floatType = bf16;
          llvm::append_range(inputs, input(rewriter, loc, group.dense,
                                           prefix + ".dense", stack.args));
        }
        if (group.values) {
          spec.sparse = sparseOperand(group.values, group.blockSize);
          llvm::append_range(inputs, input(rewriter, loc, group.values,
                                           prefix + ".values", stack.args));
          llvm::append_range(inputs, input(rewriter, loc, group.indices,
                                           prefix + ".indices", stack.args));
        }
        stack.groups.push_back(spec);
      }
      SmallVector<std::pair<std::string, RankedTensorType>> outputs;
      for (auto [p, groups] : llvm::enumerate(stack.outputGroups))
        addOutput(stack.args, outputs, "stacked" + std::to_string(p),
                  RankedTensorType::get({groups * m, k}, bf16));
      if (stack.transposedSum)
        addOutput(stack.args, outputs, "summed_t",
                  transposedSumType(rewriter.getContext(), k, m,
                                    stack.sumBankColumns));
      stacked = launch(
          end, rewriter, "fp4_stack_activations", stack.args, inputs, outputs,
          [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
            return buildStackActivationsKernel(rewriter, loc, module, name,
                                               stack, reason);
          });
    }
    if (failed(stacked))
      return failure();

    if (groupedSpec || sparseSpec) {
      // One prefill product: every row group (grouped: stacked by the prep
      // or the stacker, the residual dense) or Q(x)'s rows with the
      // compressed residual (sparse), the weight and its outliers; without
      // an outer acc it is the result.
      MatmulKernelSpec spec = groupedSpec ? *groupedSpec : *sparseSpec;
      SmallVector<Value> inputs =
          input(rewriter, loc, stacked->front(), "stacked0", spec.args);
      llvm::append_range(
          inputs, input(rewriter, loc, chain.weight, "weight", spec.args));
      if (sparseSpec) {
        llvm::append_range(inputs, input(rewriter, loc, (*stacked)[1],
                                         "residual.sparse_values", spec.args));
        llvm::append_range(inputs, input(rewriter, loc, (*stacked)[2],
                                         "residual.sparse_meta", spec.args));
      }
      if (chain.weightValues) {
        llvm::append_range(inputs, input(rewriter, loc, chain.weightValues,
                                         "weights.values", spec.args));
        llvm::append_range(inputs, input(rewriter, loc, chain.weightIndices,
                                         "weights.indices", spec.args));
      }
      RankedTensorType productType =
          chain.outerAcc ? RankedTensorType::get({m, n}, f32)
                         : chain.resultType;
      SmallVector<std::pair<std::string, RankedTensorType>> outputs;
      addOutput(spec.args, outputs, chain.outerAcc ? "product0" : "result",
                productType);
      FailureOr<SmallVector<Value>> product = launchMatmul(
          end, spec, inputs, outputs, GPUKernelFamily::Prefill, rewriter);
      if (failed(product))
        return failure();
      if (!chain.outerAcc)
        return finishFusedChain(chain, end, product->front(), prep, rewriter);
      // The product already sums the row groups: one group for the epilogue.
      return sumProducts(chain, end, {product->front()}, {1},
                         /*outlierEpilogue=*/false, *stacked, prep,
                         rewriter);
    }

    if (epilogueInKernel) {
      MatmulKernelSpec spec = decodeLaunches.front().spec;
      SmallVector<Value> inputs =
          input(rewriter, loc, stacked->front(), "stacked0", spec.args);
      llvm::append_range(
          inputs, input(rewriter, loc, chain.weight, "weight", spec.args));
      if (entriesInWeight &&
          (spec.weightEntries->sparse || spec.weightEntries->packed)) {
        const DecodeChainLaunch &launch = decodeLaunches.front();
        const bool packed = spec.weightEntries->packed;
        for (auto [attr, name] :
             {std::pair{launch.packedValues, packed ? "weights.packed_values"
                                                    : "weights.sparse_values"},
              std::pair{launch.packedMeta, packed ? "weights.packed_keys"
                                                  : "weights.sparse_meta"}}) {
          Value packed = arith::ConstantOp::create(rewriter, loc, attr);
          llvm::append_range(inputs,
                             input(rewriter, loc, packed, name, spec.args));
        }
      } else if (entriesInWeight) {
        llvm::append_range(inputs, input(rewriter, loc, chain.weightValues,
                                         "weights.values", spec.args));
        llvm::append_range(inputs, input(rewriter, loc, chain.weightIndices,
                                         "weights.indices", spec.args));
      } else if (chain.weightValues) {
        llvm::append_range(inputs, input(rewriter, loc, stacked->back(),
                                         "summed_t", spec.args));
        llvm::append_range(inputs, input(rewriter, loc, chain.weightValues,
                                         "weights.values", spec.args));
        llvm::append_range(inputs, input(rewriter, loc, chain.weightIndices,
                                         "weights.indices", spec.args));
      }
      if (chain.outerAcc)
        llvm::append_range(inputs, input(rewriter, loc, chain.outerAcc, "acc",
                                         spec.args));
      SmallVector<std::pair<std::string, RankedTensorType>> outputs;
      addOutput(spec.args, outputs, "result", chain.resultType);
      FailureOr<SmallVector<Value>> fused =
          launchMatmul(end, spec, inputs, outputs, GPUKernelFamily::Decode,
                       rewriter, &decodeLaunches.front().overrides);
      if (failed(fused))
        return failure();
      return finishFusedChain(chain, end, fused->front(), prep, rewriter);
    }

    SmallVector<Value> products;
    for (auto [p, groups] : llvm::enumerate(stack.outputGroups)) {
      auto productType = RankedTensorType::get({groups * m, n}, f32);
      Value rows = (*stacked)[p];
      if (!chain.decode && !chain.weightValues) {
        products.push_back(
            MatmulOp::create(rewriter, loc, productType, rows, chain.weight));
        continue;
      }
      if (!chain.decode) {
        // The weight outliers written into the prefill kernel's weight
        // tile: the analysis proved Q(W) +-0 at their positions.
        FailureOr<Value> product =
            launchPrefillWithEntries(chain, end, rows, productType, p,
                                     rewriter);
        if (failed(product))
          return failure();
        products.push_back(*product);
        continue;
      }
      // The launch the chain analysis asked the decode kernel about.
      MatmulKernelSpec spec = decodeLaunches[p].spec;
      // Named as the stacker and the epilogue name the same buffers.
      SmallVector<Value> matmulInputs = input(
          rewriter, loc, rows, "stacked" + std::to_string(p), spec.args);
      llvm::append_range(matmulInputs, input(rewriter, loc, chain.weight,
                                             "weight", spec.args));
      SmallVector<std::pair<std::string, RankedTensorType>> result;
      addOutput(spec.args, result, "product" + std::to_string(p),
                productType);
      FailureOr<SmallVector<Value>> product =
          launchMatmul(end, spec, matmulInputs, result, GPUKernelFamily::Decode,
                       rewriter, &decodeLaunches[p].overrides);
      if (failed(product))
        return failure();
      products.push_back(product->front());
    }

    return sumProducts(chain, end, products, stack.outputGroups,
                       outlierEpilogue, *stacked, prep, rewriter);
  }

  /// The end of the plan: the products' row groups (`productGroups` per
  /// product) summed with the weight outliers' product (decode) and the
  /// outer acc by the epilogue kernel, unless the one product already is
  /// the result; then the chain's end is replaced.
  LogicalResult sumProducts(const FusedCorrectionChain &chain,
                            CorrectionMatmulOp end, ArrayRef<Value> products,
                            ArrayRef<int64_t> productGroups,
                            bool outlierEpilogue, ArrayRef<Value> stacked,
                            FailureOr<FusedActivationPrep> prep,
                            PatternRewriter &rewriter) const {
    Location loc = end.getLoc();
    const int64_t m = chain.m, n = chain.n, k = chain.k;
    int64_t rowGroups = 0;
    for (int64_t g : productGroups)
      rowGroups += g;
    Value result;
    if (products.size() == 1 && rowGroups == 1 && !outlierEpilogue &&
        !chain.outerAcc && chain.resultType.getElementType().isF32()) {
      result = products.front();
    } else {
      StackedEpilogueKernelSpec epilogue;
      epilogue.m = m;
      epilogue.n = n;
      epilogue.k = k;
      epilogue.productGroups = SmallVector<int64_t>(productGroups);
      epilogue.resultElementType = chain.resultType.getElementType();
      SmallVector<Value> epilogueInputs;
      for (auto [p, product] : llvm::enumerate(products))
        llvm::append_range(epilogueInputs,
                           input(rewriter, loc, product,
                                 "product" + std::to_string(p),
                                 epilogue.args));
      if (outlierEpilogue) {
        CorrectionOperand weights;
        weights.blockSize = chain.weightBlockSize;
        auto valuesType = cast<RankedTensorType>(chain.weightValues.getType());
        weights.k = valuesType.getShape().back();
        weights.valuesElementType = valuesType.getElementType();
        epilogue.sparseWeights = weights;
        llvm::append_range(epilogueInputs,
                           input(rewriter, loc, stacked.back(), "summed_t",
                                 epilogue.args));
        llvm::append_range(epilogueInputs,
                           input(rewriter, loc, chain.weightValues,
                                 "weights.values", epilogue.args));
        llvm::append_range(epilogueInputs,
                           input(rewriter, loc, chain.weightIndices,
                                 "weights.indices", epilogue.args));
      }
      if (chain.outerAcc) {
        epilogue.accElementType =
            cast<RankedTensorType>(chain.outerAcc.getType()).getElementType();
        llvm::append_range(epilogueInputs, input(rewriter, loc, chain.outerAcc,
                                                 "acc", epilogue.args));
      }
      SmallVector<std::pair<std::string, RankedTensorType>> epilogueOutputs;
      addOutput(epilogue.args, epilogueOutputs, "result", chain.resultType);
      FailureOr<SmallVector<Value>> sum = launch(
          end, rewriter, "fp4_stacked_epilogue", epilogue.args, epilogueInputs,
          epilogueOutputs,
          [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
            return buildStackedEpilogueKernel(rewriter, loc, module, name,
                                              epilogue, reason);
          });
      if (failed(sum))
        return failure();
      result = sum->front();
    }
    return finishFusedChain(chain, end, result, prep, rewriter);
  }

  /// A decode- or prefill-family kernel of `spec` (under the family's
  /// selected config) on `inputs`, writing `outputs`.
  FailureOr<SmallVector<Value>> launchMatmul(
      CorrectionMatmulOp end, const MatmulKernelSpec &spec,
      ArrayRef<Value> inputs,
      ArrayRef<std::pair<std::string, RankedTensorType>> outputs,
      GPUKernelFamily family, PatternRewriter &rewriter,
      const GPUConfigOverrides *overrides = nullptr) const {
    Location loc = end.getLoc();
    const GPUConfigOverrides &options = overrides ? *overrides : hooks.options;
    GPUConfigAttr config =
        family == GPUKernelFamily::Prefill
            ? selectPrefillConfig(rewriter.getContext(), hooks.target, spec.m,
                                  options, spec.sparseLhs, spec.lhsGroups)
            : selectGPUConfigForFamily(rewriter.getContext(), family, options);
    return launch(
        end, rewriter, "fp4_matmul", spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return family == GPUKernelFamily::Prefill
                     ? buildPrefillMatmulKernel(rewriter, loc, module, name,
                                                spec, hooks.target, config,
                                                reason)
                     : buildDecodeMatmulKernel(rewriter, loc, module, name,
                                               spec, hooks.target, config,
                                               reason);
        });
  }

  /// The prefill W4A16 product of stacked rows `rows` with the quantized
  /// weight plus its outliers (MatmulKernelSpec::WeightEntries).
  FailureOr<Value> launchPrefillWithEntries(const FusedCorrectionChain &chain,
                                            CorrectionMatmulOp end, Value rows,
                                            RankedTensorType productType,
                                            size_t p,
                                            PatternRewriter &rewriter) const {
    Location loc = end.getLoc();
    MatmulKernelSpec spec =
        prefillEntriesSpec(chain, productType.getDimSize(0));
    SmallVector<Value> inputs = input(
        rewriter, loc, rows, "stacked" + std::to_string(p), spec.args);
    llvm::append_range(inputs,
                       input(rewriter, loc, chain.weight, "weight", spec.args));
    llvm::append_range(inputs, input(rewriter, loc, chain.weightValues,
                                     "weights.values", spec.args));
    llvm::append_range(inputs, input(rewriter, loc, chain.weightIndices,
                                     "weights.indices", spec.args));
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    addOutput(spec.args, outputs, "product" + std::to_string(p), productType);
    FailureOr<SmallVector<Value>> product = launchMatmul(
        end, spec, inputs, outputs, GPUKernelFamily::Prefill, rewriter);
    if (failed(product))
      return failure();
    return product->front();
  }

  /// Replaces the chain's end by `result` and erases what the plan
  /// replaced.
  LogicalResult
  finishFusedChain(const FusedCorrectionChain &chain, CorrectionMatmulOp end,
                   Value result, FailureOr<FusedActivationPrep> prep,
                   PatternRewriter &rewriter) const {
    rewriter.replaceOp(end, result);
    // The earlier links (already visited by the walk, now without uses).
    for (Operation *link : llvm::reverse(chain.ops))
      if (link != end.getOperation())
        rewriter.eraseOp(link);
    // The ops the activation prep replaced (their remaining uses took its
    // outputs).
    if (succeeded(prep))
      for (Operation *op : {prep->residual.getOperation(),
                            prep->quantize.getOperation(),
                            prep->split.getOperation(),
                            prep->rotate.getOperation()})
        if (op && op->use_empty())
          rewriter.eraseOp(op);
    return success();
  }

  /// The activation-prep kernel in place of the stacker (and the ops'
  /// kernels): reads x, writes the stacker's outputs and the ops' results,
  /// which replace the ops' remaining uses (all after the chain's end).
  /// Returns the stacker's outputs.
  FailureOr<SmallVector<Value>>
  launchActivationPrep(FusedActivationPrep prep,
                       const StackActivationsKernelSpec &stack,
                       CorrectionMatmulOp end, PatternRewriter &rewriter,
                       bool compressedResidual) const {
    Location loc = end.getLoc();
    ActivationPrepKernelSpec spec = prep.spec;
    spec.sharedReadback =
        hooks.options.prepReadback == GPUPrepReadback::Shared;
    spec.outputGroups = stack.outputGroups;
    spec.transposedSum = stack.transposedSum;
    spec.sumBankColumns = stack.sumBankColumns;
    spec.compressedResidual = compressedResidual;
    SmallVector<Value> inputs = input(rewriter, loc, prep.input, "input",
                                      spec.args);
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    if (prep.split && spec.storeSplit) {
      addOutput(spec.args, outputs, "outliers.values",
                prep.split.getValues().getType());
      addOutput(spec.args, outputs, "outliers.indices",
                prep.split.getIndices().getType());
    }
    QuantizedTensorType qType = spec.quantized;
    auto scheme = cast<SchemeGPULoweringAttrInterface>(qType.getScheme());
    for (auto [t, suffix] : llvm::zip_equal(qType.getComponentTypes(),
                                            scheme.getGPUComponentSuffixes()))
      addOutput(spec.args, outputs, ("quantized." + suffix).str(), t);
    if (prep.residual && spec.storeResidual) {
      addOutput(spec.args, outputs, "residual.values",
                prep.residual.getValues().getType());
      addOutput(spec.args, outputs, "residual.indices",
                prep.residual.getIndices().getType());
    }
    Type bf16 = rewriter.getBF16Type();
    for (auto [p, groups] : llvm::enumerate(stack.outputGroups))
      addOutput(spec.args, outputs, "stacked" + std::to_string(p),
                RankedTensorType::get({groups * spec.rows, spec.cols}, bf16));
    if (compressedResidual) {
      addOutput(spec.args, outputs, "residual.sparse_values",
                RankedTensorType::get({spec.rows, spec.cols / 2}, bf16));
      addOutput(spec.args, outputs, "residual.sparse_meta",
                RankedTensorType::get({spec.rows, spec.cols / 8},
                                      rewriter.getI8Type()));
    }
    if (spec.transposedSum)
      addOutput(spec.args, outputs, "summed_t",
                transposedSumType(rewriter.getContext(), spec.cols, spec.rows,
                                  spec.sumBankColumns));
    FailureOr<SmallVector<Value>> results = launch(
        end, rewriter, "fp4_activation_prep", spec.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildActivationPrepKernel(rewriter, loc, module, name, spec,
                                           reason);
        });
    if (failed(results))
      return failure();
    ArrayRef<Value> r = *results;
    if (prep.split && spec.storeSplit) {
      rewriter.replaceAllUsesWith(prep.split.getValues(), r[0]);
      rewriter.replaceAllUsesWith(prep.split.getIndices(), r[1]);
      r = r.drop_front(2);
    }
    size_t numComponents = qType.getComponentTypes().size();
    Value packed = PackOp::create(rewriter, loc, qType,
                                  ValueRange(r.take_front(numComponents)));
    rewriter.replaceAllUsesWith(prep.quantize.getResult(), packed);
    r = r.drop_front(numComponents);
    if (prep.residual && spec.storeResidual) {
      rewriter.replaceAllUsesWith(prep.residual.getValues(), r[0]);
      rewriter.replaceAllUsesWith(prep.residual.getIndices(), r[1]);
      r = r.drop_front(2);
    }
    return SmallVector<Value>(r);
  }

  /// A bf16 sparse side against a quantized one on the tensor cores:
  /// densify the sparse side, fp4.matmul (converted by the matmul
  /// conversion to its W4A16 families), then acc + product. A sparse lhs
  /// takes it when dense enough or at prefill sizes; a sparse rhs (weight
  /// outliers against quantized activations) at prefill sizes, as the
  /// transposed product dense(rhs) x lhs^T (the quantized lhs plays the
  /// weight), which the accumulate kernel transposes back. Fails without
  /// touching the IR when it does not apply.
  LogicalResult denseRoute(CorrectionMatmulOp op,
                           PatternRewriter &rewriter) const {
    if (op.isLhsSparse() == op.isRhsSparse())
      return failure();
    bool lhsSparse = op.isLhsSparse();
    ValueRange sparse = lhsSparse ? op.getLhs() : op.getRhs();
    Value quantized = lhsSparse ? op.getRhs()[0] : op.getLhs()[0];
    auto quantizedType = dyn_cast<QuantizedTensorType>(quantized.getType());
    auto valuesType = cast<RankedTensorType>(sparse[0].getType());
    int64_t blockSize =
                *(lhsSparse ? op.getLhsBlockSize() : op.getRhsBlockSize()),
            k = valuesType.getShape().back();
    RankedTensorType resultType = op.getResult().getType();
    bool prefill =
        resultType.getDimSize(0) > getDecodeMaxM(hooks.target, hooks.options);
    bool denseEnough =
        k * kDenseRouteDenominator >= blockSize * kDenseRouteNumerator;
    if (!quantizedType || quantizedType.getAxis() != 1 ||
        !valuesType.getElementType().isBF16() ||
        !(prefill || (lhsSparse && denseEnough)))
      return failure();
    Location loc = op.getLoc();
    SmallVector<int64_t> sparseShape =
        lhsSparse ? op.getLhsShape() : op.getRhsShape();
    auto denseType = RankedTensorType::get(sparseShape, rewriter.getBF16Type());

    DensifyKernelSpec densify;
    densify.rows = sparseShape[0];
    densify.cols = sparseShape[1];
    densify.blockSize = blockSize;
    densify.k = k;
    densify.valuesElementType = densify.resultElementType =
        rewriter.getBF16Type();
    SmallVector<Value> inputs =
        input(rewriter, loc, sparse[0], "values", densify.args);
    llvm::append_range(inputs,
                       input(rewriter, loc, sparse[1], "indices", densify.args));
    SmallVector<std::pair<std::string, RankedTensorType>> outputs;
    addOutput(densify.args, outputs, "result", denseType);
    FailureOr<SmallVector<Value>> dense = launch(
        op, rewriter, "fp4_densify", densify.args, inputs, outputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildDensifyKernel(rewriter, loc, module, name, densify,
                                    reason);
        });
    if (failed(dense))
      return failure();

    Value acc = op.getAcc();
    if (lhsSparse && !acc) {
      rewriter.replaceOp(op, MatmulOp::create(rewriter, loc, resultType,
                                              dense->front(), quantized)
                                 .getResult());
      return success();
    }
    SmallVector<int64_t> productShape(resultType.getShape());
    if (!lhsSparse)
      std::swap(productShape[0], productShape[1]);
    auto productType =
        RankedTensorType::get(productShape, rewriter.getF32Type());
    Value product = MatmulOp::create(rewriter, loc, productType,
                                     dense->front(), quantized);
    AccumulateKernelSpec accumulate;
    accumulate.rows = resultType.getDimSize(0);
    accumulate.cols = resultType.getDimSize(1);
    accumulate.transposedProduct = !lhsSparse;
    accumulate.resultElementType = resultType.getElementType();
    SmallVector<Value> accInputs;
    if (acc) {
      accumulate.accElementType =
          cast<RankedTensorType>(acc.getType()).getElementType();
      accInputs = input(rewriter, loc, acc, "acc", accumulate.args);
    }
    llvm::append_range(accInputs, input(rewriter, loc, product, "product",
                                        accumulate.args));
    SmallVector<std::pair<std::string, RankedTensorType>> accOutputs;
    addOutput(accumulate.args, accOutputs, "result", resultType);
    FailureOr<SmallVector<Value>> sum = launch(
        op, rewriter, "fp4_accumulate", accumulate.args, accInputs,
        accOutputs,
        [&](gpu::GPUModuleOp module, StringRef name, std::string &reason) {
          return buildAccumulateKernel(rewriter, loc, module, name,
                                       accumulate, reason);
        });
    if (failed(sum))
      return failure();
    rewriter.replaceOp(op, sum->front());
    return success();
  }
};

} // namespace

void mlir::fp4::populateFP4CorrectionToGPUPatterns(
    RewritePatternSet &patterns, const FP4GPULaunchHooks &hooks) {
  auto splits = std::make_shared<LoweredSplits>();
  auto remarked = std::make_shared<llvm::DenseSet<Operation *>>();
  auto packed = std::make_shared<PackedEntriesCache>();
  patterns.add<BlockTopKToGPU<SplitOutliersOp>, BlockTopKToGPU<ResidualOp>,
               SplitChannelsToGPU, RotateToGPU, PermuteToGPU,
               CorrectionMatmulToGPU>(patterns.getContext(), hooks, splits,
                                      remarked, packed);
}
