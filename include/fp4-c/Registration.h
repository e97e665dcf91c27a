/*===-- fp4-c/Registration.h - register fp4 with an MLIR context --*- C -*-===*\
|*                                                                            *|
|* Two levels for embedders: the fp4-only calls add the fp4 dialect (and the  *|
|* upstream dialects and interface models fp4 passes create) and the fp4      *|
|* passes and named pipelines (fp4-pipeline-cpu, ...); the "All" calls also   *|
|* add every upstream dialect, extension, pass and the LLVM IR translations,  *|
|* which is what a standalone driver (the Python package, a JIT) needs to     *|
|* parse arbitrary IR, run textual pipelines and execute the result.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4_C_REGISTRATION_H
#define FP4_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Adds the fp4 dialect and what fp4 passes create
/// (mlir::fp4::registerAllDialects).
MLIR_CAPI_EXPORTED void fp4RegisterDialects(MlirDialectRegistry registry);

/// Registers the fp4 passes and named pipelines with the global registry.
/// Idempotent and thread-safe.
MLIR_CAPI_EXPORTED void fp4RegisterPasses(void);

/// fp4RegisterDialects plus every upstream dialect and dialect extension and
/// the builtin/LLVM (and other upstream) to-LLVM-IR translations, so that a
/// context built from `registry` can parse any IR the pipelines produce and
/// translate it for the ExecutionEngine.
MLIR_CAPI_EXPORTED void fp4RegisterAllDialects(MlirDialectRegistry registry);

/// fp4RegisterPasses plus every upstream pass and pipeline. Idempotent and
/// thread-safe.
MLIR_CAPI_EXPORTED void fp4RegisterAllPasses(void);

/// Creates a context with fp4RegisterAllDialects applied and all dialects
/// loaded lazily. The caller destroys it with mlirContextDestroy.
MLIR_CAPI_EXPORTED MlirContext fp4ContextCreate(bool threadingEnabled);

#ifdef __cplusplus
}
#endif

#endif /* FP4_C_REGISTRATION_H */
