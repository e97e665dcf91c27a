// RUN: fp4-opt %s -split-input-file -fp4-fuse-elementwise | FileCheck %s

// Exact GELU as torch-mlir spells it, a chain of single-use elementwise
// generics: one loop nest afterwards, the same scalar operations in the
// same order.
// CHECK-LABEL: func.func @gelu
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: arith.mulf
// CHECK: math.erf
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.mulf
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = arith.constant 0.707106769 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.erf %in : f32
    %s = arith.addf %r, %one : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %g: f32, %o: f32):
    %m = arith.mulf %in, %g : f32
    %h = arith.mulf %m, %half : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// Not fused: a producer with two uses (it would be computed twice), and
// anything into a reduction or a contraction (kept recognizable).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @kept(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x8xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %mm = linalg.matmul ins(%sq, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %sum, %mm, %sq : tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
