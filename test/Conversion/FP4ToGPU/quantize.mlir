// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90" -split-input-file | FileCheck %s
// The quantize kernels at the gpu level (QuantizeKernel.cpp): the thread
// chunks, vector accesses with their alignment, cross-lane reductions and
// rotation stages, and the two launches of NVFP4. Bit-exactness of what they
// compute is test/python/test_gpu_quant_kernels.py.

// Fast path, MXFP4 after Hadamard-32 on a large bf16 activation: 32
// elements per thread (four 16-byte loads), the rotation and the block max
// in registers (no shuffle), the rotated values rounded to the rotation's
// bf16 result, one 16-byte code store and one scale byte per thread.
// CHECK: variant = "quantize_mxfp4_hadamard32"
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK-SAME: %[[IN:[^:]*]]: memref<512x4096xbf16> {llvm.noalias, llvm.readonly}
// CHECK-SAME: %[[CODES:[^:]*]]: memref<512x2048xi8> {llvm.noalias}
// CHECK-SAME: %[[SCALES:[^:]*]]: memref<512x128xi8> {llvm.noalias}
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-COUNT-4: vector.load %[[IN]][{{.*}}] {alignment = 16 : i64} : memref<512x4096xbf16>, vector<8xbf16>
// CHECK-NOT: gpu.shuffle
// CHECK: arith.constant 0.176776692 : f32
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[CODES]][{{.*}}] {alignment = 16 : i64} : memref<512x2048xi8>, vector<16xi8>
// CHECK: memref.store %{{.*}}, %[[SCALES]][{{.*}}] : memref<512x128xi8>
!q0 = !fp4.tensor<512x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @mx_hadamard32(%x: tensor<512x4096xbf16>) -> !q0 {
  %r = fp4.rotate %x hadamard 32 axis 1 : tensor<512x4096xbf16> -> tensor<512x4096xbf16>
  %q = fp4.quantize %r : tensor<512x4096xbf16> -> !q0
  return %q : !q0
}

// -----

// A small activation takes 8-element chunks: the Hadamard stages h = 8, 16
// and the block max cross 4 lanes by xor shuffles (offsets 1, 2); with a
// seed, lane-dependent sign selects. Codes are one 4-byte store per thread.
// CHECK: variant = "quantize_mxfp4_hadamard32", grid = [128, 1, 1], block = [64, 1, 1]
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<16x4096xbf16>, vector<8xbf16>
// CHECK: arith.negf
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}} : f32
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}} : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}} : i32
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<16x2048xi8>, vector<4xi8>
!q1 = !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @mx_hadamard32_small(%x: tensor<16x4096xbf16>) -> !q1 {
  %r = fp4.rotate %x hadamard 32 seed 7 axis 1 : tensor<16x4096xbf16> -> tensor<16x4096xf32>
  %q = fp4.quantize %r : tensor<16x4096xf32> -> !q1
  return %q : !q1
}

// -----

// NVFP4: a grid-stride kernel folds the finite max |x| bits into the
// zeroed scratch word (unsigned atomic max), then the quantizer reads it,
// computes g_enc / g_dec, and thread 0 stores the tensor scale.
// The plan: amax first, both with the scratch buffer.
// CHECK: scratch = ["scratch.amax" : memref<1xi32>], launches = [
// CHECK-SAME: <@fp4_kernels::@fp4_quantize_0_amax, variant = "tensor_amax", {{[^>]*}}"scratch.amax"
// CHECK-SAME: <@fp4_kernels::@fp4_quantize_0, variant = "quantize_nvfp4", {{[^>]*}}"scratch.amax"
// CHECK-LABEL: gpu.func @fp4_quantize_0_amax(
// CHECK-SAME: memref<48x256xbf16> {llvm.noalias, llvm.readonly}
// CHECK-SAME: %[[AMAX:[^:]*]]: memref<1xi32> {llvm.noalias})
// CHECK: scf.for
// CHECK: vector.load
// CHECK: scf.yield
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.atomic_rmw maxu %{{.*}}, %[[AMAX]][%{{.*}}] : (i32, memref<1xi32>) -> i32
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK-SAME: %[[SCRATCH:[^:]*]]: memref<1xi32> {llvm.noalias, llvm.readonly}
// CHECK-SAME: %[[TS:[^:]*]]: memref<f32> {llvm.noalias}
// CHECK: memref.load %[[SCRATCH]]
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %[[TS]][] : memref<f32>
!q2 = !fp4.tensor<48x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
func.func @nvfp4(%x: tensor<48x256xbf16>) -> !q2 {
  %q = fp4.quantize %x : tensor<48x256xbf16> -> !q2
  return %q : !q2
}

