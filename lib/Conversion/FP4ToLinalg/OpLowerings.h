//===- OpLowerings.h - the fp4 op conversion patterns -----------*- C++ -*-===//
//
// Private to the FP4ToLinalg library: one populate function per pattern
// file, assembled by populateFP4ToLinalgConversionPatterns, plus the two
// tensor-level helpers the patterns share.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_CONVERSION_FP4TOLINALG_OPLOWERINGS_H
#define FP4_LIB_CONVERSION_FP4TOLINALG_OPLOWERINGS_H

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
namespace fp4::detail {

void populateQuantizeOpLowering(const TypeConverter &converter,
                                RewritePatternSet &patterns);
void populateDequantizeOpLowering(const TypeConverter &converter,
                                  RewritePatternSet &patterns);
void populateMatmulOpLowering(const TypeConverter &converter,
                              RewritePatternSet &patterns);
void populatePackUnpackOpLowering(const TypeConverter &converter,
                                  RewritePatternSet &patterns);
// fp4-outlier-fallback / fp4-residual ops (FP4CorrectionOps.td).
void populateSplitOutliersOpLowering(const TypeConverter &converter,
                                     RewritePatternSet &patterns);
void populateSplitChannelsOpLowering(const TypeConverter &converter,
                                     RewritePatternSet &patterns);
void populateResidualOpLowering(const TypeConverter &converter,
                                RewritePatternSet &patterns);
void populateCorrectionMatmulOpLowering(const TypeConverter &converter,
                                        RewritePatternSet &patterns);
/// fp4.rotate and fp4.permute (RotateLowering.cpp).
void populateRotateOpLowering(const TypeConverter &converter,
                              RewritePatternSet &patterns);

/// Converts a float tensor elementwise to `elementType` (f32, bf16, f16):
/// exact extension, or rounding to nearest even. Returns `value` itself when
/// it already has that element type.
Value castFloatTensor(OpBuilder &builder, Location loc, Value value,
                      Type elementType);

/// The f32 tensor decoded from the components of a value of `type` through
/// the scheme's SchemeLoweringAttrInterface model; failure (with `reason`
/// set) if the scheme has no model or the model refuses the type.
FailureOr<Value> dequantizeComponents(OpBuilder &builder, Location loc,
                                      ValueRange components,
                                      QuantizedTensorType type,
                                      std::string &reason);

} // namespace fp4::detail
} // namespace mlir

#endif // FP4_LIB_CONVERSION_FP4TOLINALG_OPLOWERINGS_H
