//===- Version.h - fp4-mlir version information -----------------*- C++ -*-===//
//
// The version of fp4-mlir (the VERSION file at the repository root, which
// CMake and the Python package both read), the git revision the binaries
// were built from, and the LLVM/MLIR version they were compiled against.
// Tools add printFP4Version to `--version` with
// llvm::cl::AddExtraVersionPrinter.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_VERSION_H
#define FP4_VERSION_H

#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
namespace fp4 {

/// "0.1.0": the project version.
llvm::StringRef getFP4Version();

/// The abbreviated git hash of the source tree at build time, or "" when the
/// sources are not a git checkout (an sdist).
llvm::StringRef getFP4VCSRevision();

/// The LLVM version of the headers fp4-mlir was compiled against.
llvm::StringRef getFP4LLVMVersion();

/// Two lines for `--version`:
///   fp4-mlir version 0.1.0 (git 0123456789ab)
///     built with LLVM/MLIR 22.1.8
void printFP4Version(llvm::raw_ostream &os);

} // namespace fp4
} // namespace mlir

#endif // FP4_VERSION_H
