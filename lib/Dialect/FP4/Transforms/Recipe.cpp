//===- Recipe.cpp - per-contraction quantization recipes ------------------===//
//
// A JSON recipe is converted to its attribute form first, so the file and the
// `fp4.recipe` module attribute share one validation: every key is read
// through an EntryReader, which checks its type and makes any key left
// unread an error, and every message names the rule and the key.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/Transforms/Recipe.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/Residual.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::fp4;

//===----------------------------------------------------------------------===//
// JSON to attributes
//===----------------------------------------------------------------------===//

static FailureOr<Attribute> convert(MLIRContext *context,
                                    const llvm::json::Value &value,
                                    const std::string &path,
                                    std::string &error) {
  Builder b(context);
  switch (value.kind()) {
  case llvm::json::Value::Null:
    error = (path.empty() ? std::string("the recipe") : path) +
            ": null is not a valid value";
    return failure();
  case llvm::json::Value::Boolean:
    return Attribute(b.getBoolAttr(*value.getAsBoolean()));
  case llvm::json::Value::Number:
    if (std::optional<int64_t> integer = value.getAsInteger())
      return Attribute(b.getI64IntegerAttr(*integer));
    return Attribute(b.getF64FloatAttr(*value.getAsNumber()));
  case llvm::json::Value::String:
    return Attribute(b.getStringAttr(*value.getAsString()));
  case llvm::json::Value::Array: {
    SmallVector<Attribute> elements;
    for (auto [index, element] : llvm::enumerate(*value.getAsArray())) {
      FailureOr<Attribute> converted = convert(
          context, element, path + "[" + std::to_string(index) + "]", error);
      if (failed(converted))
        return failure();
      elements.push_back(*converted);
    }
    return Attribute(b.getArrayAttr(elements));
  }
  case llvm::json::Value::Object: {
    SmallVector<NamedAttribute> entries;
    for (const auto &[key, element] : *value.getAsObject()) {
      FailureOr<Attribute> converted = convert(
          context, element, path.empty() ? key.str() : path + "." + key.str(),
          error);
      if (failed(converted))
        return failure();
      entries.push_back(b.getNamedAttr(key.str(), *converted));
    }
    return Attribute(b.getDictionaryAttr(entries));
  }
  }
  llvm_unreachable("unknown JSON kind");
}

FailureOr<Attribute> mlir::fp4::convertJSONToAttribute(MLIRContext *context,
                                                       StringRef json,
                                                       std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    // ParseError prints "[line:column, byte=offset]: message".
    error = llvm::toString(parsed.takeError());
    return failure();
  }
  return convert(context, *parsed, "", error);
}

//===----------------------------------------------------------------------===//
// Reading dictionaries
//===----------------------------------------------------------------------===//

namespace {

/// Reads the keys of one dictionary with type checks; `finish` makes every
/// key that was not read an error (typos never pass silently). The first
/// error is kept in `error` as `<prefix><key>: <message>`.
class EntryReader {
public:
  EntryReader(DictionaryAttr dict, std::string prefix, std::string &error)
      : dict(dict), prefix(std::move(prefix)), error(error) {}

  bool failed() const { return !error.empty(); }

  void fail(StringRef key, const Twine &message) {
    if (error.empty())
      error = (prefix + key + ": " + message).str();
  }

  Attribute get(StringRef key) {
    known.push_back(key);
    return dict ? dict.get(key) : Attribute();
  }

  std::optional<int64_t> getInt(StringRef key) {
    Attribute attr = get(key);
    if (!attr)
      return std::nullopt;
    auto integer = dyn_cast<IntegerAttr>(attr);
    if (!integer || isa<BoolAttr>(attr) ||
        !integer.getType().isSignlessInteger(64)) {
      fail(key, "expected an integer, got " + describe(attr));
      return std::nullopt;
    }
    return integer.getInt();
  }

