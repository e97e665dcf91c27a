//===- Progress.cpp - per-tensor progress lines on stderr -----------------===//

#include "Progress.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

namespace fp4quant {

Progress::Progress(int64_t total, bool quiet)
    : total(total), on(!quiet && llvm::sys::Process::StandardErrIsDisplayed()) {}

void Progress::step(llvm::StringRef name, llvm::StringRef what, int64_t bytes,
                    double seconds) {
  ++done;
  if (!on)
    return;
  double rate = seconds > 0 ? bytes / seconds / 1e9 : 0.0;
  llvm::errs() << llvm::formatv("[{0}/{1}] {2} {3} {4:f2} s {5:f2} GB/s\n",
                                done, total, name, what, seconds, rate);
  llvm::errs().flush();
}

} // namespace fp4quant
