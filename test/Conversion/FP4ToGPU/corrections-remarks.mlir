// Recipe ops the GPU kernels cannot take stay on the host (lowered by the
// CPU pipeline) with a remark naming the reason.
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s

// Batched correction products are not lowered to the GPU.
// CHECK-LABEL: func.func @batched
// CHECK: fp4.correction_matmul
func.func @batched(%v: tensor<2x4x2x2xbf16>, %i: tensor<2x4x2x2xi8>, %w: tensor<2x8x64xbf16>) -> tensor<2x4x8xf32> {
  // expected-remark @below {{stays on the host: the GPU correction product takes rank-2 operands (batched products stay on the host)}}
  %y = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<2x4x2x2xbf16>, tensor<2x4x2x2xi8>), (tensor<2x8x64xbf16>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A rotation group wider than 64 does not fit one thread's registers.
// CHECK-LABEL: func.func @wide_rotation
// CHECK: fp4.rotate
func.func @wide_rotation(%x: tensor<4x256xbf16>) -> (tensor<4x256xf32>, tensor<4x256xf32>) {
  // expected-remark @below {{stays on the host: the rotation kernel takes power-of-two groups of up to 64 dividing the last axis}}
  %r = fp4.rotate %x hadamard 128 axis 1 : tensor<4x256xbf16> -> tensor<4x256xf32>
  return %r, %r : tensor<4x256xf32>, tensor<4x256xf32>
}

// -----

// The two-level mode's cross-block rotation (stride 32) has no GPU kernel.
// CHECK-LABEL: func.func @strided_rotation
// CHECK: fp4.rotate
func.func @strided_rotation(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {
  // expected-remark @below {{stays on the host: the GPU rotation kernel needs a static rank-2 input rotated along its last axis with stride 1}}
  %r = fp4.rotate %x hadamard 8 stride 32 axis 1 : tensor<4x256xf32> -> tensor<4x256xf32>
  return %r : tensor<4x256xf32>
}

// -----

// Dynamic shapes stay on the host.
// CHECK-LABEL: func.func @dynamic
// CHECK: fp4.split_outliers
func.func @dynamic(%x: tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x2x1xbf16>, tensor<?x2x1xi8>) {
  // expected-remark @below {{stays on the host: the GPU block top-k needs a static, non-empty rank-2 input (quantized along its last axis)}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 1 : tensor<?x64xbf16> -> tensor<?x2x1xbf16>, tensor<?x2x1xi8>
  return %r, %v, %i : tensor<?x64xbf16>, tensor<?x2x1xbf16>, tensor<?x2x1xi8>
}

// -----

// A rotation read only by a quantize is fused into the quantizer, without
// a remark.
// CHECK-LABEL: func.func @fused
// CHECK-NOT: fp4.rotate
// CHECK: call @fp4_quantize_0_launch
func.func @fused(%x: tensor<4x256xbf16>) -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %r = fp4.rotate %x hadamard 32 axis 1 : tensor<4x256xbf16> -> tensor<4x256xbf16>
  %q = fp4.quantize %r : tensor<4x256xbf16> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
}
