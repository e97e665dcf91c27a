//===- GPUConfigOptions.h - the GPU kernel options, declared once -*- C++
//-*-===//
//
// The options choosing the chip and overriding the kernel configuration
// (#fp4.gpu_config) that the selection step picks. They are declared here
// once and instantiated by every pass and pipeline that takes them
// (convert-fp4-to-gpu, fp4-gpu-select-config, fp4-pipeline-nvvm):
//
//   struct MyPass : impl::MyPassBase<MyPass> {
//     GPUConfigOptionSet<Option, Pass> gpuOptions{*this};
//   };
//   struct MyPipelineOptions : PassPipelineOptions<MyPipelineOptions> {
//     GPUConfigOptionSet<PassOptions::Option, PassOptions> gpuOptions{*this};
//   };
//
// An option that is not given leaves the selection's choice (the printed
// defaults are #fp4.gpu_config's and the chip table's for sm_90); the
// enum-valued ones (chip, decode-outliers, decode-mma, prefill-dequant,
// prefill-mma, prefill-residual, prep-readback and the image `format` of
// GPUImageFormatOption) are
// llvm::cl enums, so a bad value fails at option parsing with the list of
// valid ones.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_GPUCONFIGOPTIONS_H
#define FP4_CONVERSION_FP4TOGPU_GPUCONFIGOPTIONS_H

#include "fp4/Conversion/FP4ToGPU/CUDAToolkit.h"
#include "fp4/Conversion/FP4ToGPU/ChipDescription.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Dialect/FP4/IR/GPUConfig.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace mlir::fp4 {

/// Where a prefill correction chain's 2:4 residual is multiplied: on the
/// sparse tensor cores (its packed values and metadata, mma.sp or, on the
/// wgmma form, wgmma.sp) or as a densified row group of the stacked lhs
/// (on the wgmma form in the same accumulators, MatmulKernelSpec::
/// lhsGroups; otherwise a row group with its own product). Not given: the
/// row groups on the wgmma form, the sparse product otherwise.
enum class GPUPrefillResidual { Sparse, Rows };

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     GPUPrefillResidual form) {
  return os << (form == GPUPrefillResidual::Sparse ? "sparse" : "rows");
}

/// Where the decode kernel multiplies a fused chain's weight outliers:
/// inside its main loop with each unit's weight words, in a tail phase
/// after it (MatmulKernelSpec::Epilogue::outlierTail), or written into the
/// warp-group form's shared weight tile (MatmulKernelSpec::WeightEntries;
/// outliers proven to sit on +-0 weights, on a chip with wgmma), or into
/// that form's register fragments (Patch: the same entries, no tile), or
/// onto its sparse tensor cores as a 2:4 operand (Sparse: constant entries,
/// packed at compile time, SparseWeightEntries.h), or into the register
/// fragments from entries packed at compile time in the order the lanes
/// load them (Packed: one coalesced load of values and one of keys per lane
/// and chunk instead of four small ones).
enum class GPUDecodeOutliers { Loop, Tail, Tile, Patch, Sparse, Packed };

/// Whether the form puts proven weight outliers into the warp-group form's
/// weight operand (as entries) rather than multiplying them from the sum.
inline bool isEntriesForm(std::optional<GPUDecodeOutliers> form) {
  return form == GPUDecodeOutliers::Tile ||
         form == GPUDecodeOutliers::Patch ||
         form == GPUDecodeOutliers::Sparse || form == GPUDecodeOutliers::Packed;
}

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     GPUDecodeOutliers form) {
  switch (form) {
  case GPUDecodeOutliers::Loop:
    return os << "loop";
  case GPUDecodeOutliers::Tail:
    return os << "tail";
  case GPUDecodeOutliers::Tile:
    return os << "tile";
  case GPUDecodeOutliers::Patch:
    return os << "patch";
  case GPUDecodeOutliers::Sparse:
    return os << "sparse";
  case GPUDecodeOutliers::Packed:
    return os << "packed";
  }
  return os;
}

/// Where a fused chain's activation prep reads its quantized codes and
/// scales back after the barrier (to dequantize them for the residual and
/// the stacked rows): from its global outputs (an L2 round trip), or from
/// shared copies it writes alongside where they fit (ActivationPrepKernel.
/// cpp, stageComponents). Not given: global (shared has not run on the
/// hardware yet).
enum class GPUPrepReadback { Global, Shared };

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     GPUPrepReadback form) {
  return os << (form == GPUPrepReadback::Global ? "global" : "shared");
}

