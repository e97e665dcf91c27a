// The two-level rotation's run-time ops on the GPU: fp4.permute as a
// gather kernel over a host-constant i32 table, and fp4.rotate groups that
// one thread cannot hold (stride > 1: the cross-block Hadamard; size > 64)
// staged in shared memory, one CTA per group with a barrier per butterfly
// stage. The interpreter tests (test/python/test_gpu_rotate_permute_kernels.py)
// check the bits; rotate-permute-ptxas.mlir assembles them.
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @permute
// CHECK: arith.constant dense<[29, 1, 5, {{.*}}]> : tensor<64xi32>
// CHECK: call @fp4_permute_0_launch({{.*}}) : (memref<4x64xbf16>, memref<64xi32>, memref<4x64xbf16>) -> ()
// CHECK-NOT: fp4.permute
// CHECK: gpu.func @fp4_permute_0(%{{.*}}: memref<4x64xbf16> {{.*}}, %{{.*}}: memref<64xi32> {{.*}}llvm.readonly{{.*}}, %{{.*}}: memref<4x64xbf16> {{.*}})
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: memref.load %{{.*}} : memref<64xi32>
// CHECK: arith.minui
func.func @permute(%x: tensor<4x64xbf16>) -> tensor<4x64xbf16> {
  %p = fp4.permute %x axis 1 permutation [29, 1, 5, 21, 20, 49, 27, 41, 32, 6, 17, 55, 7, 31, 28, 3, 11, 36, 52, 18, 22, 13, 46, 59, 19, 15, 60, 26, 43, 42, 54, 2, 10, 53, 51, 24, 33, 39, 47, 9, 25, 44, 48, 61, 50, 45, 12, 14, 35, 16, 56, 0, 57, 4, 62, 40, 63, 38, 58, 23, 8, 34, 37, 30] : tensor<4x64xbf16>
  return %p : tensor<4x64xbf16>
}

// -----

// Cross-block Hadamard of the two-level mode: 8 blocks of 32 (one group per
// row of 256), 128 pairs per stage -> 128 threads, 3 stages.
// CHECK-LABEL: func.func @cross_block
// CHECK-NOT: fp4.rotate
// CHECK: gpu.func @fp4_rotate_0(%{{.*}}: memref<2x256xf32> {{.*}}, %{{.*}}: memref<2x256xf32> {{.*}}) workgroup(%[[S:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-COUNT-4: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @cross_block(%x: tensor<2x256xf32>) -> tensor<2x256xf32> {
  %r = fp4.rotate %x hadamard 8 stride 32 axis 1 : tensor<2x256xf32> -> tensor<2x256xf32>
  return %r : tensor<2x256xf32>
}

// -----

// Size 128 (stride 1) no longer stays on the host: 64 pairs per stage.
// CHECK-LABEL: func.func @wide
// CHECK-NOT: fp4.rotate
// CHECK: gpu.func @fp4_rotate_0
// CHECK-SAME: workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
func.func @wide(%x: tensor<4x256xbf16>) -> (tensor<4x256xf32>, tensor<4x256xf32>) {
  %r = fp4.rotate %x hadamard 128 seed 3 axis 1 : tensor<4x256xbf16> -> tensor<4x256xf32>
  return %r, %r : tensor<4x256xf32>, tensor<4x256xf32>
}
