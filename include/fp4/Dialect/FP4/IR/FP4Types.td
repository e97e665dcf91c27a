//===- FP4Types.td - fp4 dialect types ---------------------*- tablegen -*-===//

#ifndef FP4_DIALECT_FP4_IR_FP4TYPES_TD
#define FP4_DIALECT_FP4_IR_FP4TYPES_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"
include "fp4/Dialect/FP4/IR/FP4Interfaces.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def FP4_S1P2Type : FP4_Type<"S1P2", "s1p2"> {
  let summary = "HiFloat4 element: sign and a 3-bit magnitude m/4";
  let description = [{
    The 4-bit element of HiF4: one sign bit and a 3-bit magnitude `m` with
    value `m / 4` (0, 0.25, ..., 1.75). Code = sign << 3 | m; -0 is code 8.
    There is no upstream builtin type with these values, hence this one.
  }];
}

def FP4_QuantizedTensorType : FP4_Type<"QuantizedTensor", "tensor",
    [ShapedTypeInterface]> {
  let summary = "Tensor of 4-bit elements with block scales along one axis";
  let description = [{
    A tensor quantized with a block-scaled scheme along one axis:

    ```mlir
    !fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
    !fp4.tensor<?x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
    !fp4.tensor<128x512x!fp4.s1p2, #fp4.hif4, axis = 1>
    ```

    The element type must be the scheme's element type. The blocked axis must
    be static and a multiple of the scheme's axis multiple (32 for MXFP4, 16
    for NVFP4, 64 for HiF4, the macro-block size for macro-scaled MXFP4);
    other dimensions may be dynamic. The value is stored as the component
    tensors of docs/ABI.md (see `fp4.pack` / `fp4.unpack`).
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    "::mlir::fp4::QuantSchemeAttrInterface":$scheme,
    "int64_t":$axis);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "::mlir::fp4::QuantSchemeAttrInterface":$scheme, "int64_t":$axis), [{
      return $_get(scheme.getContext(), shape, scheme.getElementType(),
                   scheme, axis);
    }]>
  ];
  let extraClassDeclaration = [{
    // ShapedTypeInterface.
    bool hasRank() const { return true; }
    QuantizedTensorType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                                  ::mlir::Type elementType) const;
    /// Component tensor types of this value, in ABI order.
    ::llvm::SmallVector<::mlir::Type> getComponentTypes() const;
    /// Length of the blocked axis (always static).
    int64_t getAxisSize() const { return getShape()[getAxis()]; }
  }];
}

#endif // FP4_DIALECT_FP4_IR_FP4TYPES_TD
