//===- PassStatisticsFlag.h - fp4-opt's -mlir-pass-statistics ----*- C++ -*-===//
//
// With an MLIR built without statistics (Debian's LLVM 22:
// LLVM_ENABLE_STATS=0) `-mlir-pass-statistics` prints a report of pass
// names without one counter. fp4-opt then answers the flag itself: MLIR's
// report is turned off and fp4's record (fp4/Transforms/PassStatistics.h)
// is printed in its place, in the same list format.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4_OPT_PASSSTATISTICSFLAG_H
#define FP4_TOOLS_FP4_OPT_PASSSTATISTICSFLAG_H

namespace fp4opt {

/// Call after the command line is parsed. Returns true when fp4-opt took
/// the flag over (the caller prints the record after the run).
bool takeOverPassStatistics();

} // namespace fp4opt

#endif // FP4_TOOLS_FP4_OPT_PASSSTATISTICSFLAG_H
