//===- ResidualPass.cpp - the fp4-residual pass ---------------------------===//
//
// Parses and checks the options, then applies populateFP4ResidualPatterns
// once to every fp4.matmul; with remarks=true each matmul left alone gets a
// remark saying why.
//
//===----------------------------------------------------------------------===//

#include "MatchFailureRemarks.h"
#include "RecipePatterns.h"
#include "CorrectedProduct.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/Residual.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4RESIDUAL
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct FP4ResidualPass final
    : mlir::fp4::impl::FP4ResidualBase<FP4ResidualPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    optionError.clear();
    recipePatterns.clear();
    ResidualOptions options;
    if (sparsity == ResidualSparsity::TwoFour) {
      if (k != 0 || blockSize != 0) {
        optionError = "k and block-size apply to sparsity=topk only (2:4 "
                      "keeps 2 of every 4)";
        return success();
      }
      options.blockSize = numerics::kTwoFourBlock;
      options.k = numerics::kTwoFourKeep;
    } else {
      options.blockSize = blockSize ? blockSize : 32;
      options.k = k ? k : 4;
      optionError = checkResidualOptions(options);
      if (!optionError.empty())
        return success();
    }
    options.operands = operands;
    RewritePatternSet set(context);
    populateFP4ResidualPatterns(set, options);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    if (!optionError.empty()) {
      emitError(getOperation()->getLoc()) << "fp4-residual: " << optionError;
      return signalPassFailure();
    }
    SmallVector<Operation *> live =
        mlir::fp4::detail::collectLiveCorrectionInputs(getOperation());
    // Each matmul gets the pass's patterns, or those of its recipe's
    // `residual` entry (docs/Recipes.md).
    SmallVector<std::pair<MatmulOp, FrozenRewritePatternSet>> work;
    int64_t declined = 0;
    bool invalid = false;
    getOperation()->walk([&](MatmulOp op) {
      ResidualOptions opOptions;
      DictionaryAttr entry;
      if (!fp4::detail::readRecipeChoice(op, "residual", "fp4-residual",
                                         readResidualOptions, remarks,
                                         "no residual correction: ", opOptions,
                                         entry, declined, invalid))
        return;
      work.emplace_back(op, entry ? recipePatterns.get(
                                        entry, opOptions,
                                        populateFP4ResidualPatterns)
                                  : patterns);
    });
    if (invalid)
      return signalPassFailure();
    fp4::detail::MatchFailureRemarks listener("no residual correction: ",
                                              remarks);
    for (auto &[op, opPatterns] : work)
      (void)fp4::detail::applyPatternsOnce(op, opPatterns, &listener);
    if (!remarks && !declined)
      listener.warnIfUnchanged(getOperation(), "fp4-residual", "corrected",
                               "fp4.quantize feeding an fp4.matmul");
    mlir::fp4::detail::eraseOpsMadeDead(live);
  }

private:
  FrozenRewritePatternSet patterns;
  fp4::detail::RecipePatternCache recipePatterns;
  std::string optionError;
};

} // namespace
