//===- MatchFailureRemarks.h - pattern failures as remarks ------*- C++ -*-===//
//
// The fp4 rewrite passes accept `remarks=true` to tell the user why an op was
// left alone: a rewriter listener turns each pattern's notifyMatchFailure
// reason into a remark on that op, prefixed with what did not happen
// ("not quantized: ...").
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_TRANSFORMS_MATCHFAILUREREMARKS_H
#define FP4_LIB_DIALECT_FP4_TRANSFORMS_MATCHFAILUREREMARKS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::fp4::detail {

struct MatchFailureRemarks final : RewriterBase::Listener {
  explicit MatchFailureRemarks(StringRef prefix) : prefix(prefix.str()) {}

  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic reason(loc, DiagnosticSeverity::Remark);
    reasonCallback(reason);
    emitRemark(loc) << prefix << reason.str();
  }

private:
  std::string prefix;
};

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_MATCHFAILUREREMARKS_H
