//===- Passes.td - fp4 dialect transformation passes -------*- tablegen -*-===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD
#define FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4Quantize : Pass<"fp4-quantize"> {
  let summary = "Rewrite linalg contractions into fp4.quantize + fp4.matmul";
  let description = [{
    Rewrites contractions `C += A * B` on tensors into an `fp4.matmul` whose
    selected operands are quantized with `scheme`, blocked along the reduction
    dimension K (the last axis of both `fp4.matmul` operands):

    - `linalg.matmul`, `linalg.batch_matmul` and `linalg.contract`, with the
      default or explicit `indexing_maps` (transposed operands, a transposed
      output, a weight or activation broadcast over the batch);
    - `linalg.generic` (any LinalgOp) with two inputs, one output, exactly one
      reduction dimension K indexing both inputs, projected-permutation maps
      in any loop order, and the body `yield(addf(acc, mulf(a, b)))` (operands
      of addf/mulf in either order; a and b may pass through `arith.extf` /
      `arith.truncf`).

    Dimensions are classified from the maps: batch (in A, B and C), M (A and
    C), N (B and C). Accepted: B x M x N of 1 x 1 x 1, 0 x 2 x 1 (a weight
    shared by every batch: `fp4.matmul` with a rank-2 rhs) and 0 x 1 x 2 (A
    shared: the operands swap places, `B A^T = (A B^T)^T`). A (lhs) is the
    activation operand, B (rhs) the weight operand, whatever their layout.

    The rewrite: each input is brought to [B?, M.., K] / [B?, N, K] with
    `linalg.transpose` where its map differs (a transposed constant folds at
    compile time in `fp4-fold-constants`), quantized along its last axis when
    selected by `operands` (unselected ones stay float), and multiplied with
    `fp4.matmul`; a product not in the output's layout is transposed back.
    Dynamic dimensions other than K are kept (dynamic token counts); a K that
    is dynamic in one input and static in the other is taken as static.

    Numerics: the operands are quantized as the body sees them. Exact
    extensions (`arith.extf`, e.g. bf16 inputs into an f32 output) are left to
    `fp4.quantize` / `fp4.matmul`, which extend exactly; a conversion chain
    that narrows (the `arith.truncf` of `linalg.matmul` f32 x f32 -> bf16) is
    applied to the whole input first, as arith casts on tensors (lower them
    with `convert-elementwise-to-linalg`). Products are summed in f32 and
    rounded once: with a zero accumulator (`linalg.fill` of +-0 or a zero
    splat constant) `fp4.matmul` rounds straight to the output element type;
    otherwise `fp4.matmul` yields f32 and an elementwise `linalg.generic` adds
    the accumulator in f32 (extended from bf16/f16) and rounds the sum once to
    the output type. This is not bit-identical to a bf16 linalg body, which
    rounds after every multiply-add; it is the more accurate of the two and
    what block-scaled hardware computes. The sign of an exact zero result
    follows `fp4.matmul`. Dead zero fills are left for `-canonicalize`.

    Contractions the pass does not handle are left intact; with
    `remarks=true` each gets a remark `not quantized: <reason>`: K not a
    multiple of the scheme's block structure, dynamic K, a quantized shape the
    scheme rejects (NVFP4 2D tiles need a static non-K dimension that is a
    multiple of 16), element types other than f32/bf16/f16, several reduction
    dimensions, more batch or free dimensions than `fp4.matmul` takes,
    matrix-vector products (`linalg.matvec`, `linalg.vecmat`, `linalg.dot`),
    broadcasts of an output dimension, non-projected-permutation maps
    (convolutions), bodies that are not a multiply-add, and ops on buffers.
    LinalgOps without a reduction dimension are not contractions and get no
    remark.

    Invalid `scheme` or `operands` values fail the pass with an error on the
    root operation. A scheme with parameters must be quoted:
    `-fp4-quantize="scheme='#fp4.nvfp4<four_over_six = true>' operands=weights"`.
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
    Replaces `fp4.quantize` of a constant (`dense`, splat included, or
    `dense_resource`; f32, bf16 or f16; possibly behind `linalg.transpose`,
    `arith.extf` or `arith.truncf`, which are applied exactly) by `fp4.pack`
    of constant components (packed codes, scales, tensor scale, in the
    layouts of docs/ABI.md) computed with the scheme's reference quantizer
    (the numerics library), so no runtime quantization remains for weights.
    Any blocked axis is supported; stochastic rounding keys its counter by
    the element's index in the logical tensor. Likewise folds
    `fp4.dequantize` of `fp4.pack` of constants into a float constant when
    `fold-dequantize=true` (off by default: it expands packed weights back to
    float, which only a consumer that wants float weights should ask for).

    Large constants are read straight from their bytes (no per-element
    APFloat) and processed in parallel over rows on MLIR's thread pool
    (`--mlir-disable-threading` runs them serially, same bytes). Components
    under 64 elements, or with all elements equal, become `dense` literals;
    larger ones `dense_resource` blobs named `fp4_<source>_<component>`
    (`<source>`: the input blob's key, else the op's name location, else
    `const`). Float producers left without users are erased.

    Inputs that are not such constants (function arguments, f64 or integer
    sources, a truncf with a non-default rounding mode) are left alone. A
    foldable constant with more than `max-elements` elements is an error
    naming the op and both sizes, and the pass fails.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1ll << 32",
           "Largest constant (in elements) the pass will fold">,
    Option<"foldDequantize", "fold-dequantize", "bool", /*default=*/"false",
           "Also fold fp4.dequantize of fp4.pack of constants into float "
           "constants (default: keep such weights packed, dequantized at "
           "run time)">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect", "::mlir::arith::ArithDialect"];
}

#endif // FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD
