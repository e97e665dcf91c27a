//===- FP4ToLinalg.h - fp4 to linalg/arith on components --------*- C++ -*-===//
//
// The CPU reference lowering as reusable pieces: a 1:N type conversion of
// !fp4.tensor to its component tensors and conversion patterns for every fp4
// op, for use in any compiler's dialect conversion. The convert-fp4-to-linalg
// pass is these plus the upstream func/call/return/branch/scf structural
// type conversions.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOLINALG_FP4TOLINALG_H
#define FP4_CONVERSION_FP4TOLINALG_FP4TOLINALG_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
class TypeConverter;
class DialectRegistry;

namespace fp4 {

/// Adds the 1:N conversion !fp4.tensor -> component tensors (in the order of
/// QuantizedTensorType::getComponentTypes(), docs/ABI.md) to `converter`.
/// Other types are left to the converter's other rules.
void populateFP4ToLinalgTypeConversion(TypeConverter &converter);

/// Patterns lowering fp4.quantize, fp4.dequantize, fp4.matmul, fp4.pack and
/// fp4.unpack to linalg/tensor/arith/math on the component tensors. The
/// scheme-specific IR comes from the schemes' SchemeLoweringAttrInterface
/// models (registerSchemeLoweringInterfaceModels).
void populateFP4ToLinalgConversionPatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns);

/// Everything convert-fp4-to-linalg sets up, for embedders that run their
/// own conversion: the type conversion above (plus identity for other
/// types), the fp4 patterns and the func signature/call/return/branch and
/// scf structural conversions, with `target` marking fp4 illegal and those
/// ops legal once their types are converted.
void populateFP4ToLinalgConversion(TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   ConversionTarget &target);

} // namespace fp4
} // namespace mlir

#endif // FP4_CONVERSION_FP4TOLINALG_FP4TOLINALG_H
