//===- FP4RotationOps.td - rotations, permutations ---------*- tablegen -*-===//
//
// The ops of the accuracy transform fp4-rotate (numerics.md 6): an orthogonal
// block Hadamard rotation and a channel permutation along one axis of a float
// tensor. Applying the same one to both operands of y = x W^T leaves the
// product unchanged in exact arithmetic while reshaping the distribution the
// quantizer sees.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_IR_FP4ROTATIONOPS_TD
#define FP4_DIALECT_FP4_IR_FP4ROTATIONOPS_TD

include "fp4/Dialect/FP4/IR/FP4Base.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def FP4_RotationTensor : RankedTensorOf<[F32, BF16, F16]>;

def FP4_RotateOp : FP4_Op<"rotate", [Pure]> {
  let summary = "Block Hadamard rotation along one axis";
  let description = [{
    Multiplies the vectors along `axis` by the orthogonal matrix

    `R = I (x) (D * H_size / sqrt(size)) (x) I_stride`

    (`H` the Sylvester Hadamard matrix, `D` the diagonal of +-1 signs drawn
    from `seed` when a seed is given, else the identity), or by its
    transpose with `inverse`: `result = input * R` (`input * R^T`) for every
    vector along the axis. With `stride` 1 (the default) this is the block
    rotation of numerics.md section 6: blocks of `size` consecutive elements
    (16 to 256) are rotated independently. A larger stride rotates
    elements `stride` apart, e.g. `size = nb, stride = 32` is the Hadamard
    across 32-blocks `H_nb (x) I_32` of the two-level mode.

    The result is computed in f32 (bf16/f16 inputs are extended exactly)
    with the butterfly order, sign generator and scaling of
    `fp4/Numerics/Hadamard.h`, so the constant folder, the CPU lowering and
    GPU lowerings give the same bits, then rounded to the result element
    type (to nearest even).

    A rotation followed by its inverse (same size, stride, seed and axis)
    cancels under canonicalization, as it would in exact arithmetic.

    ```mlir
    // Randomized Hadamard-32 blocks along K.
    %r = fp4.rotate %x hadamard 32 seed 7 axis 1
        : tensor<16x4096xbf16> -> tensor<16x4096xf32>
    // Deterministic Hadamard across the 32-blocks of groups of 4 blocks.
    %c = fp4.rotate %r hadamard 4 stride 32 axis 1
        : tensor<16x4096xf32> -> tensor<16x4096xf32>
    // Undo the first one.
    %x2 = fp4.rotate %r hadamard 32 seed 7 axis 1 inverse
        : tensor<16x4096xf32> -> tensor<16x4096xf32>
    ```
  }];
  let arguments = (ins FP4_RotationTensor:$input,
                       I64Attr:$size,
                       DefaultValuedAttr<I64Attr, "1">:$stride,
                       OptionalAttr<UI32Attr>:$seed,
                       I64Attr:$axis,
                       UnitAttr:$inverse);
  let results = (outs FP4_RotationTensor:$result);
  let assemblyFormat = [{
    $input `hadamard` $size (`stride` $stride^)? (`seed` $seed^)?
    `axis` $axis (`inverse` $inverse^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The rotation as numerics parameters.
    ::mlir::fp4::numerics::HadamardParams getHadamardParams();
    /// Whether `other` applies the inverse of this op's rotation (same
    /// size, stride, signs and axis, opposite direction).
    bool isInverseOf(RotateOp other);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def FP4_PermuteOp : FP4_Op<"permute", [Pure, SameOperandsAndResultType]> {
  let summary = "Permutation of the positions along one axis";
  let description = [{
    Gathers along `axis`: `result[..., i, ...] = input[..., permutation[i],
    ...]`. Exact (no arithmetic). Permuting the reduction axis K of both
    operands of `y = x W^T` leaves the product unchanged; the two-level
    rotation of numerics.md section 6 uses it to balance the energy of the
    quantization blocks. The inverse permutation undoes it; two permutes
    of one axis compose under canonicalization and the identity folds away.

    ```mlir
    %p = fp4.permute %x axis 1 permutation [2, 0, 3, 1]
        : tensor<8x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       I64Attr:$axis,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `axis` $axis `permutation` $permutation attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

#endif // FP4_DIALECT_FP4_IR_FP4ROTATIONOPS_TD