  std::optional<double> getNumber(StringRef key) {
    Attribute attr = get(key);
    if (!attr)
      return std::nullopt;
    if (auto number = dyn_cast<FloatAttr>(attr))
      return number.getValueAsDouble();
    if (auto integer = dyn_cast<IntegerAttr>(attr); integer && !isa<BoolAttr>(attr))
      return static_cast<double>(integer.getInt());
    fail(key, "expected a number, got " + describe(attr));
    return std::nullopt;
  }

  std::optional<bool> getBool(StringRef key) {
    Attribute attr = get(key);
    if (!attr)
      return std::nullopt;
    if (auto flag = dyn_cast<BoolAttr>(attr))
      return flag.getValue();
    fail(key, "expected true or false, got " + describe(attr));
    return std::nullopt;
  }

  std::optional<StringRef> getString(StringRef key) {
    Attribute attr = get(key);
    if (!attr)
      return std::nullopt;
    if (auto text = dyn_cast<StringAttr>(attr))
      return text.getValue();
    fail(key, "expected a string, got " + describe(attr));
    return std::nullopt;
  }

  /// An array whose elements are all strings.
  std::optional<SmallVector<StringRef>> getStrings(StringRef key) {
    Attribute attr = get(key);
    if (!attr)
      return std::nullopt;
    auto array = dyn_cast<ArrayAttr>(attr);
    SmallVector<StringRef> result;
    for (Attribute element : array ? array.getValue() : ArrayRef<Attribute>())
      if (auto text = dyn_cast<StringAttr>(element))
        result.push_back(text.getValue());
    if (!array || result.size() != array.size()) {
      fail(key, "expected an array of strings, got " + describe(attr));
      return std::nullopt;
    }
    return result;
  }

  DictionaryAttr getDict(StringRef key) {
    Attribute attr = get(key);
    if (!attr)
      return nullptr;
    if (auto entry = dyn_cast<DictionaryAttr>(attr))
      return entry;
    fail(key, "expected an object, got " + describe(attr));
    return nullptr;
  }

  LogicalResult finish() {
    if (dict)
      for (NamedAttribute entry : dict)
        if (!llvm::is_contained(known, entry.getName().getValue()))
          fail(entry.getName().getValue(),
               "unknown key (expected one of: " + llvm::join(known, ", ") +
                   ")");
    return failure(failed());
  }

  static std::string describe(Attribute attr) {
    if (isa<BoolAttr>(attr))
      return "a boolean";
    if (isa<IntegerAttr, FloatAttr>(attr))
      return "a number";
    if (isa<StringAttr>(attr))
      return "a string";
    if (isa<ArrayAttr>(attr))
      return "an array";
    if (isa<DictionaryAttr>(attr))
      return "an object";
    std::string text;
    llvm::raw_string_ostream(text) << attr;
    return text;
  }

private:
  DictionaryAttr dict;
  std::string prefix;
  std::string &error;
  SmallVector<StringRef> known;
};

} // namespace

//===----------------------------------------------------------------------===//
// The accuracy passes' options
//===----------------------------------------------------------------------===//

std::string mlir::fp4::checkRotateOptions(const RotateOptions &options) {
  if (!numerics::isPowerOfTwo(options.size))
    return "size " + std::to_string(options.size) + " is not a power of two";
  if (options.size < numerics::kHadamardMinBlockSize ||
      options.size > numerics::kHadamardMaxSize)
    return "size " + std::to_string(options.size) + " is outside [" +
           std::to_string(numerics::kHadamardMinBlockSize) + ", " +
           std::to_string(numerics::kHadamardMaxSize) + "]";
  return "";
}

std::string
mlir::fp4::checkOutlierFallbackOptions(const OutlierFallbackOptions &options) {
  if (options.mode != OutlierMode::BlockTopK)
    return "";
  int64_t k = options.k, blockSize = options.blockSize;
  if (k != 1 && k != 2 && k != 4)
    return "k = " + std::to_string(k) + " is not 1, 2 or 4";
  if (blockSize != 0 && (blockSize < k || blockSize > 128))
    return "block-size = " + std::to_string(blockSize) +
           " is outside [k, 128] = [" + std::to_string(k) +
           ", 128] (in-block indices are i8)";
  return "";
}