/// Explicit kernel choices, each overriding the selection where set.
struct GPUConfigOverrides {
  std::optional<int64_t> decodeMaxM;
  std::optional<int64_t> decodeWarps, decodeKUnroll, decodeRowsPerCTA,
      decodeSplitK, decodePrefetch, decodeMaxRegisters;
  std::optional<GPUDecodeOutliers> decodeOutliers;
  std::optional<GPUPrefillMMA> decodeMMA;
  std::optional<int64_t> prefillTileM, prefillTileN, prefillTileK,
      prefillWarpsM, prefillWarpsN, prefillStages;
  std::optional<GPUPrefillDequant> prefillDequant;
  std::optional<GPUPrefillMMA> prefillMMA;
  std::optional<GPUPrefillResidual> prefillResidual;
  std::optional<GPUPrepReadback> prepReadback;
  std::optional<int64_t> elementwiseThreads;
};

/// Everything the options of GPUConfigOptionSet carry.
struct GPUSelectionOptions {
  GPUChip chip = GPUChip::SM90;
  bool nativeFP4 = false;
  GPUConfigOverrides overrides;

  const ChipDescription &getChip() const { return getChipDescription(chip); }
};

/// A pass-option parser for an enum whose literal values are added by the
/// option: an unknown value is reported with the list of valid ones.
/// (Pass options print the value with its operator<<.)
template <typename EnumT>
struct EnumOptionParser : public llvm::cl::parser<EnumT> {
  using llvm::cl::parser<EnumT>::parser;

  bool parse(llvm::cl::Option &option, StringRef, StringRef arg, EnumT &value) {
    for (const auto &literal : this->Values)
      if (literal.Name == arg) {
        value = literal.V.getValue();
        return false;
      }
    return option.error(
        "'" + arg + "' is not a valid value; valid: " +
        llvm::join(
            llvm::map_range(this->Values, [](const auto &v) { return v.Name; }),
            ", "));
  }
};

/// The values of a `chip` option: every row of the chip table.
struct ChipOptionValues {
  template <typename OptionT> void apply(OptionT &option) const {
    for (const ChipDescription &chip : getChipDescriptions())
      option.getParser().addLiteralOption(chip.chip, chip.kind, chip.summary);
  }
};

/// The options, for an owner `OwnerT` (a Pass or a PassOptions) whose option
/// template is `OptionT`.
template <template <typename, typename> class OptionT, typename OwnerT>
struct GPUConfigOptionSet {
  template <typename T>
  using Opt = OptionT<T, mlir::detail::PassOptions::OptionParser<T>>;
  template <typename T> using EnumOpt = OptionT<T, EnumOptionParser<T>>;

