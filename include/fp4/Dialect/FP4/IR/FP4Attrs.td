//===- FP4Attrs.td - quantization scheme attributes --------*- tablegen -*-===//

#ifndef FP4_DIALECT_FP4_IR_FP4ATTRS_TD
#define FP4_DIALECT_FP4_IR_FP4ATTRS_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"
include "fp4/Dialect/FP4/IR/FP4Interfaces.td"
include "fp4/Dialect/FP4/IR/FP4GPUConfigAttr.td"
include "fp4/Dialect/FP4/IR/FP4LaunchPlanAttr.td"

defvar FP4_SchemeIface = [DeclareAttrInterfaceMethods<FP4_QuantSchemeAttrInterface,
    ["verifyShape", "quantizeReference", "dequantizeReference"]>];

// The block_size parameter's getter already implements getBlockSize(), so the
// interface is attached without redeclaring that method.
def FP4_MXFP4Attr : FP4_Attr<"MXFP4", "mxfp4", [FP4_QuantSchemeAttrInterface]> {
  let summary = "OCP MXFP4: E2M1 elements, one E8M0 power-of-two scale per block";
  let description = [{
    OCP Microscaling MXFP4 (numerics.md section 2): blocks of `block_size`
    (default 32) consecutive elements along the blocked axis share one E8M0
    scale 2^e; elements are E2M1. 4.25 bits per element at block 32.

    Parameters (all optional, any order):
    - `block_size`: an even number in [2, 1024], default 32 (the OCP value).
    - `scale_rounding`: `floor` (OCP, default), `ceil`, `even`, `rceil`.
    - `rounding`: element rounding, `rne` (default), `half_away`,
      `stochastic` (then `seed` keys the counter-based generator).

    ```mlir
    #fp4.mxfp4
    #fp4.mxfp4<scale_rounding = even>
    #fp4.mxfp4<rounding = stochastic, seed = 7>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "32">:$blockSize,
    DefaultValuedParameter<"::mlir::fp4::ScaleRounding",
                           "::mlir::fp4::ScaleRounding::Floor">:$scaleRounding,
    DefaultValuedParameter<"::mlir::fp4::ElementRounding",
                           "::mlir::fp4::ElementRounding::NearestEven">:$rounding,
    DefaultValuedParameter<"uint32_t", "0">:$seed);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::llvm::StringRef getFormatName() const;
    ::mlir::Type getElementType() const;
    int64_t getAxisMultiple() const;
    double getBitsPerElement() const;
    void getComponentTypes(::llvm::ArrayRef<int64_t> shape, int64_t axis,
                           ::llvm::SmallVectorImpl<::mlir::Type> &types) const;
    void getComponentNames(::llvm::SmallVectorImpl<::llvm::StringRef> &names) const;
    ::llvm::LogicalResult verifyShape(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::llvm::ArrayRef<int64_t> shape, int64_t axis) const;
    ::llvm::LogicalResult quantizeReference(
        const ::mlir::fp4::ReferenceRows &rows, ::llvm::ArrayRef<float> values,
        float tensorAmax,
        ::llvm::ArrayRef<::llvm::MutableArrayRef<char>> components) const;
    ::llvm::LogicalResult dequantizeReference(
        const ::mlir::fp4::ReferenceRows &rows,
        ::llvm::ArrayRef<::llvm::ArrayRef<char>> components,
        ::llvm::MutableArrayRef<float> values) const;
  }];
}

// NVFP4 also needs the tensor amax and, with 16x16 tiles, row ranges aligned
// to the tiles.
def FP4_NVFP4Attr : FP4_Attr<"NVFP4", "nvfp4",
    [DeclareAttrInterfaceMethods<FP4_QuantSchemeAttrInterface,
        ["verifyShape", "quantizeReference", "dequantizeReference",
         "getReferenceRowMultiple", "referenceNeedsTensorAmax"]>]> {
  let summary = "NVIDIA NVFP4: E2M1 elements, E4M3 scale per 16, f32 tensor scale";
  let description = [{
    NVFP4 (numerics.md section 3), following TransformerEngine's reference
    quantizer operation for operation: blocks of 16 elements with one E4M3
    scale each, plus one f32 decode scale per tensor. 4.5 bits per element.

    Parameters (all optional, any order):
    - `four_over_six` (bool): per block also try the scale that maps the block
      maximum to 4 and keep the lower squared error.
    - `tile2d` (bool): 16x16 tiles spanning the blocked axis and the other of
      the two innermost dimensions (weights in training, so that row- and
      column-wise quantized copies are identical). The component layout is
      unchanged: each tile's scale byte is repeated in the tile's 16 lines.
    - `rounding`, `seed`: as for `#fp4.mxfp4`.

    ```mlir
    #fp4.nvfp4
    #fp4.nvfp4<four_over_six = true>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"bool", "false">:$fourOverSix,
    DefaultValuedParameter<"bool", "false">:$tile2d,
    DefaultValuedParameter<"::mlir::fp4::ElementRounding",
                           "::mlir::fp4::ElementRounding::NearestEven">:$rounding,
    DefaultValuedParameter<"uint32_t", "0">:$seed);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def FP4_HiF4Attr : FP4_Attr<"HiF4", "hif4", FP4_SchemeIface> {
  let summary = "HiFloat4: three-level hierarchical scaling (64 / 8 / 4)";
  let description = [{
    HiF4 (numerics.md section 4): groups of 64 elements carry one E6M2 scale,
    each 8 elements one extra 1-bit exponent, each 4 elements another; the
    elements are sign + 3-bit magnitude (`!fp4.s1p2`, values 0..1.75 in steps
    of 0.25), rounded half up. 4.5 bits per element. No parameters.

    ```mlir
    #fp4.hif4
    ```
  }];
  let hasCustomAssemblyFormat = 1;
}

def FP4_MXFP4MacroAttr : FP4_Attr<"MXFP4Macro", "mxfp4_macro", FP4_SchemeIface> {
  let summary = "MXFP4 with a non-power-of-two bf16 factor per macro block";
  let description = [{
    Macro-block-scaled MXFP4 (numerics.md section 5): MXFP4 blocks of 32 are
    grouped into macro blocks of `macro_block` elements (a multiple of 32,
    default 256; 0 means the whole axis), each with one bf16 factor m in
    [1, 2) that removes the bias of power-of-two scales.

    Parameters (all optional, any order): `macro_block`, `search` (0: m from
    the macro amax; N > 0: best of m = bf16(1 + j/N), j < N, by squared
    error), and `scale_rounding`, `rounding`, `seed` as for `#fp4.mxfp4`.

    ```mlir
    #fp4.mxfp4_macro
    #fp4.mxfp4_macro<macro_block = 128, search = 8>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "256">:$macroBlock,
    DefaultValuedParameter<"int64_t", "0">:$search,
    DefaultValuedParameter<"::mlir::fp4::ScaleRounding",
                           "::mlir::fp4::ScaleRounding::Floor">:$scaleRounding,
    DefaultValuedParameter<"::mlir::fp4::ElementRounding",
                           "::mlir::fp4::ElementRounding::NearestEven">:$rounding,
    DefaultValuedParameter<"uint32_t", "0">:$seed);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // FP4_DIALECT_FP4_IR_FP4ATTRS_TD
