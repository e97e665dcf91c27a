// Quantize ops the GPU kernels decline stay on the host (lowered by the CPU
// pipeline) with a remark naming the reason.
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s

// The macro-block search sums f64 errors per candidate sequentially.
// CHECK-LABEL: func.func @macro_search
// CHECK: fp4.quantize
!m = !fp4.tensor<4x512xf4E2M1FN, #fp4.mxfp4_macro<search = 8>, axis = 1>
func.func @macro_search(%x: tensor<4x512xbf16>) -> !m {
  // expected-remark @below {{stays on the host: no GPU quantize kernel: macro-block search (search > 0) is not implemented on the GPU}}
  %q = fp4.quantize %x : tensor<4x512xbf16> -> !m
  return %q : !m
}

// -----

// A tile's 16 lines are 16 lanes, so a fused rotation must fit one line.
// CHECK-LABEL: func.func @tiles_rotated
// CHECK: fp4.rotate
// CHECK: fp4.quantize
!t = !fp4.tensor<32x256xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
func.func @tiles_rotated(%x: tensor<32x256xbf16>) -> !t {
  %r = fp4.rotate %x hadamard 32 axis 1 : tensor<32x256xbf16> -> tensor<32x256xf32>
  // expected-remark @below {{stays on the host: no GPU quantize kernel: NVFP4 16x16 tiles with a fused rotation larger than 16}}
  %q = fp4.quantize %r : tensor<32x256xf32> -> !t
  return %q : !t
}

// -----

// Chunks are whole i32 words of codes (8 elements): a 6-element block in a
// 12-element row has none.
// CHECK-LABEL: func.func @odd_block
// CHECK: fp4.quantize
!o = !fp4.tensor<4x12xf4E2M1FN, #fp4.mxfp4<block_size = 6>, axis = 1>
func.func @odd_block(%x: tensor<4x12xf32>) -> !o {
  // expected-remark @below {{stays on the host: no GPU quantize kernel: no thread chunk (a multiple of 8 elements dividing K) fits the block, rotation and macro sizes}}
  %q = fp4.quantize %x : tensor<4x12xf32> -> !o
  return %q : !o
}

// -----

// The dequantizer's chunks are 8 or 16 elements as well.
// CHECK-LABEL: func.func @odd_dequantize
// CHECK: fp4.dequantize
!o2 = !fp4.tensor<4x12xf4E2M1FN, #fp4.mxfp4<block_size = 6>, axis = 1>
func.func @odd_dequantize(%q: !o2) -> tensor<4x12xf32> {
  // expected-remark @below {{stays on the host: no GPU dequantize kernel: K is not a multiple of 8 elements}}
  %x = fp4.dequantize %q : !o2 -> tensor<4x12xf32>
  return %x : tensor<4x12xf32>
}