  explicit GPUConfigOptionSet(OwnerT &owner)
      : chip(owner, "chip",
             llvm::cl::desc("Target chip (the chip description: what it "
                            "runs natively, its limits, its NVVM target)"),
             llvm::cl::init(GPUChip::SM90), ChipOptionValues()),
        nativeFP4(owner, "native-fp4",
                  llvm::cl::desc("Use native FP4 conversion / block-scaled "
                                 "MMA instructions (chips with native FP4 "
                                 "only)"),
                  llvm::cl::init(false)),
        decodeMaxM(owner, "decode-max-m",
                   llvm::cl::desc("Largest M (0..64) of the decode "
                                  "(memory-bound) matmul family; default: "
                                  "the chip description's"),
                   llvm::cl::init<int64_t>(16)),
        decodeWarps(owner, "decode-warps",
                    llvm::cl::desc("Decode: warps per CTA, the row "
                                   "groups' warps splitting K (0: from the "
                                   "shape; 1..16; a multiple of "
                                   "decode-rows-per-cta / 16 when both are "
                                   "given)"),
                    llvm::cl::init<int64_t>(GPUConfigDefaults::warps)),
        decodeKUnroll(owner, "decode-k-unroll",
                      llvm::cl::desc("Decode: K elements per warp and "
                                     "main-loop iteration (multiple of 128, "
                                     "at most 1024; default 256)"),
                      llvm::cl::init<int64_t>(GPUConfigDefaults::kUnroll)),
        decodeRowsPerCTA(
            owner, "decode-rows-per-cta",
            llvm::cl::desc("Decode: weight rows per CTA, 16-row groups on "
                           "different warps sharing the activations (0: "
                           "from the shape; multiple of 16)"),
            llvm::cl::init<int64_t>(GPUConfigDefaults::rowsPerCta)),
        decodeSplitK(owner, "decode-split-k",
                     llvm::cl::desc("Decode: CTAs splitting K with f32 "
                                    "partial sums in a scratch buffer and a "
                                    "rounding kernel (0 = 1: none, which "
                                    "measured fastest on the H200)"),
                     llvm::cl::init<int64_t>(GPUConfigDefaults::splitK)),
        decodePrefetch(owner, "decode-prefetch",
                       llvm::cl::desc("Decode: main-loop iterations whose "
                                      "weight words are loaded ahead (0: "
                                      "none; 1..2; default 1 on the wgmma "
                                      "form, 0 on mma.sync)"),
                       llvm::cl::init<int64_t>(GPUConfigDefaults::prefetch)),
        decodeMaxRegisters(
            owner, "decode-max-registers",
            llvm::cl::desc("Decode: registers per thread cap "
                           "(.maxnreg; 0: none; else "
                           "32..255)"),
            llvm::cl::init<int64_t>(GPUConfigDefaults::maxRegisters)),
        decodeOutliers(
            owner, "decode-outliers",
            llvm::cl::desc("Decode: where a fused chain's weight outliers "
                           "are multiplied (default tail for at most 2 "
                           "entries per 32-element unit, else loop)"),
            llvm::cl::init(GPUDecodeOutliers::Loop),
            llvm::cl::values(
                clEnumValN(GPUDecodeOutliers::Loop, "loop",
                           "in the main loop, with each unit's weight "
                           "words"),
                clEnumValN(GPUDecodeOutliers::Tail, "tail",
                           "in a phase after the main loop, runs of a "
                           "row's entries per lane"),
                clEnumValN(GPUDecodeOutliers::Tile, "tile",
                           "written into the wgmma form's shared weight "
                           "tile (sm_90a; outliers proven to sit on +-0 "
                           "weights, others keep the default; the "
                           "default for proven ones above 16 stacked "
                           "rows with more than 2 entries per unit)"),
                clEnumValN(GPUDecodeOutliers::Patch, "patch",
                           "as tile, but each lane replaces the entries' "
                           "elements in its register fragments (no "
                           "shared tile; wgmma from 9 stacked rows, "
                           "mma.sync below); the default for proven ones "
                           "with at most 2 entries per unit from 9 "
                           "stacked rows (constant ones with 2: packed)"),
                clEnumValN(GPUDecodeOutliers::Sparse, "sparse",
                           "as patch on the wgmma form, but the entries "
                           "multiply on the sparse tensor cores as a 2:4 "
                           "operand against zero-padded activations "
                           "(constant, finite entries, at most 2 per "
                           "32-element unit; others keep the patch; "
                           "measured slower than the patch at 16 rows, "
                           "docs/Performance.md Session 23)"),
                clEnumValN(GPUDecodeOutliers::Packed, "packed",
                           "as patch on the wgmma form, with constant "
                           "entries (at most 2 per 32-element unit) "
                           "packed at compile time in the lanes' load "
                           "order: one coalesced load of values and one "
                           "of keys per lane and chunk; others keep the "
                           "patch; the default for constant entries with "
                           "2 per unit from 9 stacked rows, on 64-row "
                           "CTAs (docs/Performance.md Session 25)"))),
        decodeMMA(
            owner, "decode-mma",
            llvm::cl::desc("Decode: tensor-core instruction (default: "
                           "wgmma from 9 activation rows where the chip "
                           "has it, else sync)"),
            llvm::cl::init(GPUPrefillMMA::Sync),
            llvm::cl::values(
                clEnumValN(GPUPrefillMMA::Sync, "sync",
                           "mma.sync per warp, activation fragments from "
                           "L1"),
                clEnumValN(GPUPrefillMMA::WGMMA, "wgmma",
                           "sm_90a warp-group MMA: the dequantized weights "
                           "as the register A operand of 64-row warp "
                           "groups, the activations (bf16 or dequantized "
                           "W4A4 codes) staged in shared memory as B; "
                           "given, correction chains with weight outliers "
                           "take it too (proven ones written into a shared "
                           "weight tile)"))),
        prefillTileM(owner, "prefill-tile-m",
                     llvm::cl::desc("Prefill: CTA tile rows (M), multiple of "
                                    "16 (default 128)"),
                     llvm::cl::init<int64_t>(GPUConfigDefaults::tileM)),
        prefillTileN(owner, "prefill-tile-n",
                     llvm::cl::desc("Prefill: CTA tile columns (N), multiple "
                                    "of 8 (default 128)"),
                     llvm::cl::init<int64_t>(GPUConfigDefaults::tileN)),
        prefillTileK(owner, "prefill-tile-k",
                     llvm::cl::desc("Prefill: K per pipeline stage, multiple "
                                    "of 32 (default 64)"),
                     llvm::cl::init<int64_t>(GPUConfigDefaults::tileK)),
        prefillWarpsM(owner, "prefill-warps-m",
                      llvm::cl::desc("Prefill: warps along M (default 2)"),
                      llvm::cl::init<int64_t>(GPUConfigDefaults::warpsM)),
        prefillWarpsN(owner, "prefill-warps-n",
                      llvm::cl::desc("Prefill: warps along N (default 4)"),
                      llvm::cl::init<int64_t>(GPUConfigDefaults::warpsN)),
        prefillStages(owner, "prefill-stages",
                      llvm::cl::desc("Prefill: shared-memory pipeline depth "
                                     "(2..6, default 3)"),
                      llvm::cl::init<int64_t>(GPUConfigDefaults::stages)),
        prefillDequant(
            owner, "prefill-dequant",
            llvm::cl::desc("Prefill: where codes become bf16 (default "
                           "shared)"),
            llvm::cl::init(GPUPrefillDequant::Shared),
            llvm::cl::values(
                clEnumValN(GPUPrefillDequant::Shared, "shared",
                           "once per CTA into swizzled bf16 tiles read by "
                           "ldmatrix"),
                clEnumValN(GPUPrefillDequant::Registers, "registers",
                           "per warp, into mma fragments"))),
        prefillMMA(
            owner, "prefill-mma",
            llvm::cl::desc("Prefill: tensor-core instruction (default: "
                           "wgmma where the chip has it, else sync)"),
            llvm::cl::init(GPUPrefillMMA::Sync),
            llvm::cl::values(
                clEnumValN(GPUPrefillMMA::Sync, "sync", "mma.sync per warp"),
                clEnumValN(GPUPrefillMMA::WGMMA, "wgmma",
                           "sm_90a warp-group MMA (the shared form's dense "
                           "products with 64-row warp groups)"))),
        prefillResidual(
            owner, "prefill-residual",
            llvm::cl::desc("Prefill correction chains: where the 2:4 "
                           "residual is multiplied (default: rows on the "
                           "wgmma form, else sparse)"),
            llvm::cl::init(GPUPrefillResidual::Sparse),
            llvm::cl::values(
                clEnumValN(GPUPrefillResidual::Sparse, "sparse",
                           "packed 2:4 values on the sparse tensor cores "
                           "(mma.sp, or wgmma.sp on the wgmma form)"),
                clEnumValN(GPUPrefillResidual::Rows, "rows",
                           "a densified row group of the stacked lhs (on "
                           "the wgmma form in the same accumulators)"))),
        prepReadback(
            owner, "prep-readback",
            llvm::cl::desc("Correction chains: where the activation prep "
                           "reads its quantized codes and scales back "
                           "(default: global)"),
            llvm::cl::init(GPUPrepReadback::Global),
            llvm::cl::values(
                clEnumValN(GPUPrepReadback::Global, "global",
                           "its global outputs, after the CTA barrier (an "
                           "L2 round trip)"),
                clEnumValN(GPUPrepReadback::Shared, "shared",
                           "shared copies written alongside, where they "
                           "fit (40 KB: decode sizes)"))),
        elementwiseThreads(
            owner, "elementwise-threads",
            llvm::cl::desc("Quantize/dequantize: threads per "
                           "CTA (multiple of 32, <= 1024; "
                           "default 256)"),
            llvm::cl::init<int64_t>(GPUConfigDefaults::threads)) {}

