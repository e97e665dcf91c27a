//===- FP4CorrectionOps.td - outlier and residual corrections -*- tablegen -*-===//
//
// The ops of the accuracy transforms fp4-outlier-fallback and fp4-residual
// (numerics.md 7 and 8). Both keep a small part of an operand in higher
// precision as a *block-sparse* side tensor and add its product back:
//
//   a block-sparse tensor [.., R, C] with blocks of B along the last axis
//   and k entries per block is the pair
//     values  [.., R, C/B, k]  (f32, bf16 or f16; bf16 by default)
//     indices [.., R, C/B, k]  i8, the entry's position within its block
//   representing the dense tensor that holds values[.., r, b, j] at column
//   b * B + indices[.., r, b, j] and zero elsewhere.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4CORRECTIONOPS_TD
#define FP4_DIALECT_FP4_IR_FP4CORRECTIONOPS_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"
include "fp4/Dialect/FP4/IR/FP4Types.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def FP4_CorrectionFloatTensor : RankedTensorOf<[F32, BF16, F16]>;
def FP4_SparseIndexTensor : RankedTensorOf<[I8]>;
def FP4_CorrectionOperand : AnyTypeOf<[FP4_CorrectionFloatTensor,
    FP4_SparseIndexTensor, FP4_QuantizedTensorType],
    "f32/bf16/f16 tensor, i8 index tensor or fp4 quantized tensor">;

