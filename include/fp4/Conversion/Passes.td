//===- Passes.td - fp4 conversion passes -------------------*- tablegen -*-===//

#ifndef FP4_CONVERSION_PASSES_TD
#define FP4_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFP4ToLinalg : Pass<"convert-fp4-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower fp4 ops to linalg/arith on packed codes and scales";
  let description = [{
    The CPU reference lowering. Every `!fp4.tensor` becomes its component
    tensors (docs/ABI.md) through a 1:N type conversion that also rewrites
    function signatures, calls, returns, branches and `scf.for/if/while`
    carrying quantized values. Every fp4 op becomes `linalg.generic`s on
    tensors whose bodies are the project's scalar rules (fp4/Numerics)
    emitted as arith ops through `ArithOps`, bit for bit the computation the
    C++ reference and the constant folder run:

    - `fp4.quantize`: the blocked axis is moved last (`linalg.transpose`),
      split into blocks (`tensor.expand_shape`), block maxima are NaN
      propagating reductions, scale bytes an elementwise generic, and codes
      a generic over `[..., blocks, block/2, 2]` that packs the pair
      dimension into one i8 (lower index in the low nibble). The format
      specific part comes from the scheme attribute's
      `SchemeLoweringAttrInterface` model (one per format), never from a
      format switch. Stochastic rounding keys the counter-based generator
      with each element's linear index in the logical row-major tensor.
    - `fp4.dequantize`: the mirror image; bf16/f16 results are rounded to
      nearest even from f32.
    - `fp4.matmul`: quantized operands are dequantized to f32, float
      operands extended exactly, then a contraction generic (rhs indexed
      transposed, a rank-2 rhs broadcast over the batch) accumulates into a
      zero-filled f32 tensor; the sum is rounded once to the result type.
    - `fp4.pack` / `fp4.unpack`: the identity on components.

    Dynamic non-axis dimensions are supported. An op outside the ones above
    that takes or produces a quantized value (e.g. `arith.select` on
    `!fp4.tensor`) is reported as an error naming the op.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect"
  ];
}

#endif // FP4_CONVERSION_PASSES_TD
