//===- PassStatistics.cpp - fp4's own record of pass statistics -----------===//

#include "fp4/Transforms/PassStatistics.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Format.h"

#include <atomic>
#include <mutex>

using namespace mlir;

namespace {

std::atomic<bool> recordEnabled{false};

struct Record {
  std::mutex mutex;
  std::vector<fp4::RecordedStatistic> entries;
};

Record &record() {
  static Record instance;
  return instance;
}

} // namespace

bool fp4::upstreamStatisticsCount() { return LLVM_ENABLE_STATS; }

void fp4::enableStatisticsRecord(bool enable) { recordEnabled = enable; }

bool fp4::isStatisticsRecordEnabled() { return recordEnabled; }

void fp4::addToStatistic(Pass &pass, Pass::Statistic &stat,
                         llvm::StringRef name, llvm::StringRef description,
                         uint64_t value) {
  stat += value;
  if (!recordEnabled)
    return;
  Record &r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  llvm::StringRef passName = pass.getName();
  for (RecordedStatistic &entry : r.entries)
    if (entry.pass == passName && entry.name == name) {
      entry.value += value;
      return;
    }
  r.entries.push_back(
      {passName.str(), name.str(), description.str(), value});
}

std::vector<fp4::RecordedStatistic> fp4::getStatisticsRecord() {
  Record &r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.entries;
}

void fp4::clearStatisticsRecord() {
  Record &r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.entries.clear();
}

void fp4::printStatisticsRecord(llvm::raw_ostream &os) {
  std::vector<RecordedStatistic> entries = getStatisticsRecord();
  os << "===" << std::string(73, '-') << "===\n"
     << "                    ... Pass statistics report (fp4) ...\n"
     << "===" << std::string(73, '-') << "===\n";
  // Group by pass, keeping first-update order; within a pass the widest
  // value sets the column, as in MLIR's report.
  std::vector<std::string> passes;
  for (const RecordedStatistic &entry : entries)
    if (llvm::find(passes, entry.pass) == passes.end())
      passes.push_back(entry.pass);
  for (const std::string &pass : passes) {
    os << pass << "\n";
    size_t width = 0;
    for (const RecordedStatistic &entry : entries)
      if (entry.pass == pass)
        width = std::max(width, std::to_string(entry.value).size());
    for (const RecordedStatistic &entry : entries)
      if (entry.pass == pass)
        os << "  (S) " << llvm::right_justify(std::to_string(entry.value),
                                              width)
           << " " << entry.name << " - " << entry.description << "\n";
  }
}
