// RUN: %python %S/Inputs/rotate_calibration.py %t.npz
// RUN: fp4-opt %s -split-input-file -fp4-rotate="mode=two-level seed=7 remarks=true calibration=%t.npz" -verify-diagnostics | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-rotate="mode=two-level seed=7 calibration=%t.npz cross-block=true" 2>/dev/null | FileCheck %s --check-prefix=CROSS

// Equal channel energies: the greedy balancing interleaves the channels over
// the two blocks of 32; constant sample rows make the randomized Hadamard the
// rotation with the most code entropy. Both operands get the same transform.
// CHECK-LABEL: func @interleave
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK: %[[W:.*]] = arith.constant dense<2.500000e-01> : tensor<8x64xf32>
// CHECK: %[[XP:.*]] = fp4.permute %[[X]] axis 1 permutation [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63] : tensor<4x64xf32>
// CHECK: %[[XR:.*]] = fp4.rotate %[[XP]] hadamard 32 seed 7 axis 1 : tensor<4x64xf32> -> tensor<4x64xf32>
// CHECK: %[[XQ:.*]] = fp4.quantize %[[XR]]
// The weight is a splat: its permutation folds away at once.
// CHECK: %[[WR:.*]] = fp4.rotate %[[W]] hadamard 32 seed 7 axis 1
// CHECK: %[[WQ:.*]] = fp4.quantize %[[WR]]
// CHECK: fp4.matmul %[[XQ]], %[[WQ]] {fp4.intra_block_rotation = "randomized-hadamard-32"}
// CROSS-LABEL: func @interleave
// CROSS: fp4.permute
// CROSS-NOT: stride
// CROSS: fp4.rotate %{{.*}} hadamard 2 stride 32 axis 1
// CROSS: fp4.rotate %{{.*}} hadamard 32 seed 7 axis 1
func.func @interleave(%x: tensor<4x64xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<0.25> : tensor<8x64xf32>
  %xq = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{two-level rotation (calibration key '@interleave/arg0'): block energy max/min 1 -> 1; intra-block randomized-hadamard-32 (code entropy: identity}}
  %y = fp4.matmul %xq, %wq : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Energies growing with the channel index: the greedy placement (worked out
// independently) and the block energies it balances.
// CHECK-LABEL: func @ramp
// CHECK: fp4.permute %{{.*}} axis 1 permutation [63, 60, 58, 57, 55, 52, 50, 49, 47, 44, 42, 41, 39, 36, 34, 33, 31, 28, 26, 25, 23, 20, 18, 17, 15, 12, 10, 9, 7, 4, 2, 1, 62, 61, 59, 56, 54, 53, 51, 48, 46, 45, 43, 40, 38, 37, 35, 32, 30, 29, 27, 24, 22, 21, 19, 16, 14, 13, 11, 8, 6, 5, 3, 0] : tensor<4x64xbf16>
// CHECK: fp4.permute %{{.*}} axis 1 permutation [63, 60, 58, {{.*}}, 5, 3, 0] : tensor<8x64xbf16>
// CHECK: fp4.matmul {{.*}}fp4.intra_block_rotation
func.func @ramp(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<4x8xf32> {
  %xq = fp4.quantize %x : tensor<4x64xbf16> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x64xbf16> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // Block energies before: 11440 and 78000 (sums of (k+1)^2), max/min 6.82.
  // expected-remark @below {{block energy max/min 6.82 -> 1}}
  %y = fp4.matmul %xq, %wq : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Every E2M1 code equally frequent (K = 32: one block, nothing to permute):
// the identity's 4 bits of code entropy cannot be beaten, it is kept.
// CHECK-LABEL: func @flat
// CHECK-NOT: fp4.permute
// CHECK-NOT: fp4.rotate
// CHECK: fp4.matmul {{.*}}{fp4.intra_block_rotation = "identity"}
func.func @flat(%x: tensor<16x32xf32>, %w: tensor<8x32xf32>) -> tensor<16x8xf32> {
  %xq = fp4.quantize %x : tensor<16x32xf32> -> !fp4.tensor<16x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x32xf32> -> !fp4.tensor<8x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{intra-block identity (code entropy: identity 4.0000, hadamard-32}}
  %y = fp4.matmul %xq, %wq : !fp4.tensor<16x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}

// -----

// K = 256: with cross-block=true, a Hadamard across the 8 blocks of 32.
// CROSS-LABEL: func @cross_block
// CROSS: fp4.permute
// CROSS: fp4.rotate %{{.*}} hadamard 8 stride 32 axis 1
func.func @cross_block(%x: tensor<2x256xf32>, %w: tensor<8x256xf32>) -> tensor<2x8xf32> {
  %xq = fp4.quantize %x : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x256xf32> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
  // expected-remark @below {{two-level rotation}}
  %y = fp4.matmul %xq, %wq : !fp4.tensor<2x256xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<8x256xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The permutation of a layer's input moves into the rows of the constant
// weights of the matmuls producing it, through elementwise ops (here a
// gated product, as in an MLP): no runtime permutation remains. (The first
// layer has K = 32, one block: rotated but not permuted.)
// CHECK-LABEL: func @mlp
// CHECK-SAME: (%[[Z:.*]]: tensor<4x32xf32>)
// CHECK-DAG: %[[G:.*]] = arith.constant dense<5.000000e-01> : tensor<64x32xf32>
// CHECK-DAG: %[[U:.*]] = arith.constant dense<-5.000000e-01> : tensor<64x32xf32>
// CHECK: %[[GR:.*]] = fp4.rotate %[[G]] hadamard 32 seed 7 axis 1
// CHECK: %[[GP:.*]] = fp4.permute %[[GR]] axis 0 permutation [0, 2, 4, {{.*}}, 61, 63] : tensor<64x32xf32>
// CHECK: fp4.quantize %[[GP]]
// CHECK: %[[UR:.*]] = fp4.rotate %[[U]] hadamard 32 seed 7 axis 1
// CHECK: %[[UP:.*]] = fp4.permute %[[UR]] axis 0 permutation [0, 2, 4, {{.*}}, 61, 63] : tensor<64x32xf32>
// CHECK: fp4.quantize %[[UP]]
// CHECK: %[[H:.*]] = arith.mulf
// CHECK-NOT: fp4.permute
// CHECK: %[[HR:.*]] = fp4.rotate %[[H]] hadamard 32 seed 7 axis 1
// CHECK: fp4.quantize %[[HR]] {fp4.calibration = "layer2.in"}
// CHECK: fp4.matmul {{.*}}fp4.intra_block_rotation = "randomized-hadamard-32"
func.func @mlp(%z: tensor<4x32xf32>) -> tensor<4x8xf32> {
  %g = arith.constant dense<0.5> : tensor<64x32xf32>
  %u = arith.constant dense<-0.5> : tensor<64x32xf32>
  %d = arith.constant dense<0.25> : tensor<8x64xf32>
  %zq = fp4.quantize %z : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %gq = fp4.quantize %g : tensor<64x32xf32> -> !fp4.tensor<64x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %uq = fp4.quantize %u : tensor<64x32xf32> -> !fp4.tensor<64x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{two-level rotation (calibration key '@mlp/arg0')}}
  %gate = fp4.matmul %zq, %gq : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<64x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x64xf32>
  // expected-remark @below {{two-level rotation (calibration key '@mlp/arg0')}}
  %up = fp4.matmul %zq, %uq : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<64x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x64xf32>
  %h = arith.mulf %gate, %up : tensor<4x64xf32>
  %hq = fp4.quantize %h {fp4.calibration = "layer2.in"} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %dq = fp4.quantize %d : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{two-level rotation (calibration key 'layer2.in')}}
  %y = fp4.matmul %hq, %dq : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
