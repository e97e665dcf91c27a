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
    // C++ reference quantization (ReferenceQuantization.h: row view, component
    // row views, parallel use). The defaults mean "no reference quantizer":
    // the constant folder then leaves the scheme's quantize ops alone.
    InterfaceMethod<[{Row ranges given to quantizeReference/dequantizeReference
      must start and end at multiples of this (NVFP4 16x16 tiles: 16).}],
      "int64_t", "getReferenceRowMultiple", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return 1;">,
    InterfaceMethod<[{Whether quantizeReference reads `tensorAmax` (max |x|
      over the finite values of the whole tensor, e.g. NVFP4's tensor scale),
      so that a caller computes it before quantizing rows in parallel.}],
      "bool", "referenceNeedsTensorAmax", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
    InterfaceMethod<[{Quantizes the row-view rows `rows` (values: numRows x
      cols, row-major) with the numerics library's reference encoders into
      `components`, one buffer per component in ABI order holding that
      component's row-view rows for the range (sizes from
      getReferenceComponentBytes). Per-tensor (rank-0) components are written
      only by the call with firstRow == 0, so calls on disjoint ranges may run
      concurrently. Fails on arguments that do not fit the scheme.}],
      "::llvm::LogicalResult", "quantizeReference",
      (ins "const ::mlir::fp4::ReferenceRows &":$rows,
           "::llvm::ArrayRef<float>":$values, "float":$tensorAmax,
           "::llvm::ArrayRef<::llvm::MutableArrayRef<char>>":$components),
      /*methodBody=*/"", /*defaultImplementation=*/"return ::mlir::failure();">,
    InterfaceMethod<[{Inverse of quantizeReference: decodes the components of
      row-view rows `rows` (same buffers; per-tensor components whole) into
      `values` (numRows x cols) exactly as the numerics specification
      dequantizes.}],
      "::llvm::LogicalResult", "dequantizeReference",
      (ins "const ::mlir::fp4::ReferenceRows &":$rows,
           "::llvm::ArrayRef<::llvm::ArrayRef<char>>":$components,
           "::llvm::MutableArrayRef<float>":$values),
      /*methodBody=*/"", /*defaultImplementation=*/"return ::mlir::failure();">,
  ];
}

#endif // FP4_DIALECT_FP4_IR_FP4INTERFACES_TD
