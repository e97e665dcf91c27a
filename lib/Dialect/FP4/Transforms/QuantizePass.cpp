//===- QuantizePass.cpp - the fp4-quantize pass ---------------------------===//
//
// Parses the options and applies populateFP4QuantizePatterns once to every
// op; with remarks=true each contraction left alone gets a remark saying why.
//
//===----------------------------------------------------------------------===//

#include "MatchFailureRemarks.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Transforms/PassStatistics.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <array>

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4QUANTIZE
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

FailureOr<QuantSchemeAttrInterface>
mlir::fp4::parseQuantScheme(MLIRContext *context, StringRef text,
                            std::string &error) {
  text = text.trim();
  // A bare name (`nvfp4`, `nvfp4<four_over_six = true>`) stands for the fp4
  // attribute of that mnemonic, so any scheme, present or future, has a short
  // name without a list of them here.
  bool shortName = !text.empty() && llvm::isAlpha(text.front());
  std::string source = shortName ? "#fp4." + text.str() : text.str();
  std::string parserMessage;
  Attribute attr;
  {
    // parseAttribute reports through the context; keep the message for one
    // error that also says which option was wrong.
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (parserMessage.empty())
        parserMessage = diag.str();
      return success();
    });
    attr = parseAttribute(source, context);
  }
  auto scheme = dyn_cast_if_present<QuantSchemeAttrInterface>(attr);
  if (scheme)
    return scheme;
  llvm::raw_string_ostream os(error);
  os << "invalid scheme '" << text << "': ";
  if (!attr)
    os << parserMessage;
  else
    os << attr << " is not a quantization scheme attribute";
  os << "; expected a scheme attribute such as '#fp4.nvfp4<four_over_six = "
        "true>' or a short name (mxfp4, nvfp4, hif4, mxfp4_macro)";
  return failure();
}

FailureOr<QuantizeOperands> mlir::fp4::parseQuantizeOperands(StringRef text) {
  if (std::optional<QuantizeOperands> value =
          parseEnumName<QuantizeOperands>(kQuantizeOperandsNames, text))
    return *value;
  return failure();
}

