//===- OpParserFuzzer.cpp - libFuzzer target: parse + verify fp4 IR -------===//
//
// Parses the input as a module (which runs every op verifier) and, when it
// parses, prints it in the custom and the generic form and parses both
// back: the fp4 ops' assembly formats, custom printers and verifiers must
// agree (what verifies prints to text that parses and verifies again).
//
//===----------------------------------------------------------------------===//

#include "FuzzerContext.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

namespace {

std::string print(mlir::ModuleOp module, bool generic) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  mlir::OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module.print(os, flags);
  return printed;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fp4fuzz::FuzzerContext holder;
  mlir::MLIRContext &context = holder.get();
  std::string text = fp4fuzz::asText(data, size);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return 0;
  for (bool generic : {false, true}) {
    std::string printed = print(*module, generic);
    mlir::OwningOpRef<mlir::ModuleOp> again =
        mlir::parseSourceString<mlir::ModuleOp>(printed, &context);
    if (!again)
      fp4fuzz::fail(generic ? "generic form does not parse back"
                            : "custom form does not parse back",
                    text, printed);
    if (failed(mlir::verify(*again)))
      fp4fuzz::fail("printed module does not verify", text, printed);
  }
  return 0;
}
