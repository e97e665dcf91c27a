//===- FP4Ops.td - fp4 dialect operations ------------------*- tablegen -*-===//

#ifndef FP4_DIALECT_FP4_IR_FP4OPS_TD
#define FP4_DIALECT_FP4_IR_FP4OPS_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"
include "fp4/Dialect/FP4/IR/FP4Attrs.td"
include "fp4/Dialect/FP4/IR/FP4Types.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def FP4_FloatTensor : RankedTensorOf<[F32, BF16, F16]>;
def FP4_MatmulOperand : AnyTypeOf<[FP4_FloatTensor, FP4_QuantizedTensorType],
    "f32/bf16/f16 tensor or fp4 quantized tensor">;

def FP4_QuantizeOp : FP4_Op<"quantize", [Pure]> {
  let summary = "Quantize a float tensor with a block-scaled FP4 scheme";
  let description = [{
    Quantizes `input` with the scheme and along the axis given by the result
    type, exactly as the numerics specification defines for that scheme
    (block scales first, then element codes). bf16 and f16 inputs are
    extended to f32 exactly before quantizing.

    ```mlir
    %q = fp4.quantize %x : tensor<16x4096xbf16>
        -> !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
    ```
  }];
  let arguments = (ins FP4_FloatTensor:$input);
  let results = (outs FP4_QuantizedTensorType:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def FP4_DequantizeOp : FP4_Op<"dequantize", [Pure]> {
  let summary = "Decode a quantized tensor to floating point";
  let description = [{
    Decodes every element: code value times its scales, computed exactly in
    f32 as the numerics specification defines, then rounded to the result
    element type (bf16/f16 results round to nearest even from f32).

    ```mlir
    %x = fp4.dequantize %q : !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
        -> tensor<16x4096xf32>
    ```
  }];
  let arguments = (ins FP4_QuantizedTensorType:$input);
  let results = (outs FP4_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def FP4_MatmulOp : FP4_Op<"matmul", [Pure]> {
  let summary = "Matrix product lhs * rhs^T with f32 accumulation";
  let description = [{
    Computes `result[b, m, n] = sum_k lhs[b, m, k] * rhs[b, n, k]`, i.e.
    `y = x * W^T` as in a linear layer, with both operands K-major (the
    layout of block-scaled hardware MMA and of PyTorch weights). Each operand
    is either a float tensor or a quantized tensor blocked along K (its last
    axis); quantized operands take part with their dequantized values. Products
    are accumulated in f32 and the sum is rounded once to the result type.

    Shapes: lhs `[M, K]` or `[B, M, K]`; rhs `[N, K]` or `[B, N, K]` (a rank-2
    rhs is shared by every batch); result `[M, N]` or `[B, M, N]`.

    ```mlir
    %y = fp4.matmul %x, %w : tensor<16x4096xbf16>,
        !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
        -> tensor<16x14336xf32>
    ```
  }];
  let arguments = (ins FP4_MatmulOperand:$lhs, FP4_MatmulOperand:$rhs);
  let results = (outs FP4_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def FP4_PackOp : FP4_Op<"pack", [Pure]> {
  let summary = "Assemble a quantized tensor from its component tensors";
  let description = [{
    The ABI boundary: builds a quantized tensor from its components in the
    order and with the types docs/ABI.md gives for the scheme (packed codes
    first, then scales, then the tensor scale / factors the scheme has).

    ```mlir
    %q = fp4.pack %codes, %scales : tensor<4x16xi8>, tensor<4x1xi8>
        -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$components);
  let results = (outs FP4_QuantizedTensorType:$result);
  let assemblyFormat = [{
    $components attr-dict `:` type($components) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP4_UnpackOp : FP4_Op<"unpack", [Pure]> {
  let summary = "Take a quantized tensor apart into its component tensors";
  let description = [{
    Inverse of `fp4.pack`: yields the component tensors of docs/ABI.md.

    ```mlir
    %codes, %scales = fp4.unpack %q
        : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
        -> tensor<4x16xi8>, tensor<4x1xi8>
    ```
  }];
  let arguments = (ins FP4_QuantizedTensorType:$input);
  let results = (outs Variadic<AnyRankedTensor>:$components);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($components)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // FP4_DIALECT_FP4_IR_FP4OPS_TD
