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

  void notifyOperationInserted(Operation *, OpBuilder::InsertPoint) override {
    ++changes;
  }
  void notifyOperationModified(Operation *) override { ++changes; }
  void notifyOperationReplaced(Operation *, ValueRange) override { ++changes; }
  void notifyOperationErased(Operation *) override { ++changes; }

  /// When the walk changed nothing, one warning saying so (`pass: nothing
  /// <done>: ...`) with the first reason, or that nothing was there to act
  /// on (`target` names what the pass looks for). A pass that was asked to
  /// do something never finishes silently with no effect.
  void warnIfUnchanged(Operation *root, StringRef pass, StringRef done,
                       StringRef target) const {
    if (changes)
      return;
    // At the first op left alone, else at the first op of the input (a
    // module's own location is usually unknown).
    Location loc = root->getLoc();
    if (firstLoc)
      loc = *firstLoc;
    else if (root->getNumRegions() && !root->getRegion(0).empty() &&
             !root->getRegion(0).front().empty())
      loc = root->getRegion(0).front().front().getLoc();
    InFlightDiagnostic diag = emitWarning(loc) << pass << ": nothing " << done
                                               << ": ";
    if (failures)
      diag << failures << " candidate(s) left unchanged, first here: "
           << firstReason << "; remarks=true gives each";
    else
      diag << "the input has no " << target;
  }

  /// Match failures seen, and the first one's reason.
  int64_t failures = 0;
  /// IR changes made through the rewriter.
  int64_t changes = 0;
  std::string firstReason;
  std::optional<Location> firstLoc;

private:
  std::string prefix;
  bool emit;
};

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_MATCHFAILUREREMARKS_H
