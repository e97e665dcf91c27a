//===- PassStatisticsFlag.cpp - fp4-opt's -mlir-pass-statistics -----------===//

#include "PassStatisticsFlag.h"

#include "fp4/Transforms/PassStatistics.h"
#include "llvm/Support/CommandLine.h"

bool fp4opt::takeOverPassStatistics() {
  if (mlir::fp4::upstreamStatisticsCount())
    return false; // MLIR's own report has the counters.
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-pass-statistics");
  if (it == options.end())
    return false;
  // A cl::opt<bool> (mlir/lib/Pass/PassManagerOptions.cpp).
  auto *flag = static_cast<llvm::cl::opt<bool> *>(it->second);
  if (!flag->getValue())
    return false;
  flag->setValue(false);
  mlir::fp4::enableStatisticsRecord();
  return true;
}
