//===- InitAll.h - register every fp4 dialect, pass and pipeline -*- C++ -*-===//
//
// One call each for embedders (torch-mlir, IREE plugins, custom drivers): add
// the fp4 dialect and its interface models to a registry, and register the
// fp4 passes and named pipelines with the global pass registry.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_INITALL_H
#define FP4_INITALL_H

namespace mlir {
class DialectRegistry;
namespace fp4 {

/// Adds the fp4 dialect (and the upstream dialects its passes create) to
/// `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers every fp4 pass and the named pipelines (fp4-pipeline-cpu).
void registerAllPasses();

} // namespace fp4
} // namespace mlir

#endif // FP4_INITALL_H
