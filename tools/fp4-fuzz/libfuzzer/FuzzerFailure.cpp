//===- FuzzerFailure.cpp - report a non-crash finding and abort -----------===//

#include "FuzzerContext.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

[[noreturn]] void fp4fuzz::fail(const char *what, const std::string &input,
                                const std::string &printed) {
  llvm::errs() << "fp4 fuzzer finding: " << what << "\ninput:\n"
               << input << "\nprinted:\n"
               << printed << "\n";
  std::abort();
}
