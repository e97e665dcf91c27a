/*===-- fp4-c/Dialects.h - C API of the fp4 dialect ---------------*- C -*-===*\
|*                                                                            *|
|* The fp4 dialect for C and for Python over ctypes: the dialect handle, the  *|
|* quantization scheme attributes (#fp4.mxfp4, #fp4.nvfp4, #fp4.hif4,         *|
|* #fp4.mxfp4_macro) behind one scheme interface, and the types               *|
|* !fp4.tensor<shape x elt, scheme, axis = A> and !fp4.s1p2.                  *|
|*                                                                            *|
|* Constructors take an MlirContext (or infer it from the scheme) and return  *|
|* a null attribute/type, after emitting an error diagnostic on the context,  *|
|* when the parameters are invalid: they never abort the process. Getters     *|
|* require a handle of their kind (check with the fp4*IsA* predicates first), *|
|* like the upstream mlir-c getters.                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP4_C_DIALECTS_H
#define FP4_C_DIALECTS_H

#include "fp4-c/Numerics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FP4, fp4);

/* Rounding parameters use the enums of fp4-c/Numerics.h (Fp4ScaleRounding,
   Fp4ElementRounding); their values equal the dialect's enum values. */

/*===----------------------------------------------------------------------===*
 * Quantization schemes (any attribute implementing QuantSchemeAttrInterface)
 *===----------------------------------------------------------------------===*/

/// True if `attr` implements the quantization scheme interface.
MLIR_CAPI_EXPORTED bool fp4AttributeIsAQuantScheme(MlirAttribute attr);

/// Short format name ("mxfp4", "nvfp4", "hif4", "mxfp4_macro"). The string is
/// owned by the context.
MLIR_CAPI_EXPORTED MlirStringRef
fp4QuantSchemeGetFormatName(MlirAttribute scheme);

/// Type of one 4-bit element (f4E2M1FN, !fp4.s1p2).
MLIR_CAPI_EXPORTED MlirType fp4QuantSchemeGetElementType(MlirAttribute scheme);

/// Elements sharing the finest-level scale.
MLIR_CAPI_EXPORTED int64_t fp4QuantSchemeGetBlockSize(MlirAttribute scheme);

/// Multiple the blocked axis length must have.
MLIR_CAPI_EXPORTED int64_t fp4QuantSchemeGetAxisMultiple(MlirAttribute scheme);

/// Average storage bits per element (tensor scale excluded).
MLIR_CAPI_EXPORTED double fp4QuantSchemeGetBitsPerElement(MlirAttribute scheme);

/// Number of component tensors storing a quantized tensor (docs/ABI.md).
MLIR_CAPI_EXPORTED intptr_t
fp4QuantSchemeGetNumComponents(MlirAttribute scheme);

/// Name of component `pos` ("codes", "scales", ...), owned by the program.
MLIR_CAPI_EXPORTED MlirStringRef
fp4QuantSchemeGetComponentName(MlirAttribute scheme, intptr_t pos);

