//===- FusedCorrectionChain.h - a recipe's product terms as one plan -*- C++ -*-===//
//
// fp4-outlier-fallback and fp4-residual leave y = fp4.matmul(Q(x), Q(W))
// followed by fp4.correction_matmul terms accumulated into it. When the
// terms are every activation part times every weight part (the form both
// passes produce), y = (sum of activation parts) (sum of weight parts)^T,
// which the GPU computes as one plan: the activation parts stacked as
// bf16 row groups (exact: MXFP4 values are bf16 numbers, a split's rest is
// +0 where its outliers go), one W4A16 product of those rows with the
// quantized weight (the weight streams once), and an epilogue that sums
// the row groups and adds the weight outliers' product.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_FUSEDCORRECTIONCHAIN_H
#define LIB_CONVERSION_FP4TOGPU_FUSEDCORRECTIONCHAIN_H

#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <string>

namespace mlir::fp4 {

/// One row group of the stacked activations: a dense part (quantized or
/// bf16; null if none) and a block-sparse part that fills its zeros.
struct FusedActivationGroup {
  Value dense;
  Value values, indices;
  int64_t blockSize = 0;
};

struct FusedCorrectionChain {
  /// The chain's ops in program order: the root fp4.matmul if it is part
  /// of the chain, then the correction products; the last one's result is
  /// the chain's.
  SmallVector<Operation *> ops;
  /// The accumulator the first term adds to, if it is not in the chain.
  Value outerAcc;
  int64_t m = 0, n = 0, k = 0;
  SmallVector<FusedActivationGroup> groups;
  /// The quantized weight part and the optional block-sparse one.
  Value weight;
  Value weightValues, weightIndices;
  int64_t weightBlockSize = 0;
  /// Whether the quantized weight is provably +-0 at every position of the
  /// block-sparse weight part (weightRestIsZeroAtEntries), so that the
  /// decode kernel's wgmma form may write the part into its weight tile
  /// (MatmulKernelSpec::WeightEntries). Decided only for decode chains
  /// that may go to that form (ChainAnalysisContext::decodeOutliersOnWgmma,
  /// decodeEntriesOnWgmma); false elsewhere (the prefill route asks the
  /// proof itself).
  bool weightEntriesProven = false;
  RankedTensorType resultType;
  /// M <= decode-max-m.
  bool decode = false;
};

/// What a lowered fp4.split_outliers left: its values and indices, keyed
/// by its rest (the walk converts the split before the chain ends, so the
/// chain can no longer see the op itself).
struct LoweredSplit {
  Value values, indices;
  int64_t blockSize = 0;
};
using LoweredSplits = llvm::DenseMap<Value, LoweredSplit>;

/// Whether the quantized weight `weight` is +-0 at every position of the
/// block-sparse part (`values`, `indices`, blocks of `blockSize` along K):
/// it quantizes the rest of the fp4.split_outliers that produced exactly
/// that part (the split writes +0 there and every scheme quantizes +0 to
/// code 0), or both are constants and the codes at the entries' positions
/// are checked here (fp4-fold-constants' output). Anything else (e.g.
/// function arguments) is not proven.
bool weightRestIsZeroAtEntries(Value weight, Value values, Value indices,
                               int64_t blockSize, const LoweredSplits &splits);

/// The last product of the chain through `op` (following single-use acc
/// edges forward).
CorrectionMatmulOp findCorrectionChainEnd(CorrectionMatmulOp op);

/// What the chain analysis needs from the conversion: the decode/prefill
/// boundary, the splits lowered so far, whether the prefill kernel takes a
/// chain's stacked rows (with its weight outliers, if any) under the
/// selected configuration, and the smallest decode-sized M from which a
/// chain with correction terms goes to the prefill kernel when it takes
/// the chain (ChipDescription::correctionPrefillMinM; 0: never). Every
/// pattern that asks whether a chain fuses asks with the same context, and
/// before it changes any IR, so a chain never lowers half fused.
struct ChainAnalysisContext {
  int64_t decodeMaxM = 0;
  const LoweredSplits &splits;
  std::function<LogicalResult(const FusedCorrectionChain &, std::string &)>
      prefillTakesChain;
  int64_t correctionPrefillMinM = 0;
  /// Whether a decode chain's stacked product runs on warp-group MMA: then
  /// from correctionPrefillMinM rows chains without weight outliers keep
  /// the decode plan (the decode kernel's wgmma
  /// form multiplies the stacked rows from shared memory, weight outliers
  /// from per-group slices of the sum; 16 x 14336 x 4096 with 32 stacked
  /// rows: 29.9 us against 43.0 for the prefill medium tile, H200).
  bool decodeStacksOnWgmma = false;
  /// Whether chains with weight outliers also go to it (decode-mma=wgmma
  /// given; by default they keep the mma.sync forms or the prefill kernel):
  /// written into its weight tile where weightEntriesProven, else gathered
  /// from per-group slices of the activation sum.
  bool decodeOutliersOnWgmma = false;
  /// Whether chains with proven weight outliers (weightEntriesProven) go to
  /// it, their outliers written into its weight tile (decode-outliers=tile
  /// on a chip with wgmma; the form is then taken whatever the other
  /// options' default would be; by default where the stacked product runs
  /// on wgmma), and above how many stacked rows (0 under the option; by
  /// default 16: the tile pays where two row groups share it), or, for
  /// at most decodePatchMaxUnitEntries entries per 32-element unit, above
  /// decodePatchEntriesAboveRows (by default 8 and 2: there the register
  /// patch beats the prefill kernel's entries at 16 rows).
  bool decodeEntriesOnWgmma = false;
  int64_t decodeEntriesAboveRows = 0;
  int64_t decodePatchEntriesAboveRows = 0;
  int64_t decodePatchMaxUnitEntries = 0;
  /// Whether the decode kernel takes every launch of a decode chain's
  /// fused plan; a chain it declines runs term by term (with the reason).
  std::function<LogicalResult(const FusedCorrectionChain &, std::string &)>
      decodeTakesChain;
};

/// The fusable chain ending at `last`, or failure with `reason`. At prefill
/// sizes a block-sparse weight part joins the product written into the
/// weight tile (MatmulKernelSpec::WeightEntries), exact only where
/// weightRestIsZeroAtEntries proves the quantized part +-0. When the chain
/// fails only because that part cannot, or because the decode kernel
/// declines its fused plan (ctx.decodeTakesChain), its terms run one by
/// one and `*sayWhyUnfused` is set so that the caller can say so.
FailureOr<FusedCorrectionChain>
analyzeCorrectionChain(CorrectionMatmulOp last, const ChainAnalysisContext &ctx,
                       std::string &reason,
                       bool *sayWhyUnfused = nullptr);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_FUSEDCORRECTIONCHAIN_H
