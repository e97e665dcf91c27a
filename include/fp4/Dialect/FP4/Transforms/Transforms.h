//===- Transforms.h - fp4 rewrite patterns ----------------------*- C++ -*-===//
//
// The rewrites behind the fp4 passes, as public populate*Patterns functions so
// that other compilers (IREE, torch-mlir pipelines, custom drivers) can mix
// them into their own pattern sets without running our passes.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_TRANSFORMS_H
#define FP4_DIALECT_FP4_TRANSFORMS_TRANSFORMS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Dialect/FP4/Transforms/PassOptionEnums.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class PatternRewriter;
class RewritePatternSet;
namespace linalg {
class LinalgOp;
} // namespace linalg

namespace fp4 {

/// Why a contraction was left unchanged (fp4-quantize's statistics).
enum class QuantizeSkip {
  Form,        ///< not a matrix product fp4.matmul takes (maps, dims, body)
  ElementType, ///< an operand is not f32, bf16 or f16
  Shape,       ///< K dynamic, empty, or not a multiple of the scheme's blocks
  Excluded,    ///< left in float by choice: a recipe's ignore list or rule,
               ///< or an activation x activation product not opted in
};

/// What fp4-quantize knows about a contraction when it chooses how to
/// quantize it (docs/Recipes.md).
struct ContractionInfo {
  /// The op's layer name (getLayerName), empty when it has none.
  StringRef layer;
  /// Whether the linalg rhs is a weight: a constant or a function argument,
  /// through layout and conversion ops (isWeightOperand). Otherwise the
  /// contraction is an activation x activation product.
  bool weightRhs = false;
  /// Shared batch (1 when none), product of the lhs free dimensions (M), of
  /// the rhs free ones (N), and K; ShapedType::kDynamic where not static.
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

/// How one contraction is quantized.
struct QuantizeChoice {
  /// Tried in order: the first scheme that fits the contraction (K a
  /// multiple of its blocks, a quantized type its verifier accepts) is used.
  SmallVector<QuantSchemeAttrInterface> schemes;
  /// When no scheme fits: true leaves the op in float as chosen
  /// (QuantizeSkip::Excluded), false reports it as a shape skip.
  bool floatWhenNoneFits = false;
  QuantizeOperands operands = QuantizeOperands::Both;
  /// Attached to the fp4.matmul as kRecipeAttrName when set.
  DictionaryAttr recipe;

  bool quantizeLhs() const { return operands != QuantizeOperands::Weights; }
  bool quantizeRhs() const { return operands != QuantizeOperands::Activations; }
};

/// The discardable attribute of an fp4.matmul saying which accuracy
/// transforms its recipe asks for, and with which options (docs/Recipes.md);
/// as a module attribute, a whole recipe.
inline constexpr StringLiteral kRecipeAttrName = "fp4.recipe";

struct QuantizeOptions {
  /// The scheme every quantized operand gets (blocked along K). Required
  /// unless `select` is set.
  QuantSchemeAttrInterface scheme;
  QuantizeOperands operands = QuantizeOperands::Both;
  /// Quantize activation x activation products (attention's Q K^T, P V)
  /// too; off by default (they are opt-in).
  bool activationProducts = false;
  /// Chooses per contraction (a recipe); replaces scheme / operands /
  /// activationProducts. Returns std::nullopt to leave the op in float, with
  /// the reason in the string.
  std::function<std::optional<QuantizeChoice>(linalg::LinalgOp,
                                              const ContractionInfo &,
                                              std::string &)>
      select;
  /// Called for every contraction the pattern leaves unchanged (optional).
  std::function<void(QuantizeSkip)> onSkip;

