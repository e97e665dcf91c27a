// RUN: fp4-opt %s -fp4-flatten-constant-globals | FileCheck %s
// RUN: fp4-opt %s -fp4-flatten-constant-globals -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: fp4-opt %s -fp4-flatten-constant-globals -finalize-memref-to-llvm | FileCheck %s --check-prefix=LLVM

// STATS: FP4FlattenConstantGlobals
// STATS-DAG: 2 flattened - Constant globals given a 1-D type
// STATS-DAG: 2 not-flattened - Multi-dimensional globals left as they are

// A dense weight: same elements, row-major, as one 1-D array; every use
// reads it through an expand_shape back to 2x3.
// CHECK: memref.global "private" constant @w : memref<6xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]>
// A dense_resource blob keeps its handle (no copy).
// CHECK: memref.global "private" constant @blob : memref<4xf32> = dense_resource<weights>
// Not constant, or without initializer: unchanged.
// CHECK: memref.global "private" @state : memref<2x2xf32> = dense<0.000000e+00>
// CHECK: memref.global "private" @uninit : memref<2x2xf32> = uninitialized
// CHECK-LABEL: func.func @use
// CHECK: %[[G:.*]] = memref.get_global @w : memref<6xf32>
// CHECK: %[[E:.*]] = memref.expand_shape %[[G]] {{\[\[}}0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
// CHECK: memref.load %[[E]]
// CHECK: memref.get_global @blob : memref<4xf32>
// CHECK: memref.expand_shape {{.*}} into memref<1x2x2xf32>
// LLVM: llvm.mlir.global private constant @w(dense<{{.*}}> : tensor<6xf32>) {{.*}} : !llvm.array<6 x f32>
memref.global "private" constant @w : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
memref.global "private" constant @blob : memref<1x2x2xf32> = dense_resource<weights>
memref.global "private" @state : memref<2x2xf32> = dense<0.0>
memref.global "private" @uninit : memref<2x2xf32> = uninitialized
memref.global "private" constant @scalar : memref<f32> = dense<1.0>
func.func @use(%i: index, %j: index) -> (f32, f32) {
  %w = memref.get_global @w : memref<2x3xf32>
  %x = memref.load %w[%i, %j] : memref<2x3xf32>
  %b = memref.get_global @blob : memref<1x2x2xf32>
  %y = memref.load %b[%i, %i, %j] : memref<1x2x2xf32>
  %s = memref.get_global @state : memref<2x2xf32>
  %u = memref.get_global @uninit : memref<2x2xf32>
  return %x, %y : f32, f32
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080C0"
    }
  }
#-}
