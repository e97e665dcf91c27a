//===- Passes.td - fp4 dialect transformation passes -------*- tablegen -*-===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD
#define FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4Quantize : Pass<"fp4-quantize"> {
  let summary = "Rewrite matmuls into fp4.quantize + fp4.matmul";
  let description = [{
    Rewrites contractions that frontends emit into an `fp4.matmul` whose
    selected operands are quantized with `scheme`, blocked along the reduction
    dimension K:

    - `linalg.matmul` (including explicit `indexing_maps` that transpose an
      operand), `linalg.batch_matmul`;
    - `linalg.generic` contractions (one reduction dimension, multiply-add
      body) with any permutation of batch/M/N/K in the operand maps.

    The rhs (`B` of `C += A * B`) is the weight operand, the lhs the
    activation operand. Operands are brought to the K-major layout of
    `fp4.matmul` with `linalg.transpose` when needed (a transposed constant
    folds at compile time in `fp4-fold-constants`). An accumulator that is not
    a zero fill is added back. Forms the pass does not handle (K not a
    multiple of the scheme's block structure, dynamic K, integer or complex
    element types, several reduction dimensions, non-contraction bodies) are
    left intact; with `remarks=true` each one gets a remark saying why.
  }];
  let options = [
    Option<"scheme", "scheme", "std::string", /*default=*/"\"#fp4.mxfp4\"",
           "Quantization scheme attribute, e.g. '#fp4.nvfp4<four_over_six = "
           "true>', or a short name: mxfp4, nvfp4, hif4, mxfp4_macro">,
    Option<"operands", "operands", "std::string", /*default=*/"\"both\"",
           "Which matmul operands to quantize: both, activations (lhs) or "
           "weights (rhs)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every contraction that is left unquantized">,
  ];
  let dependentDialects = [
    "::mlir::fp4::FP4Dialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"
  ];
}

def FP4FoldConstants : Pass<"fp4-fold-constants"> {
  let summary = "Quantize constant operands at compile time";
  let description = [{
    Replaces `fp4.quantize` of a constant (`dense` or `dense_resource`, f32,
    bf16 or f16, possibly behind `linalg.transpose`, `arith.extf` or
    `arith.truncf`) by `fp4.pack` of constant components (packed codes,
    scales, tensor scale) computed with the project's reference encoders, so
    no runtime quantization remains for weights. Large constants are
    processed in parallel over rows (MLIR's threading) straight from the
    resource blob. Constants above `max-elements` are rejected with an error
    naming the op.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1ll << 32",
           "Largest constant (in elements) the pass will fold">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect", "::mlir::arith::ArithDialect"];
}

#endif // FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD
