//===- MacroScalePass.cpp - the fp4-macro-scale pass ----------------------===//
//
// Checks the options, applies populateFP4MacroScalePatterns once to every op
// and reports, as remarks, every MXFP4 value it leaves alone and why.
//
//===----------------------------------------------------------------------===//

#include "MatchFailureRemarks.h"
#include "RecipePatterns.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4MACROSCALE
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct FP4MacroScalePass final
    : mlir::fp4::impl::FP4MacroScaleBase<FP4MacroScalePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    recipePatterns.clear();
    RewritePatternSet set(context);
    MacroScaleOptions options;
    options.macroBlock = macroBlock;
    options.search = search;
    populateFP4MacroScalePatterns(set, options);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    // The options are the parameters of the target scheme: its verifier
    // says what is wrong with them.
    auto emitError = [&] {
      return root->emitError("fp4-macro-scale: invalid options: ");
    };
    if (failed(MXFP4MacroAttr::verify(emitError, macroBlock, search,
                                      ScaleRounding::Floor,
                                      ElementRounding::NearestEven, 0)))
      return signalPassFailure();

    // Each quantize gets the pass's patterns, or those of the
    // `macro_scale` entry of its fp4.matmul users' recipes (docs/Recipes.md).
    SmallVector<std::pair<QuantizeOp, FrozenRewritePatternSet>> work;
    bool invalid = false, declined = false, remarked = false;
    root->walk([&](QuantizeOp op) {
      std::optional<DictionaryAttr> entry;
      bool conflict = false;
      for (Operation *user : op.getResult().getUsers()) {
        std::optional<DictionaryAttr> userEntry =
            isa<MatmulOp>(user) ? getRecipeEntry(user, "macro_scale")
                                : std::nullopt;
        if (!userEntry)
          continue;
        conflict |= entry && *entry != *userEntry;
        entry = userEntry;
      }
      if (conflict) {
        remarked = true;
        op.emitRemark("not rewritten: the fp4.recipe of its fp4.matmul users "
                      "ask for different macro-scaling");
        return;
      }
      if (!entry) {
        work.emplace_back(op, patterns);
        return;
      }
      if (!*entry) {
        declined = true;
        return;
      }
      std::string error;
      FailureOr<MacroScaleOptions> read = readMacroScaleOptions(*entry, error);
      if (failed(read)) {
        op.emitOpError() << "fp4-macro-scale: invalid fp4.recipe: " << error;
        invalid = true;
        return;
      }
      work.emplace_back(op, recipePatterns.get(*entry, *read,
                                               populateFP4MacroScalePatterns));
    });
    if (invalid)
      return signalPassFailure();
    fp4::detail::MatchFailureRemarks listener("not rewritten: ");
    for (auto &[op, opPatterns] : work)
      (void)fp4::detail::applyPatternsOnce(op, opPatterns, &listener);
    remarked |= listener.failures > 0;

    // MXFP4 values that are not quantize results cannot change type here.
    root->walk([&](Operation *op) {
      if (!isa<QuantizeOp>(op))
        for (OpResult result : op->getResults())
          if (getMacroScalableScheme(result.getType()))
            remarked = true, op->emitRemark("not rewritten: result #")
                << result.getResultNumber() << " is produced by '"
                << op->getName() << "', not by fp4.quantize";
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (getMacroScalableScheme(arg.getType()))
              remarked = true,
              op->emitRemark("not rewritten: block argument #")
                  << arg.getArgNumber() << " of type " << arg.getType()
                  << " (signatures and region arguments are kept)";
    });
    // Each MXFP4 value left alone has its remark; only an input with
    // nothing to rewrite would otherwise pass silently.
    if (!remarked && !declined)
      listener.warnIfUnchanged(root, "fp4-macro-scale", "rewritten",
                               "fp4.quantize to #fp4.mxfp4");
  }

private:
  FrozenRewritePatternSet patterns;
  fp4::detail::RecipePatternCache recipePatterns;
};

} // namespace