std::string mlir::fp4::checkResidualOptions(const ResidualOptions &options) {
  if (options.blockSize < 1 || options.blockSize > 128)
    return "block-size = " + std::to_string(options.blockSize) +
           " is outside [1, 128] (in-block indices are i8)";
  if (options.k < 1 || options.k > options.blockSize)
    return "k = " + std::to_string(options.k) +
           " is outside [1, block-size] = [1, " +
           std::to_string(options.blockSize) + "]";
  return "";
}

std::string mlir::fp4::checkMacroScaleOptions(const MacroScaleOptions &options,
                                              MLIRContext *context) {
  // The options are the parameters of the target scheme: its verifier says
  // what is wrong with them. Caught at a location private to this call.
  Location probe = OpaqueLoc::get(&options, UnknownLoc::get(context));
  std::string message;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    if (diag.getLocation() != probe)
      return failure();
    message = diag.str();
    return success();
  });
  if (succeeded(MXFP4MacroAttr::verify(
          [&] { return emitError(probe); }, options.macroBlock, options.search,
          ScaleRounding::Floor, ElementRounding::NearestEven, 0)))
    return "";
  return message;
}

FailureOr<RotateOptions> mlir::fp4::readRotateOptions(DictionaryAttr entry,
                                                      std::string &error) {
  EntryReader reader(entry, "rotate.", error);
  RotateOptions options;
  if (std::optional<int64_t> size = reader.getInt("size"))
    options.size = *size;
  if (std::optional<StringRef> mode = reader.getString("mode")) {
    FailureOr<RotationMode> parsed = parseRotationMode(*mode);
    if (failed(parsed) || *parsed == RotationMode::TwoLevel)
      reader.fail("mode", "'" + *mode +
                              "' is not randomized or deterministic (two-level "
                              "needs calibration data: run fp4-rotate "
                              "mode=two-level without a recipe)");
    else
      options.mode = *parsed;
  }
  if (std::optional<int64_t> seed = reader.getInt("seed")) {
    if (*seed < 0 || *seed > int64_t(UINT32_MAX))
      reader.fail("seed", Twine(*seed) + " is outside [0, 2^32)");
    options.seed = static_cast<uint32_t>(*seed);
  }
  if (std::optional<bool> crossBlock = reader.getBool("cross_block"))
    options.crossBlock = *crossBlock;
  if (failed(reader.finish()))
    return failure();
  if (std::string message = checkRotateOptions(options); !message.empty()) {
    reader.fail("size", message);
    return failure();
  }
  return options;
}

FailureOr<MacroScaleOptions>
mlir::fp4::readMacroScaleOptions(DictionaryAttr entry, std::string &error) {
  EntryReader reader(entry, "macro_scale.", error);
  MacroScaleOptions options;
  if (std::optional<int64_t> macroBlock = reader.getInt("macro_block"))
    options.macroBlock = *macroBlock;
  if (std::optional<int64_t> search = reader.getInt("search"))
    options.search = *search;
  if (failed(reader.finish()))
    return failure();
  if (std::string message =
          checkMacroScaleOptions(options, entry.getContext());
      !message.empty()) {
    reader.fail("macro_block", message);
    return failure();
  }
  return options;
}

