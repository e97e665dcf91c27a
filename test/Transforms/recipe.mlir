// Recipes (docs/Recipes.md): ordered rules, first match wins, selecting by
// operand kind, layer name (the first NameLoc of the location, through
// FusedLoc and CallSiteLoc) and shape; an ignore list; per-op fp4.recipe
// attributes on the fp4.matmul ops built.
// RUN: split-file %s %t
// RUN: fp4-opt %t/input.mlir -fp4-quantize="recipe=%t/recipe.json" 2>/dev/null | FileCheck %s
// Remarks are at the ops' NameLocs (no file line to match with
// -verify-diagnostics): checked in order on stderr.
// RUN: fp4-opt %t/input.mlir -fp4-quantize="recipe=%t/recipe.json remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fp4-opt %t/attribute.mlir -fp4-quantize -verify-diagnostics | FileCheck %s --check-prefix=ATTR
// Without remarks: one summary warning only when something was left for a
// reason other than the recipe's choice.
// RUN: fp4-opt %t/input.mlir -fp4-quantize="recipe=%t/recipe.json" 2>&1 | FileCheck %s --check-prefix=SUMMARY

// Every accuracy pass runs; each applies only where the op's fp4.recipe asks,
// with its options: Hadamard-16 on the two "ffn" products (both operands),
// the top-2-of-16 residual on "wide", no outlier fallback anywhere.
// RUN: fp4-opt %t/input.mlir -fp4-quantize="recipe=%t/recipe.json" -fp4-rotate -fp4-macro-scale -fp4-outlier-fallback -fp4-residual 2>/dev/null | FileCheck %s --check-prefix=PEROP
// RUN: fp4-opt %t/input.mlir -fp4-quantize="recipe=%t/recipe.json" -fp4-outlier-fallback=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=DECLINED
// PEROP-NOT: fp4.split_outliers
// PEROP-COUNT-2: fp4.rotate %{{.*}} hadamard 16 seed 0 axis 1 : tensor<{{32x64|16x64}}xf32>
// PEROP: fp4.residual %{{.*}} block 16 top 2 : tensor<16x128xf32>
// PEROP-NOT: fp4.residual
// PEROP-COUNT-2: fp4.rotate %{{.*}} hadamard 16 seed 0 axis 1 : tensor<{{32x48|16x48}}xf32>
// PEROP-NOT: fp4.rotate
// PEROP-NOT: fp4.split_outliers
// DECLINED-COUNT-5: remark: {{.*}}no outlier fallback: its fp4.recipe does not ask for fp4-outlier-fallback
// DECLINED-NOT: warning: {{.*}}fp4-outlier-fallback

// SUMMARY: warning: {{.*}}fp4-quantize: quantized 5 of 9 contractions; 4 left unchanged (1 shape, 3 excluded by choice), first here:

//--- recipe.json
{
  "version": 1,
  "ignore": ["pooler.*"],
  "ignore_regex": ["encoder\\.layer\\.(5|6)\\..*"],
  "rules": [
    {"name": "qk", "match": {"kind": "activation", "layer": "*.attention.self"},
     "scheme": "mxfp4", "operands": "both"},
    {"name": "ffn", "match": {"layer": "encoder.layer.*.intermediate.dense"},
     "scheme": "hif4", "fallback": ["nvfp4"], "operands": "weights",
     "rotate": {"size": 16}},
    {"name": "wide", "match": {"k": {"min": 128, "multiple_of": 64}},
     "scheme": "nvfp4", "residual": {"sparsity": "topk", "k": 2, "block_size": 16}},
    {"name": "rest", "match": {"kind": "weight"}, "scheme": "mxfp4", "operands": "weights",
     "outlier_fallback": false}
  ]
}