  bool quantizeLhs() const { return operands != QuantizeOperands::Weights; }
  bool quantizeRhs() const { return operands != QuantizeOperands::Activations; }
};

/// The layer name of an op at `loc`: the first NameLoc met walking it
/// depth-first (FusedLoc in order, CallSiteLoc callee first), or std::nullopt.
std::optional<StringRef> getLayerName(Location loc);

/// Whether `value` is a weight for fp4-quantize: through linalg.transpose,
/// linalg.broadcast, copying or broadcasting linalg.generic, tensor reshapes
/// and casts, arith.extf / arith.truncf, it comes from a constant or from an
/// argument of the enclosing function.
bool isWeightOperand(Value value);

/// Adds the pattern rewriting linalg contractions (linalg.matmul and
/// linalg.batch_matmul with default or explicit indexing maps, linalg.generic
/// contractions) into fp4.quantize + fp4.matmul; see the fp4-quantize pass
/// description for the forms matched and the exact semantics. Every op that
/// has a reduction dimension but is not rewritten gets a notifyMatchFailure
/// reason; ops without one fail silently (they are not contractions).
///
/// The pattern does not erase the zero fill of a replaced accumulator (it may
/// not be the pattern's to erase under the walk driver); run DCE afterwards.
void populateFP4QuantizePatterns(RewritePatternSet &patterns,
                                 const QuantizeOptions &options);

/// Parses the `scheme` option of fp4-quantize: a scheme attribute in MLIR
/// syntax (`#fp4.nvfp4<four_over_six = true>`) or a short name for one with
/// default parameters (`mxfp4`, `nvfp4`, `hif4`, `mxfp4_macro`; a bare name
/// may carry parameters: `nvfp4<tile2d = true>`). On failure, `error` says
/// why, including the attribute parser's message, which is caught with a
/// context-wide diagnostic handler: call it where no other thread emits
/// diagnostics on `context` (pass initialize(), option parsing).
FailureOr<QuantSchemeAttrInterface>
parseQuantScheme(MLIRContext *context, StringRef text, std::string &error);

/// Parses the `operands` option of fp4-quantize: both, activations, weights.
FailureOr<QuantizeOperands> parseQuantizeOperands(StringRef text);

//===----------------------------------------------------------------------===//
// fp4-fold-constants
//===----------------------------------------------------------------------===//

struct FoldConstantsOptions {
  /// Constants with more elements are left alone (the fp4-fold-constants pass
  /// reports them as errors).
  int64_t maxElements = int64_t(1) << 32;
  /// Also fold fp4.dequantize of fp4.pack of constants into float constants
  /// (off by default: packed weights stay packed).
  bool foldDequantize = false;
};

/// Adds the pattern replacing fp4.quantize of a constant (dense or
/// dense_resource f32/bf16/f16, possibly behind linalg.transpose, arith.extf
/// and arith.truncf) by fp4.pack of constant components computed with the
/// scheme's reference quantizer, in parallel on the context's thread pool.
/// Components under 64 elements become `dense` literals, larger ones
/// `dense_resource` blobs named fp4_<source>_<component>. With
/// `foldDequantize`, also adds the pattern folding fp4.dequantize of fp4.pack
/// of constants into a float constant (the scheme's reference dequantizer).
/// Producers left without users are erased. Inputs that are not such
/// constants, and schemes without a reference quantizer, fail with a
/// notifyMatchFailure reason.
void populateFP4FoldConstantsPatterns(RewritePatternSet &patterns,
                                      const FoldConstantsOptions &options = {});

/// Whether `op` is an fp4.quantize whose input the fold-constants pattern can
/// read at compile time, whatever its size.
bool isFoldableConstantQuantize(Operation *op);

/// Adds the patterns folding fp4.rotate and fp4.permute of a constant
/// (dense / dense_resource f32, bf16 or f16, possibly behind
/// linalg.transpose, arith.extf, arith.truncf) into a constant of the result
/// type, computed with the numerics library's Hadamard rotation
/// (Hadamard.h) in parallel; populateFP4FoldConstantsPatterns includes them.
/// Results under 64 elements or uniform become `dense`, larger ones
/// `dense_resource` blobs named <source>_rotated / <source>_permuted.
void populateFP4FoldRotationPatterns(RewritePatternSet &patterns,
                                     const FoldConstantsOptions &options = {});

//===----------------------------------------------------------------------===//
// fp4-rotate
//===----------------------------------------------------------------------===//

class CalibrationData;
class MatmulOp;
class QuantizeOp;

/// Parses the `mode` option of fp4-rotate: randomized, deterministic,
/// two-level.
FailureOr<RotationMode> parseRotationMode(StringRef text);

struct RotateOptions {
  /// Hadamard block size: a power of two in [16, 256].
  int64_t size = 32;
  RotationMode mode = RotationMode::Randomized;
  /// Seed of the randomized signs (randomized mode, and the randomized
  /// candidate of two-level mode).
  uint32_t seed = 0;
  /// Two-level mode: the activations' calibration samples (required there;
  /// must outlive the patterns).
  const CalibrationData *calibration = nullptr;
  /// Two-level mode: a Hadamard across blocks after the permutation.
  bool crossBlock = false;
  /// Two-level mode: remark the choice on each matmul.
  bool remarks = false;
};

/// K of an fp4.matmul whose operands fp4-rotate can rotate (each an
/// fp4.quantize result or a float tensor, K static), or failure with the
/// reason in `reason` when given.
FailureOr<int64_t> getRotatableReductionSize(MatmulOp op,
                                             std::string *reason = nullptr);

/// Adds the pattern rotating both operands of an fp4.matmul along K with the
/// same block Hadamard (randomized or deterministic mode of `options`): an
/// fp4.rotate (f32 result) before a fresh fp4.quantize of each quantized
/// operand, and on float operands. Matmuls that getRotatableReductionSize
/// rejects, or whose K `options.size` does not divide, fail with a
/// notifyMatchFailure reason. Use a driver that visits each matmul once
/// (walkAndApplyPatterns): the rotated matmul matches again.
void populateFP4RotatePatterns(RewritePatternSet &patterns,
                               const RotateOptions &options);

/// The discardable attribute recording two-level mode's intra-block choice
/// on an fp4.matmul: "identity", "hadamard-<size>" or
/// "randomized-hadamard-<size>".
inline constexpr StringLiteral kIntraBlockRotationAttrName =
    "fp4.intra_block_rotation";

/// Two-level mode's inter-block balancing: `channelEnergy[k]` is the energy
/// of channel k (K a multiple of blockSize). Channels in order of descending
/// energy (ties: lower index first) go to the block of `blockSize` positions
/// with the least energy that still has room (ties: lower block index).
/// Returns the permutation (new position -> channel), block by block in
/// order of placement.
SmallVector<int64_t> computeBlockBalancingPermutation(
    ArrayRef<double> channelEnergy, int64_t blockSize);

/// Two-level mode's checks for a matmul fp4-rotate would rotate: the
/// activation (an fp4.quantize lhs) has calibration samples with K channels
/// that its scheme can quantize as one [rows, K] tensor. Emits an error
/// naming the op (and the key looked for) and fails otherwise.
LogicalResult checkTwoLevelCalibration(MatmulOp op,
                                       const CalibrationData &data);

/// Adds two-level mode's pattern (see the fp4-rotate pass description):
/// from `options.calibration`'s samples of the quantized activation, a
/// block-balancing channel permutation (plus, with `options.crossBlock`, a
/// Hadamard across blocks) and the intra-block rotation of highest code
/// entropy, applied to both operands along K; the choice is recorded in
/// kIntraBlockRotationAttrName. Matmuls without a quantized activation or
/// usable samples fail with a notifyMatchFailure reason. Use a driver that
/// visits each matmul once (walkAndApplyPatterns).
void populateFP4TwoLevelRotationPatterns(RewritePatternSet &patterns,
                                         const RotateOptions &options);

/// Adds the patterns moving fp4.permute of an activation into the rows of
/// the constant weights of the matmuls producing it, through single-use
/// elementwise ops (only where the whole permutation is absorbed that way,
/// so no runtime permutation is added).
void populateFP4PermutationFoldingPatterns(RewritePatternSet &patterns);

/// Produces row-view rows [firstRow, firstRow + numRows) of a quantize input
/// as f32 (ReferenceQuantization.h) into `values` (numRows x axis length).
/// Safe to call concurrently.
using ConstantRowReader = std::function<void(
    int64_t firstRow, int64_t numRows, MutableArrayRef<float> values)>;

/// For an fp4.quantize accepted by isFoldableConstantQuantize, a reader of
/// exactly the values fp4-fold-constants quantizes (casts and transposes
/// applied), valid while the constant lives; otherwise failure, with the
/// reason in `reason` when given. Used by analyses (fp4-error-report).
FailureOr<ConstantRowReader>
getConstantQuantizeInputReader(Operation *op, std::string *reason = nullptr);

/// The same for any float tensor `value` that fp4-fold-constants can read (a
/// constant behind linalg.transpose, arith.extf, arith.truncf): a reader of
/// its rows along the last axis. `sourceName` receives the constant's blob
/// key, if it has one. Used by the folding of fp4.split_outliers and
/// fp4.residual.
FailureOr<ConstantRowReader> getConstantRowReader(Value value,
                                                  std::string *reason = nullptr,
                                                  std::string *sourceName =
                                                      nullptr);

/// The dequantized values (f32, row-major in the logical shape) of a
/// quantized tensor defined by fp4.quantize of a readable constant or by
/// fp4.pack of constant components, computed with the scheme's reference
/// quantizer and dequantizer; failure with the reason otherwise.
LogicalResult readDequantizedConstant(Value quantized,
                                      std::vector<float> &values,
                                      std::string &reason);

//===----------------------------------------------------------------------===//
// fp4-merge-constant-corrections
//===----------------------------------------------------------------------===//

/// What mergeConstantCorrections did to one corrected product.
struct MergeCorrectionsResult {
  /// Whether at least one lhs part's terms were merged (the IR changed).
  bool merged = false;
  /// Terms removed from the chain.
  uint64_t termsRemoved = 0;
  /// Lhs parts left because their constant rhs parts overlap (or a sparse
  /// index is outside its block): merging would not be exact.
  uint64_t skippedOverlap = 0;
  /// Why lhs parts with several terms were left, one per part.
  SmallVector<std::string> reasons;
};

/// Merges, in the corrected product whose first term is `matmul`, the terms
/// of every lhs part whose rhs parts are disjoint rank-2 constants into one
/// term against their exact f32 sum (a new constant); the f32 summation over
/// the terms is reassociated (Passes.td, fp4-merge-constant-corrections).
/// Failure when `matmul` has no correction terms.
FailureOr<MergeCorrectionsResult> mergeConstantCorrections(
    PatternRewriter &rewriter, MatmulOp matmul);

/// Adds the pattern applying mergeConstantCorrections to fp4.matmul ops
/// (a match failure with the reasons where nothing merged).
void populateFP4MergeConstantCorrectionsPatterns(RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// fp4-outlier-fallback and fp4-residual (numerics.md 7, 8)
//===----------------------------------------------------------------------===//

/// Parses `activations`, `weights` or `both`.
FailureOr<CorrectionOperands> parseCorrectionOperands(StringRef text);

/// Parses `block-topk` or `static-channels`.
FailureOr<OutlierMode> parseOutlierMode(StringRef text);

struct OutlierFallbackOptions {
  OutlierMode mode = OutlierMode::BlockTopK;
  /// Entries taken out per block (block-topk): 1, 2 or 4.
  int64_t k = 1;
  /// Elements per block (block-topk); 0: the quantized operand's scheme
  /// block (getOutlierBlockSize).
  int64_t blockSize = 0;
  CorrectionOperands operands = CorrectionOperands::Both;
  /// Static channels: the channels (positions along K, increasing) of the
  /// activations quantized by the given op that are computed in high
  /// precision; none leaves the product alone. fp4-outlier-fallback selects
  /// them from calibration data with selectOutlierChannels.
  std::function<SmallVector<int64_t>(QuantizeOp)> channelsFor;
};

/// The channels of calibration samples (`rows` x `channels`, row-major)
/// whose largest |x| exceeds `threshold` (NaN samples never do), increasing.
SmallVector<int64_t> selectOutlierChannels(ArrayRef<float> samples,
                                           int64_t channels, double threshold);

/// For the static-channel mode: the fp4.quantize of the activations whose
/// channels would be split out of `op` (the lhs quantize, on a product with
/// no correction terms yet and a weight that is an fp4.quantize of a float
/// tensor or a float tensor), or failure with the reason.
FailureOr<QuantizeOp> getStaticChannelCandidate(MatmulOp op,
                                                std::string *reason = nullptr);

/// The default outlier block of a scheme: its block size (MXFP4 32, NVFP4
/// 16, macro-scaled MXFP4 32), or, when that is smaller than 16 elements
/// (HiF4's 4-element sub-blocks), its axis multiple (HiF4's 64-group that
/// carries the E6M2 scale).
int64_t getOutlierBlockSize(QuantSchemeAttrInterface scheme);

/// Adds the pattern of `options.mode` (see the fp4-outlier-fallback pass).
/// Block top-k: an fp4.matmul (and the correction terms already accumulated
/// onto it) is rewritten so that each selected operand produced by
/// fp4.quantize of %x becomes fp4.quantize of the rest of
/// fp4.split_outliers %x, plus the correction terms of the outliers. Static
/// channels: the activations and the weights are split at the channels
/// `options.channelsFor` gives (fp4.split_channels) and the gathered
/// channels' product is added. Matmuls it cannot rewrite fail with a
/// notifyMatchFailure reason. Use a driver that visits each matmul once
/// (walkAndApplyPatterns).
void populateFP4OutlierFallbackPatterns(RewritePatternSet &patterns,
                                        const OutlierFallbackOptions &options);

/// The fp4.matmul operands (lhs, rhs) `options` selects that the block-top-k
/// pattern would split, with the block size it would use, for a caller that
/// validates options first (fp4-outlier-fallback reports a block size that
/// does not divide K as an error).
SmallVector<std::pair<Value, int64_t>>
getOutlierSplitCandidates(MatmulOp op, const OutlierFallbackOptions &options);

struct ResidualOptions {
  /// Elements per block and entries kept per block: 4 and 2 for 2:4.
  int64_t blockSize = 4;
  int64_t k = 2;
  CorrectionOperands operands = CorrectionOperands::Activations;
};

/// Adds the pattern adding, for each selected fp4.matmul operand produced by
/// fp4.quantize of %x, the correction terms of fp4.residual %x, %q (see the
/// fp4-residual pass). Matmuls it cannot rewrite fail with a
/// notifyMatchFailure reason. Use a driver that visits each matmul once.
void populateFP4ResidualPatterns(RewritePatternSet &patterns,
                                 const ResidualOptions &options);

/// Adds the patterns folding fp4.split_outliers of a constant into constant
/// rest / values / indices, and fp4.residual of a constant and its
/// fp4.quantize (or fp4.pack of constants) into constant values / indices,
/// with the numerics library's reference (Outliers.h, Residual.h). Called by
/// populateFP4FoldConstantsPatterns.
void populateFP4FoldCorrectionPatterns(RewritePatternSet &patterns,
                                       const FoldConstantsOptions &options);

//===----------------------------------------------------------------------===//
// fp4-macro-scale
//===----------------------------------------------------------------------===//

struct MacroScaleOptions {
  /// Macro-block size Bm: 0 (the whole blocked axis) or a multiple of 32 in
  /// [32, 65536], as #fp4.mxfp4_macro's verifier requires.
  int64_t macroBlock = 256;
  /// 0: the default factor; N in [1, 256]: search N candidate factors.
  int64_t search = 0;
};

/// Adds the pattern rewriting fp4.quantize to #fp4.mxfp4 with blocks of 32
/// into #fp4.mxfp4_macro with `options` and the same scale rounding, element
/// rounding and seed, by changing the result type in place. Applies when
/// every user takes any scheme with unchanged types (fp4.matmul,
/// fp4.dequantize, other fp4 ops without quantized results except
/// fp4.unpack) and the blocked axis is a multiple of the macro-block size;
/// other MXFP4 quantize ops fail with a notifyMatchFailure reason. The
/// options must satisfy #fp4.mxfp4_macro's verifier.
void populateFP4MacroScalePatterns(RewritePatternSet &patterns,
                                   const MacroScaleOptions &options = {});

/// The scheme of `type` if it is an !fp4.tensor quantized with #fp4.mxfp4 in
/// blocks of 32, the values fp4-macro-scale converts.
std::optional<MXFP4Attr> getMacroScalableScheme(Type type);

} // namespace fp4
} // namespace mlir

#endif // FP4_DIALECT_FP4_TRANSFORMS_TRANSFORMS_H
