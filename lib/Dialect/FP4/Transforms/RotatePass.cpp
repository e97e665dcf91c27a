//===- RotatePass.cpp - the fp4-rotate pass -------------------------------===//
//
// Validates the options and every matmul the pass would rotate (so that
// errors stop the pass before any rewrite), then applies the rotation
// patterns with the walk driver (each matmul is visited once: a rotated
// matmul would match again) and erases the quantize ops it left dead. In
// two-level mode the new permutations are then moved into producing
// matmuls' weights where possible (greedily, on the permute ops only).
//
//===----------------------------------------------------------------------===//

#include "MatchFailureRemarks.h"
#include "RecipePatterns.h"
#include "fp4/Analysis/CalibrationData.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/Hadamard.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4ROTATE
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct FP4RotatePass final : mlir::fp4::impl::FP4RotateBase<FP4RotatePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    // Option errors are reported by runOnOperation, on the IR.
    optionError.clear();
    options = RotateOptions();
    recipePatterns.clear();
    options.size = size;
    optionError = checkRotateOptions(options);
    if (!optionError.empty())
      return success();
    options.size = size;
    options.mode = mode;
    options.seed = seed;
    options.crossBlock = crossBlock;
    options.remarks = remarks;
    calibrationData.reset();
    if (options.mode == RotationMode::TwoLevel) {
      if (calibration.empty()) {
        optionError = "two-level mode needs calibration data "
                      "(calibration=<file.npz>, docs/Calibration.md)";
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
      options.calibration = &*calibrationData;
    }

    RewritePatternSet set(context);
    if (options.mode == RotationMode::TwoLevel)
      populateFP4TwoLevelRotationPatterns(set, options);
    else
      populateFP4RotatePatterns(set, options);
    patterns = FrozenRewritePatternSet(std::move(set));
    RewritePatternSet folding(context);
    populateFP4PermutationFoldingPatterns(folding);
    PermuteOp::getCanonicalizationPatterns(folding, context);
    permutationFolding = FrozenRewritePatternSet(std::move(folding));
    return success();
  }

  void runOnOperation() override {
    if (!optionError.empty()) {
      emitError(getOperation()->getLoc()) << "fp4-rotate: " << optionError;
      return signalPassFailure();
    }

    // Errors first, then the rewrite. Each matmul gets the pass's patterns,
    // or those of its recipe's `rotate` entry (docs/Recipes.md).
    bool invalid = false;
    llvm::SetVector<Operation *> originals;
    SmallVector<std::pair<MatmulOp, FrozenRewritePatternSet>> work;
    int64_t declined = 0;
    getOperation()->walk([&](MatmulOp op) {
      RotateOptions opOptions = options;
      FrozenRewritePatternSet opPatterns = patterns;
      DictionaryAttr entry;
      if (!fp4::detail::readRecipeChoice(op, "rotate", "fp4-rotate",
                                         readRotateOptions, remarks,
                                         "not rotated: ", opOptions, entry,
                                         declined, invalid))
        return;
      if (entry) {
        opOptions.remarks = remarks;
        opPatterns =
            recipePatterns.get(entry, opOptions, populateFP4RotatePatterns);
      }
      work.emplace_back(op, opPatterns);
      FailureOr<int64_t> k = getRotatableReductionSize(op);
      if (failed(k))
        return;
      if (*k % opOptions.size != 0) {
        op.emitOpError() << "fp4-rotate: size " << opOptions.size
                         << " does not divide K = " << *k;
        invalid = true;
        return;
      }
      if (opOptions.mode == RotationMode::TwoLevel &&
          failed(checkTwoLevelCalibration(op, *options.calibration)))
        invalid = true;
      for (Value operand : {op.getLhs(), op.getRhs()})
        if (Operation *quantize = operand.getDefiningOp<QuantizeOp>())
          originals.insert(quantize);
    });
    if (invalid)
      return signalPassFailure();

    llvm::DenseSet<Operation *> userPermutes;
    getOperation()->walk([&](PermuteOp op) { userPermutes.insert(op); });
    fp4::detail::MatchFailureRemarks listener("not rotated: ", remarks);
    for (auto &[op, opPatterns] : work)
      (void)fp4::detail::applyPatternsOnce(op, opPatterns, &listener);
    if (!remarks && !declined)
      listener.warnIfUnchanged(getOperation(), "fp4-rotate", "rotated",
                               "fp4.matmul with a quantized operand");
    for (Operation *op : originals)
      if (op->use_empty())
        op->erase();

    if (options.mode != RotationMode::TwoLevel)
      return;
    // Move the new permutations into producers' weights where that absorbs
    // them (permutations also compose and fold here).
    SmallVector<Operation *> permutes;
    getOperation()->walk([&](PermuteOp op) {
      if (!userPermutes.contains(op))
        permutes.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyOpPatternsGreedily(permutes, permutationFolding, config);
  }

private:
  RotateOptions options;
  std::optional<CalibrationData> calibrationData;
  FrozenRewritePatternSet patterns;
  fp4::detail::RecipePatternCache recipePatterns;
  FrozenRewritePatternSet permutationFolding;
  std::string optionError;
};

} // namespace
