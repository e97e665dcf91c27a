// RUN: fp4-opt %s -split-input-file -fp4-contraction-to-runtime-call | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-contraction-to-runtime-call="report-skipped=true" -verify-diagnostics -o /dev/null
// RUN: fp4-opt %s -fp4-contraction-to-runtime-call -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// STATS: FP4ContractionToRuntimeCall
// STATS-DAG: 4 converted - Contractions replaced by a runtime call
// STATS-DAG: 4 skipped - Contractions left as linalg ops

// A matmul: rank-3 views with a unit batch of stride 0, the operands'
// own strides and offsets.
// CHECK-LABEL: func.func private @fp4_cpu_contract_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul
// CHECK: %[[BA:.*]], %[[OA:.*]], %[[SA:.*]]:2, %[[TA:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[A:.*]] = memref.reinterpret_cast %[[BA]] to offset: [%[[OA]]], sizes: [1, 4, 8], strides: [0, %[[TA]]#0, %[[TA]]#1]
// CHECK: %[[BB:.*]], %[[OB:.*]], %[[SB:.*]]:2, %[[TB:.*]]:2 = memref.extract_strided_metadata %arg1
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[BB]] to offset: [%[[OB]]], sizes: [1, 8, 16], strides: [0, %[[TB]]#0, %[[TB]]#1]
// CHECK: %[[C:.*]] = memref.reinterpret_cast {{.*}} sizes: [1, 4, 16]
// CHECK: call @fp4_cpu_contract_f32(%[[A]], %[[B]], %[[C]])
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// What convert-fp4-to-linalg emits for [B, M, K] x [N, K] (the weight not
// batched): the rhs view is [b, k, n] with strides (0, 1, K); the dynamic
// batch and row sizes come from the buffers.
// CHECK-LABEL: func.func @batched_lhs_weight_rhs
// CHECK: %[[B:.*]] = memref.dim %arg0, %c0
// CHECK: %[[M:.*]] = memref.dim %arg0, %c1
// CHECK: %[[BR:.*]], %{{.*}}, %{{.*}}:2, %[[TR:.*]]:2 = memref.extract_strided_metadata %arg1
// CHECK: memref.reinterpret_cast %[[BR]] to offset: [%{{.*}}], sizes: [%[[B]], 64, 32], strides: [0, %[[TR]]#1, %[[TR]]#0]
// CHECK: call @fp4_cpu_contract_f32
#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (n, k)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batched_lhs_weight_rhs(%x: memref<?x?x64xf32>, %w: memref<32x64xf32>, %y: memref<?x?x32xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xf32>, memref<32x64xf32>) outs(%y : memref<?x?x32xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Inputs in the other order (the output's rows come from the second input)
// and the sum written `p + acc`: the second input is the kernel's lhs.
// CHECK-LABEL: func.func @swapped_inputs
// CHECK: %[[BX:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg1
// CHECK: %[[L:.*]] = memref.reinterpret_cast %[[BX]]
// CHECK: %[[BW:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[R:.*]] = memref.reinterpret_cast %[[BW]]
// CHECK: call @fp4_cpu_contract_f32(%[[L]], %[[R]],
#w = affine_map<(m, n, k) -> (k, n)>
#x = affine_map<(m, n, k) -> (m, k)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @swapped_inputs(%w: memref<8x16xf32>, %x: memref<4x8xf32>, %y: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#w, #x, #o],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<8x16xf32>, memref<4x8xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%r: f32, %l: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batch matmul (attention's QK^T after torch-mlir's reshapes).
// CHECK-LABEL: func.func @batch_matmul
// CHECK: sizes: [96, 32, 64], strides: [%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: call @fp4_cpu_contract_f32
func.func @batch_matmul(%q: memref<96x32x64xf32>, %k: memref<96x64x32xf32>, %s: memref<96x32x32xf32>) {
  linalg.batch_matmul ins(%q, %k : memref<96x32x64xf32>, memref<96x64x32xf32>) outs(%s : memref<96x32x32xf32>)
  return
}

// -----

// Left as they are, with the reason under report-skipped.
// CHECK-LABEL: func.func @not_f32
// CHECK: linalg.matmul
func.func @not_f32(%a: memref<4x8xf16>, %b: memref<8x16xf16>, %c: memref<4x16xf16>) {
  // expected-remark @below {{contraction left as loops: an operand is not an f32 memref (the kernel is f32 only)}}
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x16xf16>) outs(%c : memref<4x16xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @fast_math_body
// CHECK: linalg.generic
#x2 = affine_map<(m, n, k) -> (m, k)>
#w2 = affine_map<(m, n, k) -> (k, n)>
#o2 = affine_map<(m, n, k) -> (m, n)>
func.func @fast_math_body(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %y: memref<4x16xf32>) {
  // expected-remark @below {{contraction left as loops: the body is not `out + lhs * rhs` without fast-math flags}}
  linalg.generic {indexing_maps = [#x2, #w2, #o2],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r fastmath<contract> : f32
    %s = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two batch dimensions: more than the kernel's [b, m, n].
// CHECK-LABEL: func.func @two_batch_dims
// CHECK: linalg.generic
#x3 = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>
#w3 = affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>
#o3 = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>
func.func @two_batch_dims(%x: memref<2x3x4x8xf32>, %w: memref<2x3x8x16xf32>, %y: memref<2x3x4x16xf32>) {
  // expected-remark @below {{contraction left as loops: the output is not [batch?, rows, cols] over every parallel dimension}}
  linalg.generic {indexing_maps = [#x3, #w3, #o3],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x4x8xf32>, memref<2x3x8x16xf32>) outs(%y : memref<2x3x4x16xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// On tensors (before bufferization) nothing is rewritten.
// CHECK-LABEL: func.func @on_tensors
// CHECK: linalg.matmul
func.func @on_tensors(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-remark @below {{contraction left as loops: not on buffers (run after bufferization)}}
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Not a product (a top-k rank count, as convert-fp4-to-linalg's block
// top-k emits): not a candidate, so neither counted as skipped nor
// remarked on.
// CHECK-LABEL: func.func @rank_count
// CHECK: linalg.generic
#a4 = affine_map<(i, j, k) -> (i, j)>
#b4 = affine_map<(i, j, k) -> (i, k)>
func.func @rank_count(%x: memref<4x8xf32>, %y: memref<4x8xi32>) {
  linalg.generic {indexing_maps = [#a4, #b4, #a4],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xi32>) {
  ^bb0(%u: f32, %v: f32, %n: i32):
    %gt = arith.cmpf ogt, %v, %u : f32
    %one = arith.extui %gt : i1 to i32
    %s = arith.addi %n, %one : i32
    linalg.yield %s : i32
  }
  return
}