namespace {

struct FP4QuantizePass final
    : mlir::fp4::impl::FP4QuantizeBase<FP4QuantizePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    // Option errors are reported by runOnOperation, on the IR, where the user
    // sees them with a location.
    optionError.clear();
    options = QuantizeOptions();
    fileRecipe.reset();
    if (!recipe.empty()) {
      if (scheme.hasValue() || operands.hasValue()) {
        optionError = "recipe= chooses the scheme and operands per "
                      "contraction; drop scheme= / operands=";
        return success();
      }
      FailureOr<Recipe> loaded = Recipe::load(context, recipe, optionError);
      if (failed(loaded))
        return success();
      fileRecipe = std::make_shared<Recipe>(std::move(*loaded));
    }
    FailureOr<QuantSchemeAttrInterface> parsedScheme =
        parseQuantScheme(context, scheme, optionError);
    if (failed(parsedScheme))
      return success();
    options.scheme = *parsedScheme;
    options.operands = operands;
    options.activationProducts = activationProducts;
    options.onSkip = [this](QuantizeSkip why) {
      ++skippedThisRun[static_cast<int>(why)];
      // Names and descriptions as declared in Passes.td (fp4's record of
      // the statistics, fp4/Transforms/PassStatistics.h).
      switch (why) {
      case QuantizeSkip::Shape:
        fp4::addToStatistic(*this, numSkippedShape, "skipped-shape",
                            "Contractions left unchanged: K dynamic, empty "
                            "or not a multiple of the scheme's blocks");
        break;
      case QuantizeSkip::ElementType:
        fp4::addToStatistic(*this, numSkippedElementType,
                            "skipped-element-type",
                            "Contractions left unchanged: an operand is not "
                            "f32/bf16/f16");
        break;
      case QuantizeSkip::Form:
        fp4::addToStatistic(*this, numSkippedForm, "skipped-form",
                            "Contractions left unchanged: not a matrix "
                            "product fp4.matmul takes (maps, dimensions, "
                            "body)");
        break;
      case QuantizeSkip::Excluded:
        fp4::addToStatistic(*this, numSkippedExcluded, "skipped-excluded",
                            "Contractions left in float by choice (recipe, "
                            "operand kind)");
        break;
      }
    };
    if (fileRecipe)
      patterns = buildPatterns(context, fileRecipe);
    else
      patterns = buildPatterns(context, nullptr);
    return success();
  }

  /// The quantize patterns, choosing per contraction with `recipe` if given.
  FrozenRewritePatternSet buildPatterns(MLIRContext *context,
                                        std::shared_ptr<Recipe> recipe) {
    QuantizeOptions withRecipe = options;
    if (recipe)
      withRecipe.select = [recipe](linalg::LinalgOp, const ContractionInfo &info,
                                   std::string &reason) {
        return recipe->select(info, reason);
      };
    RewritePatternSet set(context);
    populateFP4QuantizePatterns(set, withRecipe);
    return FrozenRewritePatternSet(std::move(set));
  }

  /// The module's fp4.recipe dictionary, used when neither recipe= nor
  /// scheme= is given.
  LogicalResult getAttributeRecipe(Operation *root,
                                   std::optional<FrozenRewritePatternSet> &result) {
    if (!recipe.empty() || scheme.hasValue())
      return success();
    Operation *holder = root;
    while (holder && !holder->getAttr(kRecipeAttrName))
      holder = holder->getParentOp();
    if (!holder)
      return success();
    auto dict = holder->getAttrOfType<DictionaryAttr>(kRecipeAttrName);
    std::string error;
    FailureOr<Recipe> parsed =
        dict ? Recipe::fromAttribute(dict, "fp4.recipe attribute", error)
             : FailureOr<Recipe>(failure());
    if (failed(parsed)) {
      holder->emitError("fp4-quantize: ")
          << (dict ? error
                   : std::string("fp4.recipe attribute: expected a "
                                 "dictionary (docs/Recipes.md)"));
      return failure();
    }
    result = buildPatterns(root->getContext(),
                           std::make_shared<Recipe>(std::move(*parsed)));
    return success();
  }

  void runOnOperation() override {
    if (!optionError.empty()) {
      emitError(getOperation()->getLoc()) << "fp4-quantize: " << optionError;
      return signalPassFailure();
    }
    Operation *root = getOperation();
    std::optional<FrozenRewritePatternSet> attributePatterns;
    if (failed(getAttributeRecipe(root, attributePatterns)))
      return signalPassFailure();
    auto countMatmuls = [&] {
      int64_t n = 0;
      root->walk([&](MatmulOp) { ++n; });
      return n;
    };
    int64_t before = countMatmuls();
    skippedThisRun.fill(0);
    fp4::detail::MatchFailureRemarks listener("not quantized: ", remarks);
    walkAndApplyPatterns(
        root, attributePatterns ? *attributePatterns : patterns,
        &listener);
    int64_t quantized = countMatmuls() - before;
    fp4::addToStatistic(*this, numQuantized, "quantized",
                        "Contractions rewritten to fp4.matmul", quantized);
    // remarks=true already reports each op left alone.
    if (!remarks)
      warnAboutSkipped(root, quantized, listener);
  }

  /// One warning when anything the user asked for was not done: nothing to
  /// quantize at all, or contractions left unchanged (with how many per
  /// reason and the first reason).
  void warnAboutSkipped(Operation *root, int64_t quantized,
                        const fp4::detail::MatchFailureRemarks &listener) {
    int64_t skipped = listener.failures;
    int64_t excluded = skippedThisRun[int(QuantizeSkip::Excluded)];
    // Ops left in float by choice alone are what was asked for.
    if (skipped == excluded && quantized > 0)
      return;
    // On the first op left unchanged (or the root's location), without the
    // op printed: the note would be the whole module.
    Location loc = root->getLoc();
    if (listener.firstLoc)
      loc = *listener.firstLoc;
    else if (root->getNumRegions() && !root->getRegion(0).empty() &&
             !root->getRegion(0).front().empty())
      loc = root->getRegion(0).front().front().getLoc();
    InFlightDiagnostic diag = emitWarning(loc, "fp4-quantize: ");
    if (skipped == 0) {
      diag << "the input has no contraction to quantize (linalg.matmul, "
              "batch_matmul, contract or a generic multiply-add)";
      return;
    }
    diag << "quantized " << quantized << " of " << quantized + skipped
         << " contractions; " << skipped << " left unchanged (";
    StringRef sep = "";
    for (auto [count, what] :
         {std::pair{skippedThisRun[int(QuantizeSkip::Shape)], "shape"},
          std::pair{skippedThisRun[int(QuantizeSkip::ElementType)],
                    "element type"},
          std::pair{skippedThisRun[int(QuantizeSkip::Form)], "form"},
          std::pair{excluded, "excluded by choice"}})
      if (count) {
        diag << sep << count << " " << what;
        sep = ", ";
      }
    diag << "), first here: " << listener.firstReason
         << "; remarks=true gives each";
  }

private:
  FrozenRewritePatternSet patterns;
  QuantizeOptions options;
  std::shared_ptr<Recipe> fileRecipe;
  std::string optionError;
  /// Per QuantizeSkip, in the current runOnOperation (the statistics add up
  /// over every op the pass runs on).
  std::array<int64_t, 4> skippedThisRun{};
};

} // namespace
