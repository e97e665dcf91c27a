//===- TensorSelection.cpp - which checkpoint tensors to quantize ---------===//

#include "TensorSelection.h"

#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Regex.h"

namespace fp4quant {

struct NamePattern::Impl {
  std::optional<llvm::GlobPattern> glob;
  std::optional<llvm::Regex> regex;
};

llvm::Expected<NamePattern> NamePattern::parse(llvm::StringRef text) {
  NamePattern p;
  p.source = text.str();
  p.impl = std::make_shared<Impl>();
  if (text.consume_front("re:")) {
    // Anchored at the start like re.match, which compressed-tensors uses.
    p.impl->regex.emplace(("^(" + text + ")").str(), llvm::Regex::NoFlags);
    std::string error;
    if (!p.impl->regex->isValid(error))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "invalid pattern '" + p.source +
                                         "': " + error);
    return p;
  }
  auto glob = llvm::GlobPattern::create(text);
  if (!glob)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "invalid pattern '" + p.source + "': " +
            llvm::toString(glob.takeError()));
  p.impl->glob.emplace(std::move(*glob));
  return p;
}

bool NamePattern::matches(llvm::StringRef name) const {
  if (impl->regex)
    return impl->regex->match(name);
  return impl->glob->match(name);
}

bool isEmbeddingName(llvm::StringRef name) { return name.contains("embed"); }

bool isDefaultQuantizedName(llvm::StringRef name) {
  return name.ends_with(".weight") && !isEmbeddingName(name) &&
         !name.contains("lm_head");
}

} // namespace fp4quant