def FP4_SplitOutliersOp : FP4_Op<"split_outliers",
    [Pure, AllTypesMatch<["input", "rest"]>,
     AllShapesMatch<["values", "indices"]>]> {
  let summary = "Take the k largest-magnitude elements of every block out";
  let description = [{
    Along the last axis, every block of `block_size` consecutive elements
    gives up its `k` elements of largest magnitude (numerics.md 7):
    `rest` is `input` with them replaced by +0.0, `values` / `indices` hold
    them as a block-sparse tensor (slot `j` of a block holds the element of
    rank `j`, `indices` its position within the block), so that
    `input == rest + scatter(values)` up to the rounding of `values` to its
    element type (nearest even; bf16 is the default storage).

    Selection order (`fp4/Numerics/Outliers.h`): larger `|x|` first,
    compared as bit patterns, so +-Inf and NaN come before any finite value;
    equal magnitudes go to the lower index. `1 <= k <= block_size <= 128`
    (indices are i8); the last axis must be static and a multiple of
    `block_size`.

    Quantizing `rest` instead of `input` lowers the block scales where an
    outlier set them, so fewer small values fall into the deadzone.

    ```mlir
    %rest, %vals, %idx = fp4.split_outliers %x block 32 top 2
        : tensor<16x4096xbf16> -> tensor<16x128x2xbf16>, tensor<16x128x2xi8>
    ```
  }];
  let arguments = (ins FP4_CorrectionFloatTensor:$input,
                       I64Attr:$block_size,
                       I64Attr:$k);
  let results = (outs FP4_CorrectionFloatTensor:$rest,
                      FP4_CorrectionFloatTensor:$values,
                      FP4_SparseIndexTensor:$indices);
  let assemblyFormat = [{
    $input `block` $block_size `top` $k attr-dict
    `:` type($input) `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def FP4_SplitChannelsOp : FP4_Op<"split_channels",
    [Pure, AllTypesMatch<["input", "rest"]>]> {
  let summary = "Take whole channels (positions of the last axis) out";
  let description = [{
    The static variant of outlier fallback (numerics.md 7): `gathered[..., j]
    = input[..., channels[j]]` (rounded to the element type of `gathered`,
    nearest even; bf16 by default) and `rest` is `input` with those channels
    replaced by +0.0. Splitting the activations and the weights of
    `y = x W^T` at the same channels gives
    `y = Q(x_rest) Q(W_rest)^T + x_gathered W_gathered^T`: the channels
    calibration found to carry outliers are multiplied in high precision,
    the rest is quantized without them.

    `channels` must be strictly increasing, non-empty and within the static
    last axis; `gathered` has the shape of `input` with the last axis
    replaced by the number of channels.

    ```mlir
    %rest, %out = fp4.split_channels %x channels [3, 17, 1020]
        : tensor<16x4096xbf16> -> tensor<16x3xbf16>
    ```
  }];
  let arguments = (ins FP4_CorrectionFloatTensor:$input,
                       DenseI64ArrayAttr:$channels);
  let results = (outs FP4_CorrectionFloatTensor:$rest,
                      FP4_CorrectionFloatTensor:$gathered);
  let assemblyFormat = [{
    $input `channels` $channels attr-dict `:` type($input) `->` type($gathered)
  }];
  let hasVerifier = 1;
}

def FP4_ResidualOp : FP4_Op<"residual",
    [Pure, AllShapesMatch<["values", "indices"]>]> {
  let summary = "Block-sparse part of the quantization residual";
  let description = [{
    The quantization residual `r = input - dequantize(quantized)` (one f32
    subtraction per element; bf16/f16 inputs are extended exactly), kept
    as a block-sparse tensor along the last axis: in every block of
    `block_size` elements the `k` largest `|r|` (the selection order of
    `fp4.split_outliers`), rounded to the element type of `values`
    (nearest even). `block 4 top 2` is the 2:4 pattern of numerics.md 8
    ("in every 4 consecutive elements keep the 2 largest |r|, ties to the
    lower index"); `block 32 top k` its top-k form.

    `quantized` must have the shape of `input` (it normally is
    `fp4.quantize %input`); `1 <= k <= block_size <= 128`; the last axis must
    be a multiple of `block_size`.

    ```mlir
    %q = fp4.quantize %x : tensor<16x4096xbf16>
        -> !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
    %vals, %idx = fp4.residual %x, %q block 4 top 2
        : tensor<16x4096xbf16>, !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
        -> tensor<16x1024x2xbf16>, tensor<16x1024x2xi8>
    ```
  }];
  let arguments = (ins FP4_CorrectionFloatTensor:$input,
                       FP4_QuantizedTensorType:$quantized,
                       I64Attr:$block_size,
                       I64Attr:$k);
  let results = (outs FP4_CorrectionFloatTensor:$values,
                      FP4_SparseIndexTensor:$indices);
  let assemblyFormat = [{
    $input `,` $quantized `block` $block_size `top` $k attr-dict
    `:` type($input) `,` qualified(type($quantized))
    `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def FP4_CorrectionMatmulOp : FP4_Op<"correction_matmul",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "Accumulate a correction product acc + lhs * rhs^T";
  let description = [{
    One term of a corrected matrix product (numerics.md 7, 8): computes
    `result[b, m, n] = acc[b, m, n] + sum_k lhs[b, m, k] * rhs[b, n, k]` with
    the operand layouts, ranks and batch rules of `fp4.matmul`
    (`lhs [B?, M, K]`, `rhs [B?, N, K]`, a rank-2 rhs shared by every batch).

    Each operand is given in parentheses either as one *dense* tensor
    (float, or quantized along its last axis: its dequantized values) or as
    a *block-sparse* pair `(values, indices)` with its block size
    (`block B`): `values [B?, R, K/B, k]`, `indices` i8 of the same shape,
    standing for the dense `[B?, R, K]` tensor that holds `values[.., r, c,
    j]` at column `c * B + indices[.., r, c, j]` and zero elsewhere. An
    index outside `[0, B)` gives an unspecified result.

    Only the stored entries take part: the products of a sparse operand's
    entries with the matching elements of the other operand are summed in
    f32, in the order of the sparse operand's blocks and slots (lhs first
    when both are sparse; with two dense operands, in the order of K),
    starting from `acc` (extended exactly to f32; 0 without `acc`), and the
    sum is rounded once to the result type (nearest even).

    Corrections are chained through `acc` behind the `fp4.matmul` of the
    quantized parts, e.g. activations `x = rest + S` split by
    `fp4.split_outliers`:

    ```mlir
    %y0 = fp4.matmul %qrest, %qw : !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>,
        !fp4.tensor<1024x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x1024xf32>
    %y = fp4.correction_matmul (%vals, %idx block 32), (%qw) acc %y0
        : (tensor<16x128x2xbf16>, tensor<16x128x2xi8>),
          (!fp4.tensor<1024x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>),
          tensor<16x1024xf32> -> tensor<16x1024xbf16>
    ```
  }];
  let arguments = (ins Variadic<FP4_CorrectionOperand>:$lhs,
                       Variadic<FP4_CorrectionOperand>:$rhs,
                       Optional<FP4_CorrectionFloatTensor>:$acc,
                       OptionalAttr<I64Attr>:$lhs_block_size,
                       OptionalAttr<I64Attr>:$rhs_block_size);
  let results = (outs FP4_CorrectionFloatTensor:$result);
  let assemblyFormat = [{
    ` ` `(` $lhs (`block` $lhs_block_size^)? `)` `,`
    `(` $rhs (`block` $rhs_block_size^)? `)` (`acc` $acc^)? attr-dict
    `:` `(` qualified(type($lhs)) `)` `,` `(` qualified(type($rhs)) `)`
    (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the lhs (rhs) is a block-sparse (values, indices) pair.
    bool isLhsSparse() { return getLhs().size() == 2; }
    bool isRhsSparse() { return getRhs().size() == 2; }
    /// Logical [B?, R, K] shape of the lhs (rhs), dense or sparse.
    ::llvm::SmallVector<int64_t> getLhsShape();
    ::llvm::SmallVector<int64_t> getRhsShape();
  }];
}

#endif // FP4_DIALECT_FP4_IR_FP4CORRECTIONOPS_TD
