//===- Version.cpp - fp4-mlir version information -------------------------===//

#include "fp4/Version.h"

// Generated at build time by cmake/GenerateVCSRevision.cmake (rewritten only
// when the revision changes, so a commit relinks the tools but recompiles
// only this file).
#include "fp4/VCSRevision.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#ifndef FP4_VERSION_STRING
#error "FP4_VERSION_STRING must come from CMake (the VERSION file)"
#endif

llvm::StringRef mlir::fp4::getFP4Version() { return FP4_VERSION_STRING; }

llvm::StringRef mlir::fp4::getFP4VCSRevision() { return FP4_VCS_REVISION; }

llvm::StringRef mlir::fp4::getFP4LLVMVersion() { return LLVM_VERSION_STRING; }

void mlir::fp4::printFP4Version(llvm::raw_ostream &os) {
  os << "fp4-mlir version " << getFP4Version();
  if (!getFP4VCSRevision().empty())
    os << " (git " << getFP4VCSRevision() << ")";
  os << "\n  built with LLVM/MLIR " << getFP4LLVMVersion() << "\n";
}
