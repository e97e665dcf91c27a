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

// A rotation group (size * stride) beyond a CTA's static shared memory.
// CHECK-LABEL: func.func @huge_rotation_group
// CHECK: fp4.rotate
func.func @huge_rotation_group(%x: tensor<2x16384xf32>) -> tensor<2x16384xf32> {
  // expected-remark @below {{stays on the host: a rotation group of 16384 elements (size * stride) exceeds the 12288 f32 that fit a CTA's static shared memory}}
  %r = fp4.rotate %x hadamard 256 stride 64 axis 1 : tensor<2x16384xf32> -> tensor<2x16384xf32>
  return %r : tensor<2x16384xf32>
}

// -----

// Permutations of rank-3 tensors (batched activations) stay on the host.
// CHECK-LABEL: func.func @permute_rank3
// CHECK: fp4.permute
func.func @permute_rank3(%x: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  // expected-remark @below {{stays on the host: the GPU permutation kernel needs a static, non-empty rank-2 float or integer tensor permuted along its last axis}}
  %p = fp4.permute %x axis 2 permutation [1, 0, 3, 2] : tensor<2x2x4xf32>
  return %p : tensor<2x2x4xf32>
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

// -----

// A decode chain whose fused plan the decode kernel declines (a HiF4 weight:
// no bf16 fragment form) runs term by term, decided before anything is
// built. (It used to fail after the activation side was lowered: "operand
// #0 does not dominate this use".)
// CHECK-LABEL: func.func @hif4_decode_chain
// CHECK-NOT: fp4.correction_matmul
// CHECK: call @fp4_split_outliers_0_launch
// CHECK: call @fp4_matmul_{{[0-9]+}}_launch
// CHECK: call @fp4_correction_{{[0-9]+}}_launch
// CHECK-NOT: fp4.correction_matmul
// CHECK: return
func.func @hif4_decode_chain(%x: tensor<1x4096xbf16>, %w: tensor<64x4096xbf16>) -> tensor<1x64xf32> {
  %qx = fp4.quantize %x : tensor<1x4096xbf16> -> !fp4.tensor<1x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %rest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<64x4096xbf16> -> tensor<64x128x2xbf16>, tensor<64x128x2xi8>
  %qw = fp4.quantize %rest : tensor<64x4096xbf16> -> !fp4.tensor<64x4096x!fp4.s1p2, #fp4.hif4, axis = 1>
  // expected-remark @below {{runs on the reference matmul kernel (bit-exact, untuned, far slower): weight: scheme 'hif4' has no bf16 fragment dequantizer}}
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<1x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<64x4096x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<1x64xf32>
  // expected-remark @below {{the decode kernel does not take the fused plan (weight: scheme 'hif4' has no bf16 fragment dequantizer): the terms run one by one}}
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<1x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<64x128x2xbf16>, tensor<64x128x2xi8>), tensor<1x64xf32> -> tensor<1x64xf32>
  return %y1 : tensor<1x64xf32>
}
