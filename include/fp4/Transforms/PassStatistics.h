//===- PassStatistics.h - fp4's own record of pass statistics ----*- C++ -*-===//
//
// Debian's LLVM/MLIR 22 is built with LLVM_ENABLE_STATS=0: `Pass::Statistic`
// is then llvm::NoopStatistic, which stores nothing, and
// `-mlir-pass-statistics` prints a report without a single counter, for
// upstream passes and ours alike. The fp4 passes keep their ODS statistics
// (they count in an MLIR built with statistics) and also add every update
// here; fp4-opt turns the record on for `-mlir-pass-statistics` and prints
// it in MLIR's list format. Libraries embedding the passes can read it the
// same way.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TRANSFORMS_PASSSTATISTICS_H
#define FP4_TRANSFORMS_PASSSTATISTICS_H

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::fp4 {

/// Whether the MLIR this was compiled against counts `Pass::Statistic`.
bool upstreamStatisticsCount();

/// Turns fp4's record of statistics on or off (off by default: no cost and
/// no global state for embedders that do not ask).
void enableStatisticsRecord(bool enable = true);
bool isStatisticsRecordEnabled();

/// Adds `value` to `stat` and, when the record is on, to the record under
/// the pass's name and `name` (the ODS statistic's name). Updates from the
/// pass's clones on other threads add up, as MLIR merges them.
void addToStatistic(Pass &pass, Pass::Statistic &stat, llvm::StringRef name,
                    llvm::StringRef description, uint64_t value = 1);

struct RecordedStatistic {
  std::string pass, name, description;
  uint64_t value;
};

/// The record, in the order the statistics were first updated.
std::vector<RecordedStatistic> getStatisticsRecord();
void clearStatisticsRecord();

/// Prints the record like MLIR's `-mlir-pass-statistics-display=list`.
void printStatisticsRecord(llvm::raw_ostream &os);

} // namespace mlir::fp4

#endif // FP4_TRANSFORMS_PASSSTATISTICS_H
