//===- AttrTypeParserFuzzer.cpp - libFuzzer target: fp4 attrs and types ---===//
//
// Parses the input as an attribute and as a type. Whatever parses must print
// and parse back to the same uniqued object: the scheme attributes
// (#fp4.mxfp4<...>, #fp4.nvfp4, #fp4.hif4, #fp4.mxfp4_macro) and
// !fp4.tensor carry custom parsers, printers and verifiers, and a printer
// that writes what its parser rejects breaks every pipeline that prints IR.
//
//===----------------------------------------------------------------------===//

#include "FuzzerContext.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Types.h"
#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fp4fuzz::FuzzerContext holder;
  mlir::MLIRContext &context = holder.get();
  std::string text = fp4fuzz::asText(data, size);

  size_t consumed = 0;
  if (mlir::Attribute attr =
          mlir::parseAttribute(text, &context, mlir::Type(), &consumed)) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    attr.print(os);
    if (mlir::parseAttribute(printed, &context) != attr)
      fp4fuzz::fail("attribute does not round-trip", text, printed);
  }
  if (mlir::Type type = mlir::parseType(text, &context, &consumed)) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    type.print(os);
    if (mlir::parseType(printed, &context) != type)
      fp4fuzz::fail("type does not round-trip", text, printed);
  }
  return 0;
}