FailureOr<OutlierFallbackOptions>
mlir::fp4::readOutlierFallbackOptions(DictionaryAttr entry,
                                      std::string &error) {
  EntryReader reader(entry, "outlier_fallback.", error);
  OutlierFallbackOptions options;
  if (std::optional<StringRef> mode = reader.getString("mode"))
    if (*mode != "block-topk")
      reader.fail("mode", "'" + *mode +
                              "' is not block-topk (static-channels needs "
                              "calibration data: run fp4-outlier-fallback "
                              "mode=static-channels without a recipe)");
  if (std::optional<int64_t> k = reader.getInt("k"))
    options.k = *k;
  if (std::optional<int64_t> blockSize = reader.getInt("block_size"))
    options.blockSize = *blockSize;
  if (std::optional<StringRef> operands = reader.getString("operands")) {
    FailureOr<CorrectionOperands> parsed = parseCorrectionOperands(*operands);
    if (failed(parsed))
      reader.fail("operands", "'" + *operands +
                                  "' is not both, activations or weights");
    else
      options.operands = *parsed;
  }
  if (failed(reader.finish()))
    return failure();
  if (std::string message = checkOutlierFallbackOptions(options);
      !message.empty()) {
    reader.fail(message.front() == 'k' ? "k" : "block_size", message);
    return failure();
  }
  return options;
}

FailureOr<ResidualOptions> mlir::fp4::readResidualOptions(DictionaryAttr entry,
                                                          std::string &error) {
  EntryReader reader(entry, "residual.", error);
  ResidualOptions options;
  StringRef sparsity = reader.getString("sparsity").value_or("2:4");
  std::optional<int64_t> k = reader.getInt("k");
  std::optional<int64_t> blockSize = reader.getInt("block_size");
  if (std::optional<StringRef> operands = reader.getString("operands")) {
    FailureOr<CorrectionOperands> parsed = parseCorrectionOperands(*operands);
    if (failed(parsed))
      reader.fail("operands", "'" + *operands +
                                  "' is not activations, weights or both");
    else
      options.operands = *parsed;
  }
  if (failed(reader.finish()))
    return failure();
  if (sparsity == "2:4") {
    if (k || blockSize) {
      reader.fail(k ? "k" : "block_size",
                  "applies to sparsity topk only (2:4 keeps 2 of every 4)");
      return failure();
    }
    options.blockSize = numerics::kTwoFourBlock;
    options.k = numerics::kTwoFourKeep;
  } else if (sparsity == "topk") {
    options.blockSize = blockSize.value_or(32);
    options.k = k.value_or(4);
  } else {
    reader.fail("sparsity", "'" + sparsity + "' is not 2:4 or topk");
    return failure();
  }
  if (std::string message = checkResidualOptions(options); !message.empty()) {
    reader.fail(message.front() == 'k' ? "k" : "block_size", message);
    return failure();
  }
  return options;
}

