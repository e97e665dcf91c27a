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

    Nothing is skipped silently: without `remarks=true`, when a contraction
    is left unchanged or the input has no contraction at all, the pass emits
    one summary warning (`fp4-quantize: quantized 40 of 48 contractions; 8
    left unchanged (8 shape), first here: <reason>`) at the first op left
    alone. The pass statistics count quantized and skipped contractions per
    reason (`-mlir-pass-statistics`; Debian's MLIR 22 is built with
    statistics compiled out, so fp4-opt prints fp4's own record of them in
    MLIR's list format, fp4/Transforms/PassStatistics.h).

    Which contractions, and how (docs/Recipes.md): `operands=weights`
    quantizes the rhs of weight products only (the rhs a constant or a
    function argument, through layout and conversion ops); activation x
    activation products (attention's Q K^T, P V) are left in float unless
    `activation-products=true`. `recipe=<file.json>` chooses per contraction
    instead (scheme, fallback schemes, operands, accuracy transforms) by
    operand kind, layer name (the op's first NameLoc) and shape; with neither
    `recipe=` nor an explicit `scheme=`, an `fp4.recipe` dictionary on the
    module is the recipe. Each fp4.matmul built under a recipe carries an
    `fp4.recipe` dictionary that fp4-rotate, fp4-macro-scale,
    fp4-outlier-fallback and fp4-residual honor. Contractions left in float
    by choice are counted in the summary warning ("excluded") but do not
    raise it alone.

    A weight broadcast over the batch by `linalg.broadcast` or a
    broadcasting `linalg.generic` (torch-mlir's Linear on a 3-D input) is
    read through: the 2-D source becomes the shared rhs, quantized once (and
    folded by `fp4-fold-constants`), not per batch.

    Invalid `scheme` or `operands` values, and recipes that cannot be read
    or validated (the error names the file, the rule and the key), fail the
    pass with an error on the root operation. A scheme with parameters must be quoted:
    `-fp4-quantize="scheme='#fp4.nvfp4<four_over_six = true>' operands=weights"`.
  }];
  let options = [
    Option<"scheme", "scheme", "std::string", /*default=*/"\"#fp4.mxfp4\"",
           "Quantization scheme attribute, e.g. '#fp4.nvfp4<four_over_six = "
           "true>', or a short name: mxfp4, nvfp4, hif4, mxfp4_macro">,
    Option<"operands", "operands", "::mlir::fp4::QuantizeOperands",
           /*default=*/"::mlir::fp4::QuantizeOperands::Both",
           "Which matmul operands to quantize: both, activations (lhs) or "
           "weights (rhs)",
           "::mlir::fp4::enumOptionValues(::mlir::fp4::kQuantizeOperandsNames)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every contraction that is left unquantized">,
    Option<"recipe", "recipe", "std::string", /*default=*/"\"\"",
           "Recipe file (JSON, docs/Recipes.md) choosing per contraction; "
           "exclusive with scheme and operands">,
    Option<"activationProducts", "activation-products", "bool",
           /*default=*/"false",
           "Also quantize activation x activation products (attention)">,
  ];
  let statistics = [
    Statistic<"numQuantized", "quantized",
              "Contractions rewritten to fp4.matmul">,
    Statistic<"numSkippedShape", "skipped-shape",
              "Contractions left unchanged: K dynamic, empty or not a "
              "multiple of the scheme's blocks">,
    Statistic<"numSkippedElementType", "skipped-element-type",
              "Contractions left unchanged: an operand is not f32/bf16/f16">,
    Statistic<"numSkippedExcluded", "skipped-excluded",
              "Contractions left in float by choice (recipe, operand kind)">,
    Statistic<"numSkippedForm", "skipped-form",
              "Contractions left unchanged: not a matrix product fp4.matmul "
              "takes (maps, dimensions, body)">,
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

    `fp4.rotate` and `fp4.permute` of such constants (from `fp4-rotate`)
    are computed at compile time as well, with the numerics library's
    rotation (the same f32 operations as the lowering), and the quantize
    reading them then folds.

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

def FP4ErrorReport : Pass<"fp4-error-report"> {
  let summary = "Three-way decomposition of the quantization error (analysis)";
  let description = [{
    For every `fp4.quantize` whose input is a constant (`dense` or
    `dense_resource`, behind `linalg.transpose`, `arith.extf`,
    `arith.truncf`: what `fp4-fold-constants` reads) or has calibration data
    (`calibration=<file.npz>`, keys in docs/Calibration.md), quantizes the
    values with the C++ reference quantizer of the op's exact scheme and
    decomposes the error (numerics.md section 9, definitions in
    docs/ErrorReport.md): per finest scale block (MXFP4 and macro-scaled
    MXFP4: 32, NVFP4: 16, HiF4: the 4-element sub-block) the ideal scale
    `s* = amax / 6` (HiF4: `amax / 1.75`) is compared with the stored scale,
    giving the energy attribution `E_total = E_scale + E_dead + E_grid`
    relative to `||x||^2`, the vector terms (scale bias, deadzone, grid
    noise) with their energies, pairwise cross terms `2<a, b>` and the
    largest absolute residual of their sum against the error vector (exact
    f64 arithmetic: it is 0), and the fractions of elements clipped
    (`|x/X|` beyond the grid) and zeroed (`x != 0` quantized to 0). All sums
    are f64. For calibration data the samples (last axis = the quantized
    axis) are quantized as one `[rows, K]` tensor (NVFP4: its own tensor
    scale).

    Each analysed op gets a remark with the totals:
    `E_total 1.323e-02 = E_scale 3.010e-03 + E_dead 2.700e-04 + E_grid
    9.950e-03 of ||x||^2; clipped 2.33%, zeroed 8.77% (constant, key '')`.
    Every other quantize gets a remark `not analyzed: <reason>`. With
    `output=<path>` the figures are also written as JSON (`-` for stdout):
    per op its location, key, source, scheme, shape, axis and all figures;
    `per-block=true` adds per-block arrays. The IR is not modified.

    Errors: an unreadable or malformed calibration file, an output file that
    cannot be opened, calibration data whose last axis does not match the
    quantized axis (or that the scheme cannot quantize, e.g. NVFP4 16x16
    tiles with a row count that is not a multiple of 16).
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "Write the report as JSON to this file ('-': stdout)">,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "Calibration data (.npz, docs/Calibration.md) for non-constant "
           "quantize inputs">,
    Option<"perBlock", "per-block", "bool", /*default=*/"false",
           "Add per-block arrays to the JSON report">,
  ];
}

def FP4Rotate : Pass<"fp4-rotate"> {
  let summary = "Rotate both operands of fp4.matmul along K (numerics.md 6)";
  let description = [{
    For every `fp4.matmul` (as built by `fp4-quantize`) whose operands are
    each an `fp4.quantize` result or a float tensor, applies the same
    orthogonal transform `R` along the reduction axis K to both, so that
    `y = (x R)(W R)^T = x W^T` in exact arithmetic while the quantizer sees
    rotated blocks: an `fp4.rotate` (f32 result) is inserted before each
    `fp4.quantize` (a new quantize per matmul operand, so values shared with
    other users keep their meaning) and on float operands. Rotations of
    constant weights are computed at compile time by `fp4-fold-constants`;
    activations are rotated at run time (`fp4.rotate` lowers in
    `convert-fp4-to-linalg`).

    Modes:
    - `randomized` (default): `R = I (x) (D H_size / sqrt(size))`, `D` the
      +-1 signs of `seed` (generator documented in `fp4/Numerics/Hadamard.h`);
    - `deterministic`: no signs;
    - `two-level` (our realization of TORQ's idea, numerics.md 6): from the
      activation's calibration data (`calibration=<file.npz>`, keys in
      docs/Calibration.md), (1) a channel permutation that balances the
      energy of the `size`-blocks (channels by descending energy into the
      block with the least energy that still has room; ties to the lower
      channel and block index), optionally (`cross-block=true`) followed by a
      Hadamard across blocks `H_p (x) I_size` (`p` the largest power of two
      dividing K/size, at most 256); (2) per matmul, the intra-block rotation
      among identity, Hadamard-`size` and randomized Hadamard-`size` whose
      quantized calibration data has the highest Shannon entropy of the
      4-bit code histogram (ties: first in that order). The choice is
      recorded as the `fp4.intra_block_rotation` attribute of the matmul (and
      a remark with `remarks=true`). Permutations of an activation produced
      by a matmul with a weight operand (through single-use elementwise ops)
      are moved into that weight's rows, where constants fold.

    Errors (the pass fails): `size` not a power of two or outside [16, 256];
    an unknown mode; `size` not dividing K of a matmul the pass would rotate;
    in two-level mode a missing or unreadable calibration file, or no
    calibration samples for a matmul's activation (the error names the key
    looked for). Matmuls with an operand the pass cannot rotate (a quantized
    value that is not an `fp4.quantize` result, e.g. an already folded
    `fp4.pack` or a function argument; a dynamic K) are left unchanged, with
    a remark `not rotated: <reason>` when `remarks=true`.
    Under a recipe (docs/Recipes.md), an `fp4.matmul` carrying an
    `fp4.recipe` dictionary gets the options of its `rotate` entry instead
    of the pass options, and is left alone when the entry is absent (a
    remark with `remarks=true`; no "nothing done" warning then). Per op:
    randomized or deterministic mode.
  }];
  let options = [
    Option<"size", "size", "int64_t", /*default=*/"32",
           "Hadamard block size: a power of two in [16, 256]">,
    Option<"mode", "mode", "::mlir::fp4::RotationMode",
           /*default=*/"::mlir::fp4::RotationMode::Randomized",
           "randomized, deterministic or two-level",
           "::mlir::fp4::enumOptionValues(::mlir::fp4::kRotationModeNames)">,
    Option<"seed", "seed", "uint32_t", /*default=*/"0",
           "Seed of the randomized signs">,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "Calibration data (.npz, docs/Calibration.md) for two-level mode">,
    Option<"crossBlock", "cross-block", "bool", /*default=*/"false",
           "Two-level mode: also apply a Hadamard across blocks after the "
           "permutation">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every fp4.matmul left unrotated and on each "
           "two-level choice">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect"];
}

def FP4OutlierFallback : Pass<"fp4-outlier-fallback"> {
  let summary = "Compute the outliers of fp4.matmul operands in bf16 "
                "(numerics.md 7)";
  let description = [{
    Outlier fallback: the elements or channels that would set the block
    scales of a quantized operand are taken out, kept in bf16 and multiplied
    in high precision; the rest is quantized without them, so its scales
    are smaller and fewer small values fall into the deadzone. The
    `fp4.matmul` becomes the quantized product plus small high-precision
    products (`fp4.correction_matmul` terms accumulated onto it), summed in
    f32 and rounded once to the original result type.

    `mode=block-topk` (default): per block of `block-size` elements along K,
    the `k` largest-magnitude elements of each operand selected by
    `operands` (an `fp4.quantize` of a float tensor) go to a block-sparse
    bf16 side tensor with their in-block indices (`fp4.split_outliers`):

    ```
    x = rest + scatter(v),  y = Q(rest) Q(W)^T + scatter(v) Q(W)^T
    ```

    The outlier product uses the other operand as it is (quantized weights:
    their dequantized values). With both operands split, the product of the
    two outlier parts is added too, so the result is exactly
    `(deq(Q(x_rest)) + X_out)(deq(Q(W_rest)) + W_out)^T` up to f32
    summation. Selection (fp4/Numerics/Outliers.h): larger |x| first, ties
    to the lower index; Inf and NaN count as the largest. `block-size=0`
    uses the operand's scheme block: 32 for MXFP4 and macro-scaled MXFP4,
    16 for NVFP4, the 64-element group for HiF4.

    `mode=static-channels`: the channels (positions along K) whose largest
    |x| in the calibration samples of the activations (`calibration=`, keys
    in docs/Calibration.md) exceeds `threshold` (LLM.int8's 6.0 by default)
    are split out of the activations and, at the same channels, out of the
    weights (`fp4.split_channels`), and multiplied in bf16:

    ```
    y = Q(x_in) Q(W_in)^T + x_out W_out^T
    ```

    (a float weight is only gathered). A product whose activations have no
    calibration data is an error on their `fp4.quantize`, naming the key
    looked for. The static split must come before other corrections of the
    same product.

    Rewritten: every `fp4.matmul` (as built by `fp4-quantize`) whose
    operands qualify; the quantize of the split tensor reads its rest and
    the replaced quantize is erased when nothing else uses it. Constant
    weights are split at compile time by `fp4-fold-constants`. Composes with
    `fp4-residual` in either order (run first, the residual is recomputed
    against the new quantize) and runs after `fp4-rotate` and
    `fp4-macro-scale` (it splits whatever the quantize reads).

    Products left alone get, with `remarks=true`, a remark `no outlier
    fallback: <reason>` (operand not quantized, not produced by
    fp4.quantize, already split, no outlier channel, ...). Errors: `k` not
    1, 2 or 4; a `block-size` above 128 or below `k`; an explicit
    `block-size` that does not divide the K of an operand it applies to
    (on the product); a missing or unreadable calibration file, or
    calibration data missing for a product's activations; invalid `mode` or
    `operands`. `k`, `block-size` and `operands` apply to block-topk,
    `threshold` and `calibration` to static-channels.
    Under a recipe (docs/Recipes.md), an `fp4.matmul` carrying an
    `fp4.recipe` dictionary gets the options of its `outlier_fallback` entry
    instead of the pass options, and is left alone when the entry is absent
    (a remark with `remarks=true`; no "nothing done" warning then). Per op:
    block-topk mode.
  }];
  let options = [
    Option<"mode", "mode", "::mlir::fp4::OutlierMode",
           /*default=*/"::mlir::fp4::OutlierMode::BlockTopK",
           "block-topk (per-block top-k outliers) or static-channels "
           "(calibrated outlier channels)",
           "::mlir::fp4::enumOptionValues(::mlir::fp4::kOutlierModeNames)">,
    Option<"k", "k", "int64_t", /*default=*/"1",
           "Outliers taken out per block: 1, 2 or 4">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"0",
           "Elements per outlier block (0: the scheme's block)">,
    Option<"operands", "operands", "::mlir::fp4::CorrectionOperands",
           /*default=*/"::mlir::fp4::CorrectionOperands::Both",
           "Which fp4.matmul operands: both, activations (lhs) or weights "
           "(rhs)",
           "::mlir::fp4::enumOptionValues(::mlir::fp4::kCorrectionOperandsNames)">,
    Option<"threshold", "threshold", "double", /*default=*/"6.0",
           "static-channels: a channel whose calibrated max |x| exceeds "
           "this is computed in bf16">,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "static-channels: calibration data (.npz, docs/Calibration.md)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every fp4.matmul left unchanged">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect"];
}

def FP4Residual : Pass<"fp4-residual"> {
  let summary = "Add the sparse quantization residual of fp4.matmul "
                "operands (numerics.md 8)";
  let description = [{
    Residual correction (Rollout-ResQ style): for every `fp4.matmul` whose
    operand selected by `operands` (the activations, by default) is an
    `fp4.quantize` of `%x`, the residual `r = x - deq(Q(x))` is kept
    structured-sparse in bf16 (`fp4.residual`) and its product added:

    ```
    y = deq(Q(x)) deq(Q(W))^T + S(r) deq(Q(W))^T
    ```

    `sparsity=2:4` (default): in every 4 consecutive elements along K the
    2 largest |r|, ties to the lower index (the pattern of 2:4 sparse
    tensor cores). `sparsity=topk`: the `k` (default 4) largest |r| of
    every block of `block-size` (default 32). The partial products are
    summed in f32 and rounded once to the original result type; the
    residual of constant weights (`operands=weights|both`) is computed at
    compile time by `fp4-fold-constants`.

    Composes with `fp4-outlier-fallback` in either order: on a product
    with correction terms, the residual gets one term per part of the other
    operand. Runs after `fp4-rotate` and `fp4-macro-scale`.

    Matmuls left alone get, with `remarks=true`, a remark `no residual
    correction: <reason>` (operand not quantized, not produced by
    fp4.quantize, already corrected, K not a multiple of the block).
    Errors: an invalid `sparsity` or `operands`; `k` or `block-size` with
    `sparsity=2:4`; `k` outside [1, block-size]; `block-size` above 128.
    Under a recipe (docs/Recipes.md), an `fp4.matmul` carrying an
    `fp4.recipe` dictionary gets the options of its `residual` entry instead
    of the pass options, and is left alone when the entry is absent (a
    remark with `remarks=true`; no "nothing done" warning then).
  }];
  let options = [
    Option<"sparsity", "sparsity", "::mlir::fp4::ResidualSparsity",
           /*default=*/"::mlir::fp4::ResidualSparsity::TwoFour",
           "2:4 (2 of every 4 along K) or topk (k of every block)",
           "::mlir::fp4::enumOptionValues(::mlir::fp4::kResidualSparsityNames)">,
    Option<"k", "k", "int64_t", /*default=*/"0",
           "Entries kept per block with sparsity=topk (0: 4)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"0",
           "Block size with sparsity=topk (0: 32)">,
    Option<"operands", "operands", "::mlir::fp4::CorrectionOperands",
           /*default=*/"::mlir::fp4::CorrectionOperands::Activations",
           "Which fp4.matmul operands: activations (lhs), weights (rhs) or "
           "both",
           "::mlir::fp4::enumOptionValues(::mlir::fp4::kCorrectionOperandsNames)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark on every fp4.matmul left unchanged">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect"];
}

def FP4MacroScale : Pass<"fp4-macro-scale"> {
  let summary = "Turn MXFP4 quantization into macro-block-scaled MXFP4";
  let description = [{
    Rewrites every `fp4.quantize` to `#fp4.mxfp4` with blocks of 32 into
    `#fp4.mxfp4_macro<macro_block = B, search = N>` (numerics.md 5: one bf16
    factor m in [1, 2) per macro-block of B elements on top of the E8M0
    block scales), keeping `scale_rounding`, `rounding` and `seed`. The
    result type changes in place, so `fp4.matmul` and `fp4.dequantize` uses
    (and other fp4 ops without quantized results) see the new scheme; the
    CPU pipeline lowers it like any scheme.

    Run it after `fp4-quantize` and before `fp4-fold-constants`: a folded
    weight is an `fp4.pack` of MXFP4 components and stays MXFP4.

    Not rewritten, each with a remark `not rewritten: <reason>` (the pass
    succeeds): a quantize whose blocked axis is not a multiple of B (B = 0,
    a whole-axis macro-block, always fits), MXFP4 with a block size other
    than 32, and a quantize whose result also flows into an op whose types
    depend on the scheme (`func.return`, `scf.yield`, calls, `fp4.unpack`):
    function signatures and region-carried values are kept. Other values of
    MXFP4 type (function and block arguments, `fp4.pack` results) get the
    same remark on their function / producer.

    Invalid options (`macro-block` not 0 and not a multiple of 32 in [32,
    65536], `search` outside [0, 256]) fail the pass with an error on the
    root operation.
    Under a recipe (docs/Recipes.md), an `fp4.matmul` carrying an
    `fp4.recipe` dictionary gets the options of its `macro_scale` entry
    instead of the pass options, and is left alone when the entry is absent
    (a remark with `remarks=true`; no "nothing done" warning then). The
    entry is that of the matmuls using the quantize; a quantize shared by
    matmuls whose entries differ is left, with a remark.
  }];
  let options = [
    Option<"macroBlock", "macro-block", "int64_t", /*default=*/"256",
           "Macro-block size: a multiple of 32, or 0 for the whole axis">,
    Option<"search", "search", "int64_t", /*default=*/"0",
           "0: factor from the macro-block maximum; N > 0: search N "
           "candidate factors for the lowest squared error">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect"];
}

def FP4MergeConstantCorrections : Pass<"fp4-merge-constant-corrections"> {
  let summary = "Merge a corrected product's constant rhs parts per lhs part "
                "(reassociates the f32 sum)";
  let description = [{
    A corrected product (the `fp4.matmul` and the `fp4.correction_matmul`
    chain behind it, built by fp4-outlier-fallback and fp4-residual) sums
    one term per (lhs part, rhs part). With a constant weight split into
    its quantized rest `Qw` and its outliers `Ow`, every lhs part L appears
    twice, `L Qw^T + L Ow^T`. This pass replaces the terms of one lhs part
    whose rhs parts are all rank-2 constants (fp4.pack of constants, a
    block-sparse pair of constants, a float constant) by one term
    `L (Qw + Ow)^T` with the dense f32 sum as a constant: on the MiniLM
    encoder's full-correction recipe, 6 terms per linear layer become 3
    (the quantized product and the two sparse activation parts, each
    against the merged weight), and the weight-outlier and sparse x sparse
    products disappear.

    The merged constant is exact: a group is merged only when, at every
    position, at most one of its rhs parts is nonzero (the split of
    fp4-outlier-fallback leaves +0 in the rest where an outlier was taken,
    so its parts qualify); otherwise, and for a sparse part with an index
    outside its block or two entries at one position, the group is left,
    counted in `skipped-overlap`. What changes is the order of the f32 sum:
    `L Qw^T + L Ow^T` (two sums, each in its term's order) becomes one sum
    over K. The results therefore differ from the unmerged product by
    rounding (not bit for bit), and the merged weight is f32 (4 bytes per
    element, not the packed form): a CPU evaluation choice
    (`fp4-pipeline-cpu{merge-corrections=true}`), not a GPU one, which
    keeps the weight packed and its outliers sparse.

    A product left unchanged because nothing in it could merge is counted
    in `products-unchanged`; when no product of the input merged, the pass
    emits one warning saying so.
  }];
  let statistics = [
    Statistic<"numMerged", "products-merged",
              "Corrected products with at least one merged lhs part">,
    Statistic<"numTermsRemoved", "terms-removed",
              "Correction terms removed by merging">,
    Statistic<"numSkippedOverlap", "skipped-overlap",
              "Lhs parts whose constant rhs parts overlap (merging would "
              "round): left unmerged">,
    Statistic<"numUnchanged", "products-unchanged",
              "Corrected products with nothing to merge">,
  ];
  let dependentDialects = ["::mlir::fp4::FP4Dialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // FP4_DIALECT_FP4_TRANSFORMS_PASSES_TD
