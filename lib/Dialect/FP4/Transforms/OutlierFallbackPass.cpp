//===- OutlierFallbackPass.cpp - the fp4-outlier-fallback pass ------------===//
//
// Parses and checks the options. Block top-k: reports an explicit block
// size that does not divide an operand's K as an error. Static channels:
// looks up the calibration data of every candidate product's activations
// (a missing key is an error naming the op and the key) and selects their
// outlier channels. Then applies populateFP4OutlierFallbackPatterns once to
// every fp4.matmul; with remarks=true each matmul left alone gets a remark
// saying why.
//
//===----------------------------------------------------------------------===//

#include "MatchFailureRemarks.h"
#include "RecipePatterns.h"
#include "CorrectedProduct.h"

#include "fp4/Analysis/CalibrationData.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4OUTLIERFALLBACK
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct FP4OutlierFallbackPass final
    : mlir::fp4::impl::FP4OutlierFallbackBase<FP4OutlierFallbackPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    // Option errors are reported by runOnOperation, on the IR.
    optionError.clear();
    calibrationData.reset();
    recipePatterns.clear();
    options.mode = mode;
    if (options.mode == OutlierMode::StaticChannels) {
      if (calibration.empty()) {
        optionError = "mode=static-channels needs calibration=<file.npz> "
                      "(docs/Calibration.md)";
        return success();
      }
      if (!(threshold >= 0.0)) {
        optionError = "threshold = " + std::to_string(threshold) +
                      " must be a non-negative number";
        return success();
      }
      std::string error;
      FailureOr<CalibrationData> data =
          CalibrationData::load(calibration, error);
      if (failed(data)) {
        optionError = error;
        return success();
      }
      calibrationData = std::move(*data);
      return success();
    }
    if (!calibration.empty()) {
      optionError = "calibration applies to mode=static-channels";
      return success();
    }
    options.k = k;
    options.blockSize = blockSize;
    optionError = checkOutlierFallbackOptions(options);
    if (!optionError.empty())
      return success();
    options.operands = operands;
    RewritePatternSet set(context);
    populateFP4OutlierFallbackPatterns(set, options);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  /// The patterns for each matmul: the pass's, or those of its recipe's
  /// `outlier_fallback` entry (docs/Recipes.md); none where the recipe does
  /// not ask for it. Block top-k: an explicit block size must divide K
  /// wherever it applies.
  LogicalResult
  planMatmuls(const FrozenRewritePatternSet &passPatterns,
              SmallVectorImpl<std::pair<MatmulOp, FrozenRewritePatternSet>>
                  &work,
              int64_t &declined) {
    bool invalid = false;
    getOperation()->walk([&](MatmulOp op) {
      OutlierFallbackOptions opOptions = options;
      FrozenRewritePatternSet opPatterns = passPatterns;
      DictionaryAttr entry;
      if (!fp4::detail::readRecipeChoice(
              op, "outlier_fallback", "fp4-outlier-fallback",
              readOutlierFallbackOptions, remarks, "no outlier fallback: ",
              opOptions, entry, declined, invalid))
        return;
      if (entry)
        opPatterns = recipePatterns.get(entry, opOptions,
                                        populateFP4OutlierFallbackPatterns);
      work.emplace_back(op, opPatterns);
      if (opOptions.mode == OutlierMode::BlockTopK && opOptions.blockSize != 0)
        for (auto [operand, size] : getOutlierSplitCandidates(op, opOptions)) {
          int64_t k =
              cast<QuantizedTensorType>(operand.getType()).getAxisSize();
          if (k % size == 0)
            continue;
          op.emitError() << "fp4-outlier-fallback: block-size = " << size
                         << " does not divide K = " << k << " of the "
                         << (operand == op.getLhs() ? "lhs" : "rhs");
          invalid = true;
        }
    });
    return failure(invalid);
  }

  /// Static channels: the outlier channels of every candidate's activations,
  /// from the calibration data; a missing key is an error on the quantize.
  LogicalResult
  selectChannels(llvm::DenseMap<Operation *, SmallVector<int64_t>> &channels) {
    bool invalid = false;
    getOperation()->walk([&](MatmulOp op) {
      FailureOr<QuantizeOp> quantize = getStaticChannelCandidate(op);
      if (failed(quantize) || channels.count(*quantize))
        return;
      FailureOr<CalibrationView> view =
          calibrationData->lookupOrEmitError(*quantize);
      if (failed(view)) {
        invalid = true;
        return;
      }
      channels[*quantize] =
          selectOutlierChannels(view->data, view->channels(), threshold);
    });
    return failure(invalid);
  }

  void runOnOperation() override {
    if (!optionError.empty()) {
      emitError(getOperation()->getLoc())
          << "fp4-outlier-fallback: " << optionError;
      return signalPassFailure();
    }
    FrozenRewritePatternSet staticPatterns;
    llvm::DenseMap<Operation *, SmallVector<int64_t>> channels;
    SmallVector<std::pair<MatmulOp, FrozenRewritePatternSet>> work;
    int64_t declined = 0;
    if (options.mode == OutlierMode::StaticChannels) {
      if (failed(selectChannels(channels)))
        return signalPassFailure();
      // Built per run: the selector refers to this run's channels.
      OutlierFallbackOptions staticOptions = options;
      staticOptions.channelsFor = [&](QuantizeOp quantize) {
        return channels.lookup(quantize);
      };
      RewritePatternSet set(&getContext());
      populateFP4OutlierFallbackPatterns(set, staticOptions);
      staticPatterns = FrozenRewritePatternSet(std::move(set));
    }
    if (failed(planMatmuls(options.mode == OutlierMode::StaticChannels
                               ? staticPatterns
                               : patterns,
                           work, declined)))
      return signalPassFailure();
    SmallVector<Operation *> live =
        mlir::fp4::detail::collectLiveCorrectionInputs(getOperation());
    fp4::detail::MatchFailureRemarks listener("no outlier fallback: ",
                                              remarks);
    for (auto &[op, opPatterns] : work)
      (void)fp4::detail::applyPatternsOnce(op, opPatterns, &listener);
    if (!remarks && !declined)
      listener.warnIfUnchanged(getOperation(), "fp4-outlier-fallback",
                               "split", "fp4.quantize feeding an fp4.matmul");
    mlir::fp4::detail::eraseOpsMadeDead(live);
  }

private:
  OutlierFallbackOptions options;
  std::optional<CalibrationData> calibrationData;
  FrozenRewritePatternSet patterns;
  fp4::detail::RecipePatternCache recipePatterns;
  std::string optionError;
};

} // namespace
