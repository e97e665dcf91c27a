//===- Progress.h - per-tensor progress lines on stderr ---------*- C++ -*-===//
//
// Work that can take more than a few seconds (a checkpoint: one JIT run per
// tensor) reports one line per step on stderr, only when stderr is a
// terminal (a log file or a pipe gets no progress noise) and not --quiet.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4QUANT_PROGRESS_H
#define FP4_TOOLS_FP4QUANT_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace fp4quant {

class Progress {
public:
  /// `total` steps; enabled iff not `quiet` and stderr is a terminal.
  Progress(int64_t total, bool quiet);
  bool enabled() const { return on; }
  /// `[step/total] name what seconds s rate GB/s` for `bytes` processed.
  void step(llvm::StringRef name, llvm::StringRef what, int64_t bytes,
            double seconds);

private:
  int64_t total = 0, done = 0;
  bool on = false;
};

} // namespace fp4quant

#endif // FP4_TOOLS_FP4QUANT_PROGRESS_H
