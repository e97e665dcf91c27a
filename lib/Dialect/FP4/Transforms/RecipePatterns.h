//===- RecipePatterns.h - per-op patterns of the accuracy passes -*- C++ -*-===//
//
// Under a recipe (docs/Recipes.md) each fp4.matmul carries its own options
// for every accuracy pass, so a pass cannot run one pattern set over the
// whole IR: it builds the patterns once per distinct recipe entry and applies
// them op by op, with the walk driver's semantics (each op once, the
// rewritten op not visited again).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_TRANSFORMS_RECIPEPATTERNS_H
#define FP4_LIB_DIALECT_FP4_TRANSFORMS_RECIPEPATTERNS_H

#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fp4::detail {

/// Applies the best matching pattern of `patterns` to `op` alone, once;
/// match failures and changes go to `listener`.
inline LogicalResult applyPatternsOnce(Operation *op,
                                       const FrozenRewritePatternSet &patterns,
                                       RewriterBase::Listener *listener) {
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  PatternRewriter rewriter(op->getContext());
  rewriter.setListener(listener);
  rewriter.setInsertionPoint(op);
  return applicator.matchAndRewrite(op, rewriter);
}

/// What an fp4.matmul's recipe says for one accuracy pass.
enum class RecipeChoice {
  PassOptions, ///< no fp4.recipe: the pass's own options apply
  Declined,    ///< its recipe does not ask for the pass
  Options,     ///< the recipe's entry, read into the options
  Invalid,     ///< an entry the pass cannot read (error emitted on the op)
};

/// Reads the `key` entry of `op`'s fp4.recipe with `read` into `options`
/// (and the entry into `entry`). A declined op gets the remark
/// `<remarkPrefix>its fp4.recipe does not ask for <pass>` when `remarks`;
/// an unreadable entry an error naming the pass.
template <typename Options>
RecipeChoice readRecipeChoice(Operation *op, StringRef key, StringRef pass,
                              FailureOr<Options> (*read)(DictionaryAttr,
                                                         std::string &),
                              bool remarks, StringRef remarkPrefix,
                              Options &options, DictionaryAttr &entry) {
  std::optional<DictionaryAttr> found = getRecipeEntry(op, key);
  if (!found)
    return RecipeChoice::PassOptions;
  if (!*found) {
    if (remarks)
      op->emitRemark() << remarkPrefix << "its fp4.recipe does not ask for "
                       << pass;
    return RecipeChoice::Declined;
  }
  std::string error;
  FailureOr<Options> parsed = read(*found, error);
  if (failed(parsed)) {
    op->emitOpError() << pass << ": invalid fp4.recipe: " << error;
    return RecipeChoice::Invalid;
  }
  options = *parsed;
  entry = *found;
  return RecipeChoice::Options;
}

/// Pattern sets keyed by the recipe entry they were built from.
class RecipePatternCache {
public:
  template <typename Options>
  FrozenRewritePatternSet
  get(Attribute entry, const Options &options,
      void (*populate)(RewritePatternSet &, const Options &)) {
    auto it = cache.find(entry);
    if (it != cache.end())
      return it->second;
    RewritePatternSet set(entry.getContext());
    populate(set, options);
    FrozenRewritePatternSet frozen(std::move(set));
    cache.try_emplace(entry, frozen);
    return frozen;
  }
  void clear() { cache.clear(); }

private:
  llvm::DenseMap<Attribute, FrozenRewritePatternSet> cache;
};

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_RECIPEPATTERNS_H
