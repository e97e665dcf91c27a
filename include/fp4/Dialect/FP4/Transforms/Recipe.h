//===- Recipe.h - per-contraction quantization recipes ----------*- C++ -*-===//
//
// A recipe (docs/Recipes.md) chooses, contraction by contraction, the scheme,
// the quantized operands and the accuracy transforms. It is read from a JSON
// file or from the equivalent `fp4.recipe` module attribute, validated once
// (every error names the file or attribute, the rule and the key), and then
// answers fp4-quantize's QuantizeOptions::select. The transforms chosen for
// an op travel on its fp4.matmul as the kRecipeAttrName dictionary, which the
// accuracy passes read with the read*Options functions below.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_RECIPE_H
#define FP4_DIALECT_FP4_TRANSFORMS_RECIPE_H

#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Regex.h"

#include <memory>
#include <vector>

namespace mlir::fp4 {

/// A `{min, max, multiple_of}` condition on one size; an unset bound holds.
struct SizeCondition {
  std::optional<int64_t> min, max, multipleOf;
  bool present() const { return min || max || multipleOf; }
  /// A dynamic size satisfies only an absent condition.
  bool holds(int64_t size) const;
};

enum class OperandKind { Weight, Activation, Any };

/// A layer-name pattern: a glob (llvm::GlobPattern) or a regular expression
/// (llvm::Regex), matched against the whole name.
struct NamePattern {
  std::string text;
  std::optional<llvm::GlobPattern> glob;
  std::shared_ptr<llvm::Regex> regex;
  bool matches(StringRef name) const;
};

struct RecipeRule {
  std::string name;
  OperandKind kind = OperandKind::Weight;
  std::optional<NamePattern> layer;
  SizeCondition m, n, k, batch;
  /// `scheme: float`: the matched ops stay in float.
  bool keepFloat = false;
  /// The scheme, then the fallbacks, in order; `float` as the last fallback
  /// sets floatWhenNoneFits.
  SmallVector<QuantSchemeAttrInterface> schemes;
  bool floatWhenNoneFits = false;
  QuantizeOperands operands = QuantizeOperands::Both;
  /// The accuracy transforms asked for (keys rotate, macro_scale,
  /// outlier_fallback, residual), validated; `false` entries removed.
  DictionaryAttr transforms;

  /// Whether the rule selects a contraction.
  bool matches(const ContractionInfo &info) const;
};

struct Recipe {
  /// Where it came from, for diagnostics: `recipe 'path'` or
  /// `fp4.recipe attribute`.
  std::string origin;
  /// `ignore` then `ignore_regex`.
  std::vector<NamePattern> ignore;
  std::vector<RecipeRule> rules;

  /// Reads and validates a JSON recipe file. On failure `error` says why,
  /// naming the file, the rule and the key (JSON syntax errors with their
  /// line and column). Parses schemes through parseQuantScheme: call it where
  /// no other thread emits diagnostics on `context`.
  static FailureOr<Recipe> load(MLIRContext *context, StringRef path,
                                std::string &error);
  /// The same from the attribute form (a module's kRecipeAttrName).
  static FailureOr<Recipe> fromAttribute(DictionaryAttr attr,
                                         StringRef origin, std::string &error);

  /// fp4-quantize's choice for a contraction: the first matching rule's, or
  /// std::nullopt with the reason (ignored, no rule, `scheme: float`).
  std::optional<QuantizeChoice> select(const ContractionInfo &info,
                                       std::string &reason) const;
};

/// Converts parsed JSON into the attribute form: objects to dictionaries,
/// arrays to array attributes, integers to i64, other numbers to f64.
/// Fails (with the JSON path in `error`) on null.
FailureOr<Attribute> convertJSONToAttribute(MLIRContext *context,
                                            StringRef json, std::string &error);

//===----------------------------------------------------------------------===//
// The accuracy passes' options: checks shared by the passes and recipes, and
// the readers of an fp4.matmul's recipe dictionary entries.
//===----------------------------------------------------------------------===//

/// Empty when valid, else the message (the passes prefix their name).
std::string checkRotateOptions(const RotateOptions &options);
std::string checkOutlierFallbackOptions(const OutlierFallbackOptions &options);
std::string checkResidualOptions(const ResidualOptions &options);
std::string checkMacroScaleOptions(const MacroScaleOptions &options,
                                   MLIRContext *context);

/// Each reads the entry of its pass (`rotate`: size, mode, seed, cross_block;
/// `macro_scale`: macro_block, search; `outlier_fallback`: mode, k,
/// block_size, operands, threshold; `residual`: sparsity, k, block_size,
/// operands), absent keys taking the pass defaults, and checks it; on failure
/// `error` names the key. Modes that need calibration data (two-level,
/// static-channels) are refused: recipes do not carry calibration files.
FailureOr<RotateOptions> readRotateOptions(DictionaryAttr entry,
                                           std::string &error);
FailureOr<MacroScaleOptions> readMacroScaleOptions(DictionaryAttr entry,
                                                   std::string &error);
FailureOr<OutlierFallbackOptions>
readOutlierFallbackOptions(DictionaryAttr entry, std::string &error);
FailureOr<ResidualOptions> readResidualOptions(DictionaryAttr entry,
                                               std::string &error);

/// The recipe choice of an fp4.matmul for the accuracy pass owning `key`:
/// std::nullopt when the op has no kRecipeAttrName (the pass's own options
/// apply), a null dictionary when its recipe does not ask for the pass, else
/// the entry.
std::optional<DictionaryAttr> getRecipeEntry(Operation *matmul, StringRef key);

} // namespace mlir::fp4

#endif // FP4_DIALECT_FP4_TRANSFORMS_RECIPE_H
