//===- SchemeLoweringInterface.h - per-scheme CPU lowering ------*- C++ -*-===//

#ifndef FP4_CONVERSION_FP4TOLINALG_SCHEMELOWERINGINTERFACE_H
#define FP4_CONVERSION_FP4TOLINALG_SCHEMELOWERINGINTERFACE_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h.inc"

namespace mlir {
class DialectRegistry;
namespace fp4 {

/// Attaches the SchemeLoweringAttrInterface models of the four schemes
/// (#fp4.mxfp4, #fp4.nvfp4, #fp4.hif4, #fp4.mxfp4_macro) when the fp4 dialect
/// is loaded.
void registerSchemeLoweringInterfaceModels(DialectRegistry &registry);

/// One registration function per format, each defined in its own file.
void registerMXFP4LoweringModel(MLIRContext *context);
void registerNVFP4LoweringModel(MLIRContext *context);
void registerHiF4LoweringModel(MLIRContext *context);
void registerMXFP4MacroLoweringModel(MLIRContext *context);

} // namespace fp4
} // namespace mlir

#endif // FP4_CONVERSION_FP4TOLINALG_SCHEMELOWERINGINTERFACE_H
