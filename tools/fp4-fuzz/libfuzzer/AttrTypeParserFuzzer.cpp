//===- AttrTypeParserFuzzer.cpp - libFuzzer target: fp4 attrs and types ---===//
//
// Parses the input as an attribute and as a type. Whatever parses must print
// and parse back to the same uniqued object: the scheme attributes
// (#fp4.mxfp4<...>, #fp4.nvfp4, #fp4.hif4, #fp4.mxfp4_macro) and
// !fp4.tensor carry custom parsers, printers and verifiers, and a printer
// that writes what its parser rejects breaks every pipeline that prints IR.
// The property is checked for whatever has an fp4 attribute or type in it
// (nested ones included); a purely builtin one is upstream's printer and
// parser (e.g. the empty symbol reference @"", which upstream prints as
// @<<INVALID EMPTY SYMBOL>>), not code of this project.
//
//===----------------------------------------------------------------------===//

#include "FuzzerContext.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Types.h"
#include "llvm/Support/raw_ostream.h"

namespace {

bool isFP4(mlir::Dialect &dialect) { return dialect.getNamespace() == "fp4"; }

/// Whether `root` is, or contains, an fp4 attribute or type.
template <typename T> bool involvesFP4(T root) {
  bool found = false;
  root.walk([&](mlir::Attribute a) { found |= isFP4(a.getDialect()); },
            [&](mlir::Type t) { found |= isFP4(t.getDialect()); });
  return found;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fp4fuzz::FuzzerContext holder;
  mlir::MLIRContext &context = holder.get();
  std::string text = fp4fuzz::asText(data, size);

  size_t consumed = 0;
  if (mlir::Attribute attr =
          mlir::parseAttribute(text, &context, mlir::Type(), &consumed);
      attr && involvesFP4(attr)) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    attr.print(os);
    if (mlir::parseAttribute(printed, &context) != attr)
      fp4fuzz::fail("attribute does not round-trip", text, printed);
  }
  if (mlir::Type type = mlir::parseType(text, &context, &consumed);
      type && involvesFP4(type)) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    type.print(os);
    if (mlir::parseType(printed, &context) != type)
      fp4fuzz::fail("type does not round-trip", text, printed);
  }
  return 0;
}