// -----

// NVFP4 16x16 tiles with four_over_six: 16 lanes hold a tile's lines; the
// two candidates' f64 errors go through shared memory and the tile's first
// lane sums them in the reference's order (nested loops), then broadcasts
// its choice.
// CHECK: variant = "quantize_nvfp4_4over6_tile2d"
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK-SAME: workgroup(%[[SMEM:[^ ]*]] : memref<1024xf64, #gpu.address_space<workgroup>>)
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK: memref.store %{{.*}}, %[[SMEM]]
// CHECK: gpu.barrier
// CHECK: scf.if %{{.*}} -> (f64)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[SMEM]]
// CHECK: gpu.barrier
// CHECK: gpu.shuffle  idx
!q3 = !fp4.tensor<32x256xf4E2M1FN, #fp4.nvfp4<four_over_six = true, tile2d = true>, axis = 1>
func.func @nvfp4_tiles(%x: tensor<32x256xf32>) -> !q3 {
  %q = fp4.quantize %x : tensor<32x256xf32> -> !q3
  return %q : !q3
}

// -----

// A macro block spanning the whole row (512 lanes): a warp max, then one
// word per warp through shared memory; the bf16 factor is stored once per
// row.
// CHECK: variant = "quantize_macro"
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK-SAME: workgroup(%[[WG:[^ ]*]] : memref<16xi32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: memref.store %{{.*}}, %[[WG]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[WG]]
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: memref.store %{{.*}} : memref<4x1xbf16>
!q4 = !fp4.tensor<4x4096xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>
func.func @macro_row(%x: tensor<4x4096xbf16>) -> !q4 {
  %q = fp4.quantize %x : tensor<4x4096xbf16> -> !q4
  return %q : !q4
}

// -----

// HiF4: the metadata word is ORed over the 8 lanes of a 64-group and
// stored by the group's first lane.
// CHECK: variant = "quantize_hif4"
// CHECK-LABEL: gpu.func @fp4_quantize_0(
// CHECK: vector.load %{{.*}} : memref<8x256xf16>, vector<8xf16>
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK: arith.ori
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK: arith.ori
// CHECK: memref.store %{{.*}} : memref<8x4xi32>
!q5 = !fp4.tensor<8x256x!fp4.s1p2, #fp4.hif4, axis = 1>
func.func @hif4(%x: tensor<8x256xf16>) -> !q5 {
  %q = fp4.quantize %x : tensor<8x256xf16> -> !q5
  return %q : !q5
}

// -----

// Dequantize: 16 elements per thread (an 8-byte code load, 32-byte bf16
// stores), one scale byte per 32-block.
// CHECK: variant = "dequantize_mxfp4"
// CHECK-LABEL: gpu.func @fp4_dequantize_0(
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<64x512xi8>, vector<8xi8>
// CHECK: memref.load %{{.*}} : memref<64x32xi8>
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 16 : i64} : memref<64x1024xbf16>, vector<8xbf16>
!q6 = !fp4.tensor<64x1024xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @dequantize(%q: !q6) -> tensor<64x1024xbf16> {
  %x = fp4.dequantize %q : !q6 -> tensor<64x1024xbf16>
  return %x : tensor<64x1024xbf16>
}
