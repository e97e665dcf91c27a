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

/// Reads the `key` entry of `op`'s fp4.recipe for an accuracy pass with
/// `read`: into `options` and `entry` when it asks for the pass; `entry`
/// stays null when the op has no fp4.recipe (the pass's own options apply).
/// Returns false for an op the pass leaves: its recipe does not ask for the
/// pass (counted in `declined`; the remark `<remarkPrefix>its fp4.recipe does
/// not ask for <pass>` when `remarks`), or the entry cannot be read (an error
/// naming the pass on the op; `invalid` set).
template <typename Options>
bool readRecipeChoice(Operation *op, StringRef key, StringRef pass,
                      FailureOr<Options> (*read)(DictionaryAttr, std::string &),
                      bool remarks, StringRef remarkPrefix, Options &options,
                      DictionaryAttr &entry, int64_t &declined, bool &invalid) {
  entry = nullptr;
  std::optional<DictionaryAttr> found = getRecipeEntry(op, key);
  if (!found)
    return true;
  if (!*found) {
    ++declined;
    if (remarks)
      op->emitRemark() << remarkPrefix << "its fp4.recipe does not ask for "
                       << pass;
    return false;
  }
  std::string error;
  FailureOr<Options> parsed = read(*found, error);
  if (failed(parsed)) {
    op->emitOpError() << pass << ": invalid fp4.recipe: " << error;
    invalid = true;
    return false;
  }
  options = *parsed;
  entry = *found;
  return true;
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