std::optional<DictionaryAttr> mlir::fp4::getRecipeEntry(Operation *matmul,
                                                        StringRef key) {
  auto recipe = matmul->getAttrOfType<DictionaryAttr>(kRecipeAttrName);
  if (!recipe)
    return std::nullopt;
  return recipe.getAs<DictionaryAttr>(key);
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

bool SizeCondition::holds(int64_t size) const {
  if (!present())
    return true;
  if (ShapedType::isDynamic(size))
    return false;
  return (!min || size >= *min) && (!max || size <= *max) &&
         (!multipleOf || size % *multipleOf == 0);
}

bool NamePattern::matches(StringRef name) const {
  return glob ? glob->match(name) : regex->match(name);
}

bool RecipeRule::matches(const ContractionInfo &info) const {
  if (kind == OperandKind::Weight && !info.weightRhs)
    return false;
  if (kind == OperandKind::Activation && info.weightRhs)
    return false;
  if (layer && (info.layer.empty() || !layer->matches(info.layer)))
    return false;
  return m.holds(info.m) && n.holds(info.n) && k.holds(info.k) &&
         batch.holds(info.batch);
}

/// A glob (`regex` false) or regular expression, anchored to the whole name.
static std::optional<NamePattern> makeNamePattern(StringRef text, bool regex,
                                                  std::string &message) {
  NamePattern pattern;
  pattern.text = text.str();
  if (regex) {
    pattern.regex =
        std::make_shared<llvm::Regex>(("^(" + text + ")$").str());
    if (!pattern.regex->isValid(message))
      return std::nullopt;
    return pattern;
  }
  llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(text);
  if (!glob) {
    message = llvm::toString(glob.takeError());
    return std::nullopt;
  }
  pattern.glob = std::move(*glob);
  return pattern;
}

static SizeCondition readSizeCondition(EntryReader &parent, StringRef key,
                                       const std::string &prefix,
                                       std::string &error) {
  SizeCondition condition;
  DictionaryAttr entry = parent.getDict(key);
  if (!entry)
    return condition;
  EntryReader reader(entry, prefix + "match." + key.str() + ".", error);
  condition.min = reader.getInt("min");
  condition.max = reader.getInt("max");
  condition.multipleOf = reader.getInt("multiple_of");
  if (succeeded(reader.finish()) && condition.multipleOf &&
      *condition.multipleOf < 1)
    reader.fail("multiple_of", Twine(*condition.multipleOf) +
                                   " is not a positive integer");
  return condition;
}

/// Validates a rule's transform entries and returns those asked for (`false`
/// entries dropped). `macro_scale.macro_block` may be "fit".
static DictionaryAttr readTransforms(MLIRContext *context, EntryReader &rule,
                                     const std::string &prefix,
                                     std::string &error) {
  SmallVector<NamedAttribute> kept;
  for (StringRef key : {"rotate", "macro_scale", "outlier_fallback",
                        "residual"}) {
    Attribute attr = rule.get(key);
    if (!attr)
      continue;
    if (auto flag = dyn_cast<BoolAttr>(attr); flag && !flag.getValue())
      continue;
    auto entry = dyn_cast<DictionaryAttr>(attr);
    if (!entry) {
      rule.fail(key, "expected an object (its options, {} for the defaults) "
                     "or false, got " + EntryReader::describe(attr));
      return nullptr;
    }
    kept.emplace_back(StringAttr::get(entry.getContext(), key), entry);
    // "fit" is resolved per op; check the rest with a stand-in size.
    if (key == "macro_scale")
      if (auto fit = entry.getAs<StringAttr>("macro_block")) {
        if (fit.getValue() != "fit") {
          rule.fail("macro_scale.macro_block",
                    "expected an integer or \"fit\", got '" +
                        fit.getValue() + "'");
          return nullptr;
        }
        NamedAttrList resolved(entry);
        resolved.set("macro_block",
                     IntegerAttr::get(IntegerType::get(entry.getContext(), 64),
                                      0));
        entry = resolved.getDictionary(entry.getContext());
      }
    std::string message;
    bool valid = true;
    if (key == "rotate")
      valid = succeeded(readRotateOptions(entry, message));
    else if (key == "macro_scale")
      valid = succeeded(readMacroScaleOptions(entry, message));
    else if (key == "outlier_fallback")
      valid = succeeded(readOutlierFallbackOptions(entry, message));
    else
      valid = succeeded(readResidualOptions(entry, message));
    if (!valid) {
      error = prefix + message;
      return nullptr;
    }
  }
  return DictionaryAttr::get(context, kept);
}

static std::string ruleLabel(size_t index, StringRef name) {
  return "rule " + std::to_string(index) + " ('" + name.str() + "')";
}

FailureOr<Recipe> Recipe::fromAttribute(DictionaryAttr attr, StringRef origin,
                                        std::string &error) {
  MLIRContext *context = attr.getContext();
  Recipe recipe;
  recipe.origin = origin.str();
  std::string message;
  auto done = [&]() -> FailureOr<Recipe> {
    if (message.empty())
      return std::move(recipe);
    error = origin.str() + ": " + message;
    return failure();
  };
  EntryReader top(attr, "", message);
  std::optional<int64_t> version = top.getInt("version");
  if (!top.failed() && version != 1)
    top.fail("version", version ? "version " + std::to_string(*version) +
                                      " is not supported (expected 1)"
                                : std::string("missing (expected 1)"));
  for (bool regex : {false, true}) {
    StringRef key = regex ? "ignore_regex" : "ignore";
    SmallVector<StringRef> texts =
        top.getStrings(key).value_or(SmallVector<StringRef>());
    for (auto [index, text] : llvm::enumerate(texts)) {
      std::string why;
      std::optional<NamePattern> pattern = makeNamePattern(text, regex, why);
      if (!pattern)
        top.fail((key + "[" + Twine(index) + "]").str(),
                 "invalid " + Twine(regex ? "regex" : "glob") + " '" + text +
                     "': " + why);
      else
        recipe.ignore.push_back(std::move(*pattern));
    }
  }
  Attribute rulesAttr = top.get("rules");
  auto rules = dyn_cast_if_present<ArrayAttr>(rulesAttr);
  if (!rules)
    top.fail("rules", rulesAttr ? "expected an array of rules, got " +
                                      EntryReader::describe(rulesAttr)
                                : std::string("missing (an array of rules)"));
  if (failed(top.finish()))
    return done();

  for (auto [index, element] : llvm::enumerate(rules)) {
    RecipeRule rule;
    auto dict = dyn_cast<DictionaryAttr>(element);
    rule.name = "rule " + std::to_string(index);
    if (auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr())
      rule.name = name.str();
    std::string prefix = ruleLabel(index, rule.name) + ": ";
    if (!dict) {
      message = prefix + "expected an object, got " +
                EntryReader::describe(element);
      return done();
    }
    EntryReader reader(dict, prefix, message);
    (void)reader.getString("name");

    if (DictionaryAttr match = reader.getDict("match")) {
      EntryReader matchReader(match, prefix + "match.", message);
      if (std::optional<StringRef> kind = matchReader.getString("kind")) {
        if (*kind == "weight")
          rule.kind = OperandKind::Weight;
        else if (*kind == "activation")
          rule.kind = OperandKind::Activation;
        else if (*kind == "any")
          rule.kind = OperandKind::Any;
        else
          matchReader.fail("kind", "'" + *kind +
                                       "' is not weight, activation or any");
      }
      for (bool regex : {false, true}) {
        StringRef key = regex ? "layer_regex" : "layer";
        std::optional<StringRef> text = matchReader.getString(key);
        if (!text)
          continue;
        if (rule.layer) {
          matchReader.fail(key, "give either layer or layer_regex");
          continue;
        }
        std::string why;
        rule.layer = makeNamePattern(*text, regex, why);
        if (!rule.layer)
          matchReader.fail(key, "invalid " + Twine(regex ? "regex" : "glob") +
                                    " '" + *text + "': " + why);
      }
      rule.m = readSizeCondition(matchReader, "m", prefix, message);
      rule.n = readSizeCondition(matchReader, "n", prefix, message);
      rule.k = readSizeCondition(matchReader, "k", prefix, message);
      rule.batch = readSizeCondition(matchReader, "batch", prefix, message);
      if (failed(matchReader.finish()))
        return done();
    }

    std::optional<StringRef> scheme = reader.getString("scheme");
    if (!scheme && !reader.failed())
      reader.fail("scheme", "missing (a scheme such as mxfp4, or float)");
    SmallVector<StringRef> schemes;
    if (scheme)
      schemes.push_back(*scheme);
    std::optional<SmallVector<StringRef>> fallback =
        reader.getStrings("fallback");
    if (fallback)
      llvm::append_range(schemes, *fallback);
    for (auto [position, text] : llvm::enumerate(schemes)) {
      StringRef key = position == 0 ? "scheme" : "fallback";
      if (text.trim() == "float") {
        if (position == 0)
          rule.keepFloat = true;
        else if (position + 1 == schemes.size())
          rule.floatWhenNoneFits = true;
        else
          reader.fail(key, "'float' may only be the last fallback");
        continue;
      }
      std::string why;
      FailureOr<QuantSchemeAttrInterface> parsed =
          parseQuantScheme(context, text, why);
      if (failed(parsed))
        reader.fail(key, why);
      else
        rule.schemes.push_back(*parsed);
    }
    if (std::optional<StringRef> operands = reader.getString("operands")) {
      FailureOr<QuantizeOperands> parsed = parseQuantizeOperands(*operands);
      if (failed(parsed))
        reader.fail("operands",
                    "'" + *operands + "' is not weights, activations or both");
      else
        rule.operands = *parsed;
    }
    if (reader.failed())
      return done();
    rule.transforms = readTransforms(context, reader, prefix, message);
    if (failed(reader.finish()))
      return done();
    if (rule.keepFloat && (!rule.transforms.empty() || fallback))
      reader.fail("scheme", "'float' takes no fallback and no transforms");
    if (reader.failed())
      return done();
    recipe.rules.push_back(std::move(rule));
  }
  return done();
}

FailureOr<Recipe> Recipe::load(MLIRContext *context, StringRef path,
                               std::string &error) {
  std::string origin = "recipe '" + path.str() + "'";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    error = "cannot read " + origin + ": " + file.getError().message();
    return failure();
  }
  std::string message;
  FailureOr<Attribute> attr =
      convertJSONToAttribute(context, (*file)->getBuffer(), message);
  if (failed(attr)) {
    error = origin + ": " + message;
    return failure();
  }
  auto dict = dyn_cast<DictionaryAttr>(*attr);
  if (!dict) {
    error = origin + ": expected a JSON object at the top level";
    return failure();
  }
  return fromAttribute(dict, origin, error);
}

