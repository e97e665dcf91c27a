// The forms torch-mlir's fx importer (linalg-on-tensors) emits, and what
// upstream -linalg-generalize-named-ops -linalg-fuse-elementwise-ops makes of
// them, all become fp4.matmul; a weight broadcast over the batch is quantized
// once and folded at compile time.
// RUN: fp4-opt %s -split-input-file -fp4-quantize -canonicalize | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-fold-constants -canonicalize | FileCheck %s --check-prefix=FOLD
// One BERT layer (8 contractions: Q, K, V, attention output, FFN up and
// down, and the two attention products) as emitted, then generalized and
// fused: every contraction converts (the attention products on request).
// RUN: %python %S/Inputs/torch_bert_layer.py > %t.bert.mlir
// RUN: fp4-opt %t.bert.mlir -fp4-quantize=activation-products=true | FileCheck %s --check-prefix=BERT
// RUN: fp4-opt %t.bert.mlir -linalg-generalize-named-ops -linalg-fuse-elementwise-ops -fp4-quantize=activation-products=true | FileCheck %s --check-prefix=BERT
// BERT-COUNT-8: fp4.matmul
// BERT-NOT: fp4.matmul
// BERT-NOT: linalg.batch_matmul
// RUN: fp4-opt %t.bert.mlir -linalg-generalize-named-ops -linalg-fuse-elementwise-ops -fp4-quantize 2>&1 | FileCheck %s --check-prefix=FUSED
// FUSED-COUNT-6: fp4.matmul
// FUSED-NOT: fp4.matmul
// Weights folded: no fp4.quantize of a weight remains (the activations'
// quantize ops do), in both forms.
// RUN: fp4-opt %t.bert.mlir -fp4-quantize=operands=weights -fp4-fold-constants | FileCheck %s --check-prefix=WFOLD
// RUN: fp4-opt %t.bert.mlir -linalg-generalize-named-ops -linalg-fuse-elementwise-ops -fp4-quantize=operands=weights -fp4-fold-constants | FileCheck %s --check-prefix=WFOLD
// WFOLD-NOT: fp4.quantize
// WFOLD-COUNT-6: fp4.pack
// WFOLD-NOT: fp4.quantize

// Linear on a 3-D input: the transposed weight is broadcast to B x K x N by
// a linalg.generic feeding linalg.batch_matmul. The 2-D weight is the shared
// rhs of fp4.matmul, quantized (and folded) once.
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @linear_3d
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[W:.*]]: tensor<32x64xf32>)
// CHECK-DAG: %[[QX:.*]] = fp4.quantize %[[X]] : tensor<2x8x64xf32> -> !fp4.tensor<2x8x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK-DAG: %[[QW:.*]] = fp4.quantize %[[W]] : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: fp4.matmul %[[QX]], %[[QW]] : {{.*}} -> tensor<2x8x32xf32>
// CHECK-NOT: linalg.generic
func.func @linear_3d(%x: tensor<2x8x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%te : tensor<64x32xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<2x64x32xf32>
  %b = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t : tensor<64x32xf32>) outs(%e : tensor<2x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x32xf32>
  %o = tensor.empty() : tensor<2x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %r = linalg.batch_matmul ins(%x, %b : tensor<2x8x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}

// -----

// The same with a constant weight and linalg.broadcast: folded to one
// fp4.pack of 32x64, not one per batch.
// CHECK-LABEL: func @linear_3d_broadcast
// CHECK: fp4.quantize %{{.*}} : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK-NOT: linalg.broadcast
// FOLD-LABEL: func @linear_3d_broadcast
// FOLD-NOT: linalg.broadcast
// FOLD: fp4.pack {{.*}} -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// FOLD-NOT: fp4.quantize %{{.*}} : tensor<32x64xf32>
// FOLD: fp4.matmul
func.func @linear_3d_broadcast(%x: tensor<2x8x64xf32>) -> tensor<2x8x32xf32> {
  %wide = arith.constant dense<1.5> : tensor<32x64xf32>
  %te = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%wide : tensor<32x64xf32>) outs(%te : tensor<64x32xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x32xf32>
  %b = linalg.broadcast ins(%t : tensor<64x32xf32>) outs(%e : tensor<2x64x32xf32>) dimensions = [0]
  %o = tensor.empty() : tensor<2x8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %r = linalg.batch_matmul ins(%x, %b : tensor<2x8x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}

// -----

// Two reduction dimensions (linalg.batch_reduce_matmul): K merges to 4 x 64.
// CHECK-LABEL: func @batch_reduce
// CHECK-SAME: (%[[A:.*]]: tensor<4x16x64xf32>, %[[B:.*]]: tensor<4x64x32xf32>
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<4x16x64xf32>) {{.*}} permutation = [1, 0, 2]
// CHECK: %[[AC:.*]] = tensor.collapse_shape %[[AT]] {{\[}}[0], [1, 2]] : tensor<16x4x64xf32> into tensor<16x256xf32>
// CHECK: fp4.quantize %[[AC]] : tensor<16x256xf32>
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x64x32xf32>) {{.*}} permutation = [2, 0, 1]
// CHECK: %[[BC:.*]] = tensor.collapse_shape %[[BT]] {{\[}}[0], [1, 2]] : tensor<32x4x64xf32> into tensor<32x256xf32>
// CHECK: fp4.quantize %[[BC]] : tensor<32x256xf32>
// CHECK: fp4.matmul {{.*}} -> tensor<16x32xf32>
func.func @batch_reduce(%a: tensor<4x16x64xf32>, %b: tensor<4x64x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.batch_reduce_matmul ins(%a, %b : tensor<4x16x64xf32>, tensor<4x64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Two batch dimensions (attention heads after reshape fusion) merge into one.
// CHECK-LABEL: func @two_batch_dims
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x4x16x64xf32> into tensor<8x16x64xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x4x32x64xf32> into tensor<8x32x64xf32>
// CHECK: %[[P:.*]] = fp4.matmul {{.*}} -> tensor<8x16x32xf32>
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 4, 16, 32] : tensor<8x16x32xf32> into tensor<2x4x16x32xf32>
func.func @two_batch_dims(%a: tensor<2x4x16x64xf32>, %b: tensor<2x4x32x64xf32>, %c: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                       affine_map<(b0, b1, m, n, k) -> (b0, b1, n, k)>,
                       affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>) outs(%c : tensor<2x4x16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x32xf32>
  return %r : tensor<2x4x16x32xf32>
}

// -----

// A batch dimension plus two M dimensions: M merges (4 x 16).
// CHECK-LABEL: func @too_many_free_dims
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<2x4x16x64xf32> into tensor<2x64x64xf32>
// CHECK: %[[P:.*]] = fp4.matmul {{.*}} -> tensor<2x64x32xf32>
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0], [1, 2], [3]] output_shape [2, 4, 16, 32] : tensor<2x64x32xf32> into tensor<2x4x16x32xf32>
func.func @too_many_free_dims(%a: tensor<2x4x16x64xf32>, %b: tensor<2x32x64xf32>, %c: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, m, n, k) -> (b, s, m, k)>,
                       affine_map<(b, s, m, n, k) -> (b, n, k)>,
                       affine_map<(b, s, m, n, k) -> (b, s, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x4x16x64xf32>, tensor<2x32x64xf32>) outs(%c : tensor<2x4x16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x32xf32>
  return %r : tensor<2x4x16x32xf32>
}
