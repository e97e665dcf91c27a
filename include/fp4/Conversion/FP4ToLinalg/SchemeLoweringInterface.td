//===- SchemeLoweringInterface.td - per-scheme CPU lowering -*- tablegen -*-===//
//
// How convert-fp4-to-linalg reaches the format-specific part of a lowering:
// each scheme attribute gets this interface as an external model (one file
// per format in lib/Conversion/FP4ToLinalg), so the conversion patterns never
// switch over formats and a new scheme plugs in by attaching one model.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOLINALG_SCHEMELOWERINGINTERFACE_TD
#define FP4_CONVERSION_FP4TOLINALG_SCHEMELOWERINGINTERFACE_TD

include "mlir/IR/OpBase.td"

def FP4_SchemeLoweringAttrInterface
    : AttrInterface<"SchemeLoweringAttrInterface"> {
  let cppNamespace = "::mlir::fp4";
  let description = [{
    Builds the linalg/tensor/arith IR that quantizes a float tensor with a
    quantization scheme and that dequantizes its component tensors. The
    emitted element arithmetic must be the numerics library's generic scalar
    rules instantiated with `ArithOps`, so the result is bit for bit the C++
    reference (numerics.md).
  }];
  let methods = [
    InterfaceMethod<[{
      Quantizes `input`, a ranked f32 tensor with the shape of `type` (dynamic
      non-axis dimensions allowed), into the component tensors of `type`
      (`type.getComponentTypes()`, ABI order). Returns failure, without
      creating any IR, if the scheme cannot be lowered for this type.
    }],
    "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>", "buildQuantize",
    (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
         "::mlir::Value":$input, "::mlir::fp4::QuantizedTensorType":$type)>,
    InterfaceMethod<[{
      Decodes the component tensors of a value of `type` into a ranked f32
      tensor of its shape. Returns failure, without creating any IR, if the
      scheme cannot be lowered for this type.
    }],
    "::mlir::FailureOr<::mlir::Value>", "buildDequantize",
    (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
         "::mlir::ValueRange":$components,
         "::mlir::fp4::QuantizedTensorType":$type)>,
  ];
}

#endif // FP4_CONVERSION_FP4TOLINALG_SCHEMELOWERINGINTERFACE_TD
