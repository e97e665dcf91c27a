// RUN: fp4-opt %s -split-input-file -fp4-rotate | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-rotate="mode=deterministic size=16" | FileCheck %s --check-prefix=DET

// Both quantized operands get the same rotation along K before a fresh
// quantize; the original quantize ops are erased.
// CHECK-LABEL: func @w4a4
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<8x64xbf16>)
// CHECK: %[[XR:.*]] = fp4.rotate %[[X]] hadamard 32 seed 0 axis 1 : tensor<4x64xbf16> -> tensor<4x64xf32>
// CHECK: %[[XQ:.*]] = fp4.quantize %[[XR]] : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: %[[WR:.*]] = fp4.rotate %[[W]] hadamard 32 seed 0 axis 1 : tensor<8x64xbf16> -> tensor<8x64xf32>
// CHECK: %[[WQ:.*]] = fp4.quantize %[[WR]] : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: %[[Y:.*]] = fp4.matmul %[[XQ]], %[[WQ]]
// CHECK-NOT: fp4.quantize
// CHECK: return %[[Y]]
// DET-LABEL: func @w4a4
// DET-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<8x64xbf16>)
// DET: fp4.rotate %[[X]] hadamard 16 axis 1 : tensor<4x64xbf16> -> tensor<4x64xf32>
// DET: fp4.rotate %[[W]] hadamard 16 axis 1 : tensor<8x64xbf16> -> tensor<8x64xf32>
func.func @w4a4(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<4x8xf32> {
  %xq = fp4.quantize %x : tensor<4x64xbf16> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x64xbf16> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %xq, %wq : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Float operands are rotated directly (W4A16: float activations; a float
// weight); any scheme, a dynamic M, a batched lhs with a shared weight.
// CHECK-LABEL: func @float_operands
// CHECK-SAME: (%[[X:.*]]: tensor<?x128xf16>, %[[W:.*]]: tensor<16x128xf32>, %[[B:.*]]: tensor<2x3x128xf32>)
// CHECK: %[[WR:.*]] = fp4.rotate %[[W]] hadamard 32 seed 0 axis 1 : tensor<16x128xf32> -> tensor<16x128xf32>
// CHECK: %[[WQ:.*]] = fp4.quantize %[[WR]] : tensor<16x128xf32> -> !fp4.tensor<16x128x!fp4.s1p2, #fp4.hif4, axis = 1>
// CHECK: %[[XR:.*]] = fp4.rotate %[[X]] hadamard 32 seed 0 axis 1 : tensor<?x128xf16> -> tensor<?x128xf32>
// CHECK: fp4.matmul %[[XR]], %[[WQ]]
// CHECK: %[[BR:.*]] = fp4.rotate %[[B]] hadamard 32 seed 0 axis 2 : tensor<2x3x128xf32> -> tensor<2x3x128xf32>
// CHECK: %[[BQ:.*]] = fp4.quantize %[[BR]] : tensor<2x3x128xf32> -> !fp4.tensor<2x3x128xf4E2M1FN, #fp4.nvfp4, axis = 2>
// CHECK: %[[WR2:.*]] = fp4.rotate %[[W]] hadamard 32 seed 0 axis 1 : tensor<16x128xf32> -> tensor<16x128xf32>
// CHECK: fp4.matmul %[[BQ]], %[[WR2]]
func.func @float_operands(%x: tensor<?x128xf16>, %w: tensor<16x128xf32>, %b: tensor<2x3x128xf32>) -> (tensor<?x16xf32>, tensor<2x3x16xbf16>) {
  %wq = fp4.quantize %w : tensor<16x128xf32> -> !fp4.tensor<16x128x!fp4.s1p2, #fp4.hif4, axis = 1>
  %y = fp4.matmul %x, %wq : tensor<?x128xf16>, !fp4.tensor<16x128x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<?x16xf32>
  %bq = fp4.quantize %b : tensor<2x3x128xf32> -> !fp4.tensor<2x3x128xf4E2M1FN, #fp4.nvfp4, axis = 2>
  %z = fp4.matmul %bq, %w : !fp4.tensor<2x3x128xf4E2M1FN, #fp4.nvfp4, axis = 2>, tensor<16x128xf32> -> tensor<2x3x16xbf16>
  return %y, %z : tensor<?x16xf32>, tensor<2x3x16xbf16>
}

// -----

// A quantized activation shared by two matmuls gets a rotated copy per
// matmul (CSE merges identical ones); the quantize's discardable attributes
// (a calibration key) are kept.
// CHECK-LABEL: func @shared
// CHECK-SAME: (%[[X:.*]]: tensor<4x32xf32>
// CHECK: %[[R1:.*]] = fp4.rotate %[[X]] hadamard 32 seed 0 axis 1
// CHECK: %[[Q1:.*]] = fp4.quantize %[[R1]] {fp4.calibration = "x"}
// CHECK: %[[R2:.*]] = fp4.rotate %[[X]] hadamard 32 seed 0 axis 1
// CHECK: %[[Q2:.*]] = fp4.quantize %[[R2]] {fp4.calibration = "x"}
// CHECK: fp4.matmul %[[Q1]],
// CHECK: fp4.matmul %[[Q2]],
// CHECK-NOT: fp4.quantize %[[X]]
func.func @shared(%x: tensor<4x32xf32>, %w1: tensor<8x32xf32>, %w2: tensor<8x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %xq = fp4.quantize %x {fp4.calibration = "x"} : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %w1q = fp4.quantize %w1 : tensor<8x32xf32> -> !fp4.tensor<8x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %w2q = fp4.quantize %w2 : tensor<8x32xf32> -> !fp4.tensor<8x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y1 = fp4.matmul %xq, %w1q : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  %y2 = fp4.matmul %xq, %w2q : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An operand the pass cannot rotate (a folded weight: fp4.pack) leaves the
// matmul unchanged; so does a dynamic K.
// CHECK-LABEL: func @not_rotated
// CHECK-NOT: fp4.rotate
// CHECK: fp4.quantize %{{.*}} : tensor<1x32xf32>
// CHECK-NOT: fp4.rotate
func.func @not_rotated(%x: tensor<1x32xf32>, %c: tensor<2x16xi8>, %s: tensor<2x1xi8>, %a: tensor<1x?xf32>, %b: tensor<2x?xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %xq = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %w = fp4.pack %c, %s : tensor<2x16xi8>, tensor<2x1xi8> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %xq, %w : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x2xf32>
  %z = fp4.matmul %a, %b : tensor<1x?xf32>, tensor<2x?xf32> -> tensor<1x2xf32>
  return %y, %z : tensor<1x2xf32>, tensor<1x2xf32>
}
