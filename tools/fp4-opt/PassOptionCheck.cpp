//===- PassOptionCheck.cpp - name the pass in pass-option errors ----------===//

#include "PassOptionCheck.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <tuple>

#include <unistd.h>

using namespace mlir;

namespace {

/// `operands=both remarks=false scheme=#fp4.mxfp4`: the options of a pass
/// with their defaults, from its textual form `name{...}`.
std::string describeOptions(const PassInfo &info) {
  OpPassManager pm;
  if (failed(info.addToPipeline(pm, "", [](const Twine &) {
        return failure();
      })))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  for (Pass &pass : pm.getPasses())
    pass.printAsTextualPipeline(os);
  StringRef options(text);
  size_t open = options.find('{');
  if (open == StringRef::npos || !options.ends_with("}"))
    return "";
  return options.slice(open + 1, options.size() - 1).str();
}

/// Runs `fn` with file descriptor 2 sent to a temporary file and returns
/// what was written there: llvm::cl prints some option errors straight to
/// stderr instead of through the pass registry's error handler.
template <typename Fn> std::string captureStderr(Fn fn) {
  llvm::SmallString<64> path;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("fp4-opt-options", "txt", fd, path)) {
    fn();
    return "";
  }
  llvm::errs().flush();
  int saved = dup(2);
  dup2(fd, 2);
  fn();
  llvm::errs().flush();
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::string text;
  if (auto buffer = llvm::MemoryBuffer::getFile(path))
    text = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(path);
  return text;
}

/// The parser's message on one line, without its `<Pass-Options-Parser>:`
/// or empty program-name prefixes.
std::string cleanReason(StringRef text) {
  std::string out;
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    line = line.trim();
    line.consume_front("<Pass-Options-Parser>:");
    line.consume_front(":");
    line = line.trim();
    if (line.empty() || line.starts_with("failed to add"))
      continue;
    if (!out.empty())
      out += "; ";
    out += line.str();
  }
  return out;
}

} // namespace

bool fp4opt::checkPassOptionFlags(int argc, char **argv) {
  StringRef tool = llvm::sys::path::filename(argv[0]);
  for (int i = 1; i < argc; ++i) {
    StringRef arg(argv[i]);
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    // Plain variables, not a structured binding: the lambda below
    // captures `options` (capturing a binding needs C++20).
    StringRef name, options;
    std::tie(name, options) = arg.split('=');
    if (options.empty() && !arg.contains('='))
      continue;
    const PassRegistryEntry *entry = PassInfo::lookup(name);
    if (!entry)
      entry = PassPipelineInfo::lookup(name);
    if (!entry)
      continue;
    std::string message;
    OpPassManager pm;
    LogicalResult added = success();
    std::string printed = captureStderr([&] {
      added = entry->addToPipeline(pm, options, [&](const Twine &msg) {
        message = msg.str();
        return failure();
      });
    });
    if (succeeded(added))
      continue;
    std::string reason = cleanReason(message + "\n" + printed);
    llvm::errs() << tool << ": error: invalid options for "
                 << (PassInfo::lookup(name) ? "pass" : "pipeline") << " '"
                 << name << "' (`" << options << "`): " << reason;
    if (const PassInfo *info = PassInfo::lookup(name)) {
      std::string known = describeOptions(*info);
      if (!known.empty())
        llvm::errs() << "; its options (with defaults): " << known;
    } else {
      llvm::errs() << "; `" << tool << " --help` lists its options";
    }
    llvm::errs() << "\n";
    return false;
  }
  return true;
}
