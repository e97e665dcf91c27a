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

#include <optional>
#include <string>

namespace mlir::fp4::detail {

struct MatchFailureRemarks final : RewriterBase::Listener {
  /// `emit` = false only counts (for the passes' summary warnings).
  explicit MatchFailureRemarks(StringRef prefix, bool emit = true)
      : prefix(prefix.str()), emit(emit) {}

  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic reason(loc, DiagnosticSeverity::Remark);
    reasonCallback(reason);
    if (failures++ == 0) {
      firstReason = reason.str();
      firstLoc = loc;
    }
    if (emit)
      emitRemark(loc) << prefix << reason.str();
  }

  /// Match failures seen, and the first one's reason.
  int64_t failures = 0;
  std::string firstReason;
  std::optional<Location> firstLoc;

private:
  std::string prefix;
  bool emit;
};

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_MATCHFAILUREREMARKS_H