  /// The options' values; the tile options given become overrides of the
  /// selection.
  GPUSelectionOptions getSelection() const {
    GPUSelectionOptions selection;
    selection.chip = chip;
    selection.nativeFP4 = nativeFP4;
    forEachOverride(*this, selection.overrides,
                    [](const auto &option, auto &field) {
                      if (option.hasValue())
                        field = option.getValue();
                    });
    return selection;
  }

  /// Sets the options from `selection` (e.g. a pipeline's options): the
  /// chip, native-fp4 and the overrides that are set.
  void setSelection(const GPUSelectionOptions &selection) {
    chip = selection.chip;
    nativeFP4 = selection.nativeFP4;
    forEachOverride(*this, selection.overrides,
                    [](auto &option, const auto &field) {
                      if (field)
                        option = *field;
                    });
  }

  /// Calls `fn(option, field)` for every tile option and its field of
  /// GPUConfigOverrides (const or not on either side).
  template <typename SetT, typename OverridesT, typename FnT>
  static void forEachOverride(SetT &set, OverridesT &o, FnT fn) {
    fn(set.decodeMaxM, o.decodeMaxM);
    fn(set.decodeWarps, o.decodeWarps);
    fn(set.decodeKUnroll, o.decodeKUnroll);
    fn(set.decodeRowsPerCTA, o.decodeRowsPerCTA);
    fn(set.decodeSplitK, o.decodeSplitK);
    fn(set.decodePrefetch, o.decodePrefetch);
    fn(set.decodeMaxRegisters, o.decodeMaxRegisters);
    fn(set.decodeOutliers, o.decodeOutliers);
    fn(set.decodeMMA, o.decodeMMA);
    fn(set.prefillTileM, o.prefillTileM);
    fn(set.prefillTileN, o.prefillTileN);
    fn(set.prefillTileK, o.prefillTileK);
    fn(set.prefillWarpsM, o.prefillWarpsM);
    fn(set.prefillWarpsN, o.prefillWarpsN);
    fn(set.prefillStages, o.prefillStages);
    fn(set.prefillDequant, o.prefillDequant);
    fn(set.prefillMMA, o.prefillMMA);
    fn(set.prefillResidual, o.prefillResidual);
    fn(set.prepReadback, o.prepReadback);
    fn(set.elementwiseThreads, o.elementwiseThreads);
  }

