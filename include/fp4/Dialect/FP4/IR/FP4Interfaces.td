//===- FP4Interfaces.td - quantization scheme interface ----*- tablegen -*-===//
//
// Passes and lowerings talk to schemes only through this interface, so a new
// format is one attribute definition, not an edit to every pass.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4INTERFACES_TD
#define FP4_DIALECT_FP4_IR_FP4INTERFACES_TD

include "mlir/IR/OpBase.td"

def FP4_QuantSchemeAttrInterface : AttrInterface<"QuantSchemeAttrInterface"> {
  let cppNamespace = "::mlir::fp4";
  let description = [{
    A block-scaled 4-bit quantization scheme: its element type, its block
    structure along the blocked axis, and the component tensors that store a
    quantized tensor (docs/ABI.md). Component 0 is always the packed codes
    (two 4-bit codes per i8, the lower index along the axis in the low nibble).
  }];
  let methods = [
    InterfaceMethod<"Short user-facing name of the format (e.g. \"mxfp4\").",
      "::llvm::StringRef", "getFormatName", (ins)>,
    InterfaceMethod<"Type of one 4-bit element (f4E2M1FN, !fp4.s1p2).",
      "::mlir::Type", "getElementType", (ins)>,
    InterfaceMethod<"Elements sharing the finest-level scale.",
      "int64_t", "getBlockSize", (ins)>,
    InterfaceMethod<[{Multiple the blocked axis length must have (the largest
      block structure of the scheme: a macro block, a HiF4 group).}],
      "int64_t", "getAxisMultiple", (ins)>,
    InterfaceMethod<"Average storage bits per element, tensor scale excluded.",
      "double", "getBitsPerElement", (ins)>,
    InterfaceMethod<[{Types of the component tensors storing a quantized
      tensor of `shape` blocked along `axis`, in ABI order.}],
      "void", "getComponentTypes",
      (ins "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$axis,
           "::llvm::SmallVectorImpl<::mlir::Type> &":$types)>,
    InterfaceMethod<"Names of the components, in ABI order.",
      "void", "getComponentNames",
      (ins "::llvm::SmallVectorImpl<::llvm::StringRef> &":$names)>,
    InterfaceMethod<[{Scheme-specific checks of a quantized tensor shape
      (beyond the axis being a static multiple of getAxisMultiple()).}],
      "::llvm::LogicalResult", "verifyShape",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$axis),
      /*methodBody=*/"", /*defaultImplementation=*/"return ::mlir::success();">,
  ];
}

#endif // FP4_DIALECT_FP4_IR_FP4INTERFACES_TD
