//===- FuzzerContext.h - the MLIRContext shared by the libFuzzer targets --===//
//
// One context per process (creating one per input would dominate the run
// time), with every dialect fp4 IR uses, no threads (libFuzzer runs inputs
// one at a time) and a diagnostic handler that drops every diagnostic: bad
// input is expected to be diagnosed, only a crash, a sanitizer report or a
// broken round trip is a finding. The context is replaced every
// kRecycleAfter inputs so uniqued attributes do not grow without bound.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FUZZ_FUZZERCONTEXT_H
#define FP4_TOOLS_FUZZ_FUZZERCONTEXT_H

#include "fp4/InitAll.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"

#include <cstdint>
#include <memory>
#include <string>

namespace fp4fuzz {

class FuzzerContext {
public:
  mlir::MLIRContext &get() {
    if (!context || ++uses > kRecycleAfter) {
      handler.reset();
      context.reset();
      mlir::DialectRegistry registry;
      mlir::registerAllDialects(registry);
      mlir::fp4::registerAllDialects(registry);
      context = std::make_unique<mlir::MLIRContext>(
          registry, mlir::MLIRContext::Threading::DISABLED);
      context->loadAllAvailableDialects();
      handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
          context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
      uses = 0;
    }
    return *context;
  }

private:
  static constexpr unsigned kRecycleAfter = 20000;
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  unsigned uses = 0;
};

/// The input as text: libFuzzer inputs are bytes and may contain NULs,
/// which the MLIR parser (a null-terminated buffer) treats as the end.
inline std::string asText(const uint8_t *data, size_t size) {
  return std::string(reinterpret_cast<const char *>(data), size);
}

/// A finding that is not a crash: abort so libFuzzer saves the input.
[[noreturn]] void fail(const char *what, const std::string &input,
                       const std::string &printed);

} // namespace fp4fuzz

#endif // FP4_TOOLS_FUZZ_FUZZERCONTEXT_H