/*===----------------------------------------------------------------------===*
 * #fp4.mxfp4<block_size, scale_rounding, rounding, seed>
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool fp4AttributeIsAMXFP4(MlirAttribute attr);
/// Defaults: blockSize 32, FP4_SCALE_FLOOR, FP4_ROUND_NEAREST_EVEN, seed 0.
MLIR_CAPI_EXPORTED MlirAttribute fp4MXFP4AttrGet(MlirContext ctx,
                                                 int64_t blockSize,
                                                 int32_t scaleRounding,
                                                 int32_t rounding,
                                                 uint32_t seed);
MLIR_CAPI_EXPORTED int64_t fp4MXFP4AttrGetBlockSize(MlirAttribute attr);
MLIR_CAPI_EXPORTED int32_t fp4MXFP4AttrGetScaleRounding(MlirAttribute attr);
MLIR_CAPI_EXPORTED int32_t fp4MXFP4AttrGetRounding(MlirAttribute attr);
MLIR_CAPI_EXPORTED uint32_t fp4MXFP4AttrGetSeed(MlirAttribute attr);

/*===----------------------------------------------------------------------===*
 * #fp4.nvfp4<four_over_six, tile2d, rounding, seed>
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool fp4AttributeIsANVFP4(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute fp4NVFP4AttrGet(MlirContext ctx,
                                                 bool fourOverSix, bool tile2d,
                                                 int32_t rounding,
                                                 uint32_t seed);
MLIR_CAPI_EXPORTED bool fp4NVFP4AttrGetFourOverSix(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool fp4NVFP4AttrGetTile2d(MlirAttribute attr);
MLIR_CAPI_EXPORTED int32_t fp4NVFP4AttrGetRounding(MlirAttribute attr);
MLIR_CAPI_EXPORTED uint32_t fp4NVFP4AttrGetSeed(MlirAttribute attr);

/*===----------------------------------------------------------------------===*
 * #fp4.hif4 (no parameters)
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool fp4AttributeIsAHiF4(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute fp4HiF4AttrGet(MlirContext ctx);

/*===----------------------------------------------------------------------===*
 * #fp4.mxfp4_macro<macro_block, search, scale_rounding, rounding, seed>
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool fp4AttributeIsAMXFP4Macro(MlirAttribute attr);
/// Defaults: macroBlock 256 (0 = the whole axis), search 0, FP4_SCALE_FLOOR,
/// FP4_ROUND_NEAREST_EVEN, seed 0.
MLIR_CAPI_EXPORTED MlirAttribute
fp4MXFP4MacroAttrGet(MlirContext ctx, int64_t macroBlock, int64_t search,
                     int32_t scaleRounding, int32_t rounding, uint32_t seed);
MLIR_CAPI_EXPORTED int64_t fp4MXFP4MacroAttrGetMacroBlock(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp4MXFP4MacroAttrGetSearch(MlirAttribute attr);
MLIR_CAPI_EXPORTED int32_t
fp4MXFP4MacroAttrGetScaleRounding(MlirAttribute attr);
MLIR_CAPI_EXPORTED int32_t fp4MXFP4MacroAttrGetRounding(MlirAttribute attr);
MLIR_CAPI_EXPORTED uint32_t fp4MXFP4MacroAttrGetSeed(MlirAttribute attr);

/*===----------------------------------------------------------------------===*
 * !fp4.s1p2 (the HiF4 element)
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool fp4TypeIsAS1P2(MlirType type);
MLIR_CAPI_EXPORTED MlirType fp4S1P2TypeGet(MlirContext ctx);

/*===----------------------------------------------------------------------===*
 * !fp4.tensor<shape x elt, scheme, axis = A>
 *
 * The type implements ShapedTypeInterface, so mlirShapedTypeGetRank,
 * mlirShapedTypeGetDimSize, mlirShapedTypeIsDynamicDim and
 * mlirShapedTypeGetElementType work on it as well.
 *===----------------------------------------------------------------------===*/

MLIR_CAPI_EXPORTED bool fp4TypeIsAQuantizedTensor(MlirType type);

/// Quantized tensor of `shape` (mlirShapedTypeGetDynamicSize() for dynamic
/// dims) blocked along `axis`; the element type is the scheme's. Returns a
/// null type and emits an error on the scheme's context if the scheme is not
/// a quantization scheme or the shape is invalid for it (axis out of range,
/// dynamic or non-multiple blocked axis, ...).
MLIR_CAPI_EXPORTED MlirType fp4QuantizedTensorTypeGet(intptr_t rank,
                                                      const int64_t *shape,
                                                      MlirAttribute scheme,
                                                      int64_t axis);
/// As above, reporting errors at `loc`.
MLIR_CAPI_EXPORTED MlirType fp4QuantizedTensorTypeGetChecked(
    MlirLocation loc, intptr_t rank, const int64_t *shape, MlirAttribute scheme,
    int64_t axis);

MLIR_CAPI_EXPORTED MlirAttribute fp4QuantizedTensorTypeGetScheme(MlirType type);
MLIR_CAPI_EXPORTED int64_t fp4QuantizedTensorTypeGetAxis(MlirType type);
MLIR_CAPI_EXPORTED intptr_t fp4QuantizedTensorTypeGetRank(MlirType type);
MLIR_CAPI_EXPORTED int64_t fp4QuantizedTensorTypeGetDimSize(MlirType type,
                                                            intptr_t dim);
MLIR_CAPI_EXPORTED MlirType fp4QuantizedTensorTypeGetElementType(MlirType type);

/// Component tensor types (codes, scales, ...) in ABI order (docs/ABI.md).
MLIR_CAPI_EXPORTED intptr_t
fp4QuantizedTensorTypeGetNumComponents(MlirType type);
MLIR_CAPI_EXPORTED MlirType
fp4QuantizedTensorTypeGetComponentType(MlirType type, intptr_t pos);

#ifdef __cplusplus
}
#endif

#endif /* FP4_C_DIALECTS_H */