/// The largest macro-block that divides K: a multiple of 32 up to the
/// default 256, else 0 (the whole axis, which always fits).
static int64_t fitMacroBlock(int64_t k) {
  if (ShapedType::isDynamic(k))
    return 0;
  for (int64_t block = 256; block >= 32; block -= 32)
    if (k % block == 0)
      return block;
  return 0;
}

std::optional<QuantizeChoice> Recipe::select(const ContractionInfo &info,
                                             std::string &reason) const {
  if (!info.layer.empty())
    for (const NamePattern &pattern : ignore)
      if (pattern.matches(info.layer)) {
        reason = "layer '" + info.layer.str() + "' is in the ignore list of " +
                 origin + " ('" + pattern.text + "')";
        return std::nullopt;
      }
  for (auto [index, rule] : llvm::enumerate(rules)) {
    if (!rule.matches(info))
      continue;
    if (rule.keepFloat) {
      reason = "left in float by " + ruleLabel(index, rule.name) + " of " +
               origin;
      return std::nullopt;
    }
    QuantizeChoice choice;
    choice.schemes = rule.schemes;
    choice.floatWhenNoneFits = rule.floatWhenNoneFits;
    choice.operands = rule.operands;
    MLIRContext *context = rule.transforms.getContext();
    NamedAttrList entries(rule.transforms);
    if (auto macro = rule.transforms.getAs<DictionaryAttr>("macro_scale"))
      if (macro.getAs<StringAttr>("macro_block")) {
        NamedAttrList resolved(macro);
        resolved.set("macro_block",
                     IntegerAttr::get(IntegerType::get(context, 64),
                                      fitMacroBlock(info.k)));
        entries.set("macro_scale", resolved.getDictionary(context));
      }
    entries.set("rule", StringAttr::get(context, rule.name));
    if (!info.layer.empty())
      entries.set("layer", StringAttr::get(context, info.layer));
    choice.recipe = entries.getDictionary(context);
    return choice;
  }
  reason = "no rule of " + origin + " selects it (" +
           (info.weightRhs
                ? std::string("a weight product")
                : std::string("an activation x activation product: only rules "
                              "with match.kind activation or any select "
                              "those")) +
           ")";
  return std::nullopt;
}
