//===- SchemeParameters.h - `<key = value, ...>` scheme syntax --*- C++ -*-===//
//
// Every scheme attribute prints as `#fp4.name` or `#fp4.name<k = v, ...>`
// with defaults elided and keys in any order; this one parser/printer keeps
// that syntax (and its error messages) identical across schemes.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_IR_SCHEMEPARAMETERS_H
#define FP4_LIB_DIALECT_FP4_IR_SCHEMEPARAMETERS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::fp4::detail {

class SchemeParameterParser {
public:
  SchemeParameterParser(AsmParser &parser, StringRef mnemonic)
      : parser(parser), mnemonic(mnemonic) {}

  void addInt(StringRef key, int64_t &value);
  void addUInt32(StringRef key, uint32_t &value);
  void addBool(StringRef key, bool &value);
  void addScaleRounding(StringRef key, ScaleRounding &value);
  void addElementRounding(StringRef key, ElementRounding &value);

  /// Parses an optional `<k = v, ...>` list; unknown and repeated keys are
  /// errors naming the scheme and the keys it accepts.
  ParseResult parse();

private:
  struct Entry {
    StringRef key;
    std::function<ParseResult()> parseValue;
    bool seen = false;
  };
  AsmParser &parser;
  StringRef mnemonic;
  SmallVector<Entry> entries;
};

/// Collects `key = value` strings for the non-default parameters and prints
/// them as `<...>` (nothing when all are defaults).
class SchemeParameterPrinter {
public:
  void add(StringRef key, const std::string &value) {
    items.push_back((key + " = " + value).str());
  }
  void print(AsmPrinter &printer) const;

private:
  SmallVector<std::string> items;
};

/// Common checks of the element-rounding parameters of E2M1 schemes.
LogicalResult verifyElementRounding(function_ref<InFlightDiagnostic()> emitError,
                                    StringRef mnemonic, ElementRounding rounding,
                                    uint32_t seed);

/// Shape of a component tensor: `shape` with the blocked axis divided by
/// `axisDivisor` (dynamic dimensions stay dynamic).
SmallVector<int64_t> componentShape(ArrayRef<int64_t> shape, int64_t axis,
                                    int64_t axisDivisor);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_IR_SCHEMEPARAMETERS_H
