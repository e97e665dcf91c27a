//===- fp4-opt.cpp - fp4 pass driver --------------------------------------===//
//
// mlir-opt with the fp4 dialect, passes and pipelines added, so a single tool
// takes frontend IR all the way down to LLVM IR.
//
//===----------------------------------------------------------------------===//

#include "PassOptionCheck.h"
#include "PassStatisticsFlag.h"
#include "fp4/InitAll.h"
#include "fp4/Transforms/PassStatistics.h"
#include "fp4/Version.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR in-process.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  mlir::fp4::registerAllDialects(registry);
  mlir::fp4::registerAllPasses();
  // `--version` names fp4-mlir's version under LLVM's own lines.
  llvm::cl::AddExtraVersionPrinter(mlir::fp4::printFP4Version);
  if (!fp4opt::checkPassOptionFlags(argc, argv))
    return 1;
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "fp4 optimizer driver\n", registry);
  // -mlir-pass-statistics: with an MLIR built without statistics (Debian's)
  // MLIR's own report has no counters, so fp4-opt prints fp4's record in its
  // place (same list format, on stderr, after the pipeline).
  bool fp4Statistics = fp4opt::takeOverPassStatistics();
  mlir::LogicalResult result =
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry);
  if (fp4Statistics)
    mlir::fp4::printStatisticsRecord(llvm::errs());
  return mlir::asMainReturnCode(result);
}
