// RUN: fp4-opt %s -split-input-file -convert-fp4-to-linalg | FileCheck %s --check-prefix=TAG
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-linalg -one-shot-bufferize="bufferize-function-boundaries" -fp4-contraction-to-runtime-call | FileCheck %s
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-linalg -one-shot-bufferize="bufferize-function-boundaries" -fp4-contraction-to-runtime-call -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// The block-sparse correction products: convert-fp4-to-linalg tags their
// gather loops, and after bufferization they become runtime calls on views
// of the buffers (test/python/test_sparse_product_runtime.py runs both
// lowerings and compares their bits).

// Statistics add up over the split inputs: the three products.
// STATS: FP4ContractionToRuntimeCall
// STATS: 3 sparse-converted - Block-sparse correction products replaced by a runtime call

// TAG-LABEL: func.func @sparse_dense
// TAG: linalg.generic
// TAG-SAME: fp4.sparse_product = {kind = "sparse_dense", lhs_block_size = 32 : i64}
// CHECK-LABEL: func.func private @fp4_cpu_sparse_dense_f32(memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xi8, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @sparse_dense
// CHECK: %[[V:.*]] = memref.reinterpret_cast {{.*}} sizes: [1, 16, 4, 2], strides: [0,
// CHECK: %[[I:.*]] = memref.reinterpret_cast {{.*}} sizes: [1, 16, 4, 2], strides: [0,
// CHECK: %[[D:.*]] = memref.reinterpret_cast {{.*}} sizes: [1, 24, 128], strides: [0,
// CHECK: %[[C:.*]] = memref.reinterpret_cast {{.*}} sizes: [1, 16, 24], strides: [0,
// CHECK: %[[B:.*]] = arith.constant 32 : i64
// CHECK: call @fp4_cpu_sparse_dense_f32(%[[V]], %[[I]], %[[D]], %[[C]], %[[B]])
// CHECK-NOT: linalg.generic {{.*}}reduction
func.func @sparse_dense(%v: tensor<16x4x2xf32>, %i: tensor<16x4x2xi8>, %w: tensor<24x128xf32>,
                        %acc: tensor<16x24xf32>) -> tensor<16x24xf32> {
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) acc %acc
      : (tensor<16x4x2xf32>, tensor<16x4x2xi8>), (tensor<24x128xf32>), tensor<16x24xf32> -> tensor<16x24xf32>
  return %0 : tensor<16x24xf32>
}

// -----

// dense x sparse: the same kernel, the output viewed transposed (its last
// two sizes and strides swapped), the rhs shared by the batch (stride 0).
// TAG-LABEL: func.func @dense_sparse
// TAG: linalg.generic
// TAG-SAME: fp4.sparse_product = {kind = "dense_sparse", rhs_block_size = 8 : i64}
// CHECK-LABEL: func.func @dense_sparse
// CHECK: %[[V:.*]] = memref.reinterpret_cast {{.*}} sizes: [3, 24, 8, 1], strides: [0,
// CHECK: %[[D:.*]] = memref.reinterpret_cast {{.*}} sizes: [3, 16, 64]
// CHECK: %[[C:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [3, 24, 16], strides: [%[[S0:.*]], %[[S2:.*]], %[[S1:.*]]]
// CHECK: call @fp4_cpu_sparse_dense_f32(%[[V]], %{{.*}}, %[[D]], %[[C]], %{{.*}})
func.func @dense_sparse(%x: tensor<3x16x64xf32>, %v: tensor<24x8x1xf32>, %i: tensor<24x8x1xi8>) -> tensor<3x16x24xf32> {
  %0 = fp4.correction_matmul (%x), (%v, %i block 8)
      : (tensor<3x16x64xf32>), (tensor<24x8x1xf32>, tensor<24x8x1xi8>) -> tensor<3x16x24xf32>
  return %0 : tensor<3x16x24xf32>
}

// -----

// TAG-LABEL: func.func @sparse_sparse
// TAG: linalg.generic {{.*}}"reduction", "reduction", "reduction"]
// TAG-SAME: fp4.sparse_product = {kind = "sparse_sparse", lhs_block_size = 32 : i64, rhs_block_size = 4 : i64}
// CHECK-LABEL: func.func private @fp4_cpu_sparse_sparse_f32
// CHECK-LABEL: func.func @sparse_sparse
// CHECK: %[[B1:.*]] = arith.constant 32 : i64
// CHECK: %[[B2:.*]] = arith.constant 4 : i64
// CHECK: call @fp4_cpu_sparse_sparse_f32({{.*}}, %[[B1]], %[[B2]])
func.func @sparse_sparse(%v: tensor<16x4x2xbf16>, %i: tensor<16x4x2xi8>, %wv: tensor<24x32x2xbf16>,
                         %wi: tensor<24x32x2xi8>) -> tensor<16x24xf32> {
  %0 = fp4.correction_matmul (%v, %i block 32), (%wv, %wi block 4)
      : (tensor<16x4x2xbf16>, tensor<16x4x2xi8>), (tensor<24x32x2xbf16>, tensor<24x32x2xi8>) -> tensor<16x24xf32>
  return %0 : tensor<16x24xf32>
}
