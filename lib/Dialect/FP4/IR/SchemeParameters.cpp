//===- SchemeParameters.cpp - `<key = value, ...>` scheme syntax ----------===//

#include "SchemeParameters.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

void SchemeParameterParser::addInt(StringRef key, int64_t &value) {
  entries.push_back({key, [this, &value]() { return parser.parseInteger(value); }});
}

void SchemeParameterParser::addUInt32(StringRef key, uint32_t &value) {
  entries.push_back({key, [this, &value]() { return parser.parseInteger(value); }});
}

void SchemeParameterParser::addBool(StringRef key, bool &value) {
  entries.push_back({key, [this, &value]() -> ParseResult {
                       if (succeeded(parser.parseOptionalKeyword("true"))) {
                         value = true;
                         return success();
                       }
                       if (succeeded(parser.parseOptionalKeyword("false"))) {
                         value = false;
                         return success();
                       }
                       return parser.emitError(parser.getCurrentLocation(),
                                               "expected 'true' or 'false'");
                     }});
}

template <typename EnumT>
static ParseResult parseEnumKeyword(AsmParser &parser, EnumT &value,
                                    std::optional<EnumT> (*symbolize)(StringRef),
                                    StringRef choices) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<EnumT> parsed = symbolize(word);
  if (!parsed)
    return parser.emitError(loc) << "unknown value '" << word
                                 << "', expected one of: " << choices;
  value = *parsed;
  return success();
}

void SchemeParameterParser::addScaleRounding(StringRef key,
                                             ScaleRounding &value) {
  entries.push_back({key, [this, &value]() {
                       return parseEnumKeyword<ScaleRounding>(
                           parser, value, symbolizeScaleRounding,
                           "floor, ceil, even, rceil");
                     }});
}

void SchemeParameterParser::addElementRounding(StringRef key,
                                               ElementRounding &value) {
  entries.push_back({key, [this, &value]() {
                       return parseEnumKeyword<ElementRounding>(
                           parser, value, symbolizeElementRounding,
                           "rne, half_away, stochastic");
                     }});
}

ParseResult SchemeParameterParser::parse() {
  if (failed(parser.parseOptionalLess()))
    return success();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  do {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    auto *entry = llvm::find_if(entries, [&](const Entry &e) { return e.key == key; });
    if (entry == entries.end()) {
      InFlightDiagnostic diag = parser.emitError(loc)
                                << "unknown parameter '" << key << "' for #fp4."
                                << mnemonic << ", expected one of: ";
      llvm::interleaveComma(entries, diag, [&](const Entry &e) { diag << e.key; });
      return diag;
    }
    if (entry->seen)
      return parser.emitError(loc) << "parameter '" << key
                                   << "' given twice for #fp4." << mnemonic;
    entry->seen = true;
    if (parser.parseEqual() || entry->parseValue())
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseGreater();
}

void SchemeParameterPrinter::print(AsmPrinter &printer) const {
  if (items.empty())
    return;
  printer << "<";
  llvm::interleaveComma(items, printer.getStream());
  printer << ">";
}

LogicalResult
mlir::fp4::detail::verifyElementRounding(function_ref<InFlightDiagnostic()> emitError,
                                         StringRef mnemonic,
                                         ElementRounding rounding, uint32_t seed) {
  if (seed != 0 && rounding != ElementRounding::Stochastic)
    return emitError() << "#fp4." << mnemonic
                       << ": 'seed' is only meaningful with rounding = stochastic";
  return success();
}

SmallVector<int64_t> mlir::fp4::detail::componentShape(ArrayRef<int64_t> shape,
                                                       int64_t axis,
                                                       int64_t axisDivisor) {
  SmallVector<int64_t> result(shape);
  if (!ShapedType::isDynamic(result[axis]))
    result[axis] /= axisDivisor;
  return result;
}
