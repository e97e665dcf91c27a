//===- TensorSelection.h - which checkpoint tensors to quantize -*- C++ -*-===//
//
// Name patterns as llm-compressor / compressed-tensors write them: a glob
// (`*` matches any characters, dots included; `?` one; `[...]` a class)
// matched against the whole tensor name, or `re:<regex>` (POSIX extended)
// matched from the start of the name like Python's re.match. Without
// --include, the default selects what llm-compressor quantizes: every 2-D
// `*.weight` (a Linear's weight) except embeddings (`*embed*`) and the
// output head (`*lm_head*`).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4QUANT_TENSORSELECTION_H
#define FP4_TOOLS_FP4QUANT_TENSORSELECTION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace fp4quant {

class NamePattern {
public:
  /// Parses a glob or `re:` pattern; the error names the pattern.
  static llvm::Expected<NamePattern> parse(llvm::StringRef text);
  bool matches(llvm::StringRef name) const;
  const std::string &text() const { return source; }

private:
  std::string source;
  struct Impl;
  std::shared_ptr<Impl> impl;
};

/// Whether the default rule (no --include) picks a 2-D tensor by name.
bool isDefaultQuantizedName(llvm::StringRef name);

/// Whether a tensor name names an embedding (never a Linear).
bool isEmbeddingName(llvm::StringRef name);

} // namespace fp4quant

#endif // FP4_TOOLS_FP4QUANT_TENSORSELECTION_H