  EnumOpt<GPUChip> chip;
  Opt<bool> nativeFP4;
  Opt<int64_t> decodeMaxM;
  Opt<int64_t> decodeWarps, decodeKUnroll, decodeRowsPerCTA, decodeSplitK,
      decodePrefetch, decodeMaxRegisters;
  EnumOpt<GPUDecodeOutliers> decodeOutliers;
  EnumOpt<GPUPrefillMMA> decodeMMA;
  Opt<int64_t> prefillTileM, prefillTileN, prefillTileK, prefillWarpsM,
      prefillWarpsN, prefillStages;
  EnumOpt<GPUPrefillDequant> prefillDequant;
  EnumOpt<GPUPrefillMMA> prefillMMA;
  EnumOpt<GPUPrefillResidual> prefillResidual;
  EnumOpt<GPUPrepReadback> prepReadback;
  Opt<int64_t> elementwiseThreads;
};

/// The `format` option of fp4-pipeline-nvvm and fp4-check-cuda-toolkit: the
/// kernel image gpu-module-to-binary writes, an enum (a bad value lists the
/// valid ones), declared here once for both owners.
template <template <typename, typename> class OptionT, typename OwnerT>
struct GPUImageFormatOption
    : public OptionT<GPUImageFormat, EnumOptionParser<GPUImageFormat>> {
  using Base = OptionT<GPUImageFormat, EnumOptionParser<GPUImageFormat>>;
  using Base::operator=;

  explicit GPUImageFormatOption(OwnerT &owner)
      : Base(owner, "format",
             llvm::cl::desc("Kernel image: isa (PTX), bin (cubin, runs "
                            "ptxas) or fatbin (runs ptxas and fatbinary)"),
             llvm::cl::init(GPUImageFormat::Bin),
             llvm::cl::values(
                 clEnumValN(GPUImageFormat::ISA, "isa", "PTX assembly"),
                 clEnumValN(GPUImageFormat::Bin, "bin", "cubin (ptxas)"),
                 clEnumValN(GPUImageFormat::Fatbin, "fatbin",
                            "fat binary (ptxas, fatbinary)"))) {}
};

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOGPU_GPUCONFIGOPTIONS_H