//--- input.mlir
// CHECK-LABEL: func @rules
func.func @rules(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %x2: tensor<16x128xf32>,
                 %w2: tensor<128x32xf32>, %y: tensor<16x32xf32>, %c: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  // A weight product named like an FFN, inside a FusedLoc: hif4 (K = 64 fits),
  // weights only.
  // CHECK: %[[W0:.*]] = fp4.quantize %{{.*}} : tensor<32x64xf32> -> !fp4.tensor<32x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  // CHECK: fp4.matmul %{{.*}}, %[[W0]] {fp4.recipe = {layer = "encoder.layer.0.intermediate.dense", rotate = {size = 16 : i64}, rule = "ffn"}}
  %0 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc(fused["ffn.py":1:1, "encoder.layer.0.intermediate.dense"("linear.py":134:0)])
  // K = 128: the "wide" rule (no name condition), NVFP4 both operands.
  // CHECK: fp4.quantize %{{.*}} : tensor<16x128xf32> -> !fp4.tensor<16x128xf4E2M1FN, #fp4.nvfp4, axis = 1>
  // CHECK: fp4.matmul {{.*}}rule = "wide"
  %1 = linalg.matmul ins(%x2, %w2 : tensor<16x128xf32>, tensor<128x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc("encoder.layer.1.output.dense"("linear.py":134:0))
  // No name: only rules without a name condition; "rest", weights only.
  // CHECK: fp4.matmul {{.*}}{fp4.recipe = {rule = "rest"}}
  %2 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  // Ignored by glob and by regex.
  // CHECK: linalg.matmul
  // REMARK: remark: {{.*}}not quantized: layer 'pooler.dense' is in the ignore list of recipe
  %3 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc("pooler.dense")
  // CHECK: linalg.matmul
  // REMARK: remark: {{.*}}not quantized: layer 'encoder.layer.5.output.dense' is in the ignore list of recipe
  %4 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc(callsite("encoder.layer.5.output.dense"("linear.py":134:0) at "model.py":9:0))
  // Activation x activation (the rhs is computed): the "qk" rule opts it in.
  %t = tensor.empty() : tensor<32x16xf32>
  %yt = linalg.transpose ins(%y : tensor<16x32xf32>) outs(%t : tensor<32x16xf32>) permutation = [1, 0]
  %sq = arith.mulf %yt, %yt : tensor<32x16xf32>
  %c16 = tensor.empty() : tensor<16x16xf32>
  // CHECK: fp4.matmul {{.*}}layer = "encoder.layer.0.attention.self", rule = "qk"
  %5 = linalg.matmul ins(%y, %sq : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("encoder.layer.0.attention.self"("functional.py":5350:0))
  // The same product elsewhere: no rule selects activation products.
  // CHECK: linalg.matmul
  // REMARK: remark: {{.*}}not quantized: no rule of recipe
  %6 = linalg.matmul ins(%y, %sq : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("encoder.layer.0.output.dense")
  // K = 48: not HiF4's 64-groups, the nvfp4 fallback fits.
  %x48 = tensor.empty() : tensor<16x48xf32>
  %w48 = arith.constant dense<1.0> : tensor<48x32xf32>
  // CHECK: fp4.quantize %{{.*}} : tensor<32x48xf32> -> !fp4.tensor<32x48xf4E2M1FN, #fp4.nvfp4, axis = 1>
  // CHECK: fp4.matmul {{.*}}rule = "ffn"
  %7 = linalg.matmul ins(%x48, %w48 : tensor<16x48xf32>, tensor<48x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc("encoder.layer.2.intermediate.dense")
  // K = 40 fits neither: a shape skip, reported.
  %x40 = tensor.empty() : tensor<16x40xf32>
  %w40 = arith.constant dense<1.0> : tensor<40x32xf32>
  // CHECK: linalg.matmul
  // REMARK: remark: {{.*}}not quantized: K = 40 is not a multiple of 64 required by #fp4.hif4 (and no fallback scheme fits)
  %8 = linalg.matmul ins(%x40, %w40 : tensor<16x40xf32>, tensor<40x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc("encoder.layer.3.intermediate.dense")
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}

//--- attribute.mlir
// The attribute form: the module's fp4.recipe dictionary.
module attributes {fp4.recipe = {version = 1 : i64, ignore = ["head"],
    rules = [{name = "all", scheme = "nvfp4", operands = "weights"}]}} {
  // ATTR-LABEL: func @attr
  // ATTR: fp4.quantize %{{.*}} : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4, axis = 1>
  // ATTR: fp4.matmul %{{.*}}, %{{.*}} {fp4.recipe = {layer = "body", rule = "all"}}
  // ATTR: linalg.matmul
  func.func @attr(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %c: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
    %0 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc("body")
    %1 = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32> loc("head")
    return %0, %1 : tensor<16x32xf32>, tensor<16x32xf32>
  }
}
