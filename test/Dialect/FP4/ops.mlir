// RUN: fp4-opt %s -split-input-file | FileCheck %s
// Round trip: parse, print, parse again, print again must be identical.
// RUN: fp4-opt %s -split-input-file | fp4-opt -split-input-file | FileCheck %s
// The generic form must also round-trip.
// RUN: fp4-opt %s -split-input-file -mlir-print-op-generic | fp4-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @quantize_all_schemes
func.func @quantize_all_schemes(%x: tensor<4x256xf32>) {
  // CHECK: fp4.quantize %{{.*}} : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %0 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // Default parameters are elided when printing.
  // CHECK: !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %1 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4<block_size = 32, scale_rounding = floor, rounding = rne>, axis = 1>
  // CHECK: #fp4.mxfp4<block_size = 16, scale_rounding = even, rounding = stochastic, seed = 7>
  %2 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4<seed = 7, rounding = stochastic, scale_rounding = even, block_size = 16>, axis = 1>
  // CHECK: #fp4.mxfp4<scale_rounding = ceil, rounding = half_away>
  %3 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil, rounding = half_away>, axis = 1>
  // CHECK: #fp4.mxfp4<scale_rounding = rceil>
  %4 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
  // CHECK: !fp4.tensor<4x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %5 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.nvfp4<>, axis = 1>
  // CHECK: #fp4.nvfp4<four_over_six = true>
  %6 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.nvfp4<four_over_six = true, tile2d = false>, axis = 1>
  // CHECK: !fp4.tensor<4x256x!fp4.s1p2, #fp4.hif4, axis = 1>
  %7 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256x!fp4.s1p2, #fp4.hif4, axis = 1>
  // CHECK: #fp4.mxfp4_macro
  %8 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
  // CHECK: #fp4.mxfp4_macro<macro_block = 128, search = 8, scale_rounding = even>
  %9 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4_macro<search = 8, macro_block = 128, scale_rounding = even>, axis = 1>
  // CHECK: #fp4.mxfp4_macro<macro_block = 0>
  %10 = fp4.quantize %x : tensor<4x256xf32> -> !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>
  return
}

// -----

// CHECK-LABEL: func @nvfp4_tiles
func.func @nvfp4_tiles(%w: tensor<32x64xbf16>) -> tensor<32x64xf32> {
  // CHECK: %[[Q:.*]] = fp4.quantize %{{.*}} : tensor<32x64xbf16> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  %q = fp4.quantize %w : tensor<32x64xbf16> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  // CHECK: fp4.unpack %[[Q]] {{.*}} -> tensor<32x32xi8>, tensor<32x4xi8>, tensor<f32>
  %c, %s, %t = fp4.unpack %q : !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> -> tensor<32x32xi8>, tensor<32x4xi8>, tensor<f32>
  // CHECK: fp4.dequantize
  %d = fp4.dequantize %q : !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> -> tensor<32x64xf32>
  return %d : tensor<32x64xf32>
}

// -----

// Components of every scheme, including a non-innermost axis and dynamic dims.
// CHECK-LABEL: func @pack_unpack
func.func @pack_unpack(%c0: tensor<?x16xi8>, %s0: tensor<?x1xi8>,
                       %c1: tensor<32x8xi8>, %m1: tensor<1x8xi32>,
                       %c2: tensor<2x128xi8>, %s2: tensor<2x8xi8>, %f2: tensor<2x1xbf16>,
                       %c3: tensor<8x16xi8>, %s3: tensor<1x16xi8>, %t3: tensor<f32>) {
  // CHECK: fp4.pack %{{.*}}, %{{.*}} : tensor<?x16xi8>, tensor<?x1xi8> -> !fp4.tensor<?x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q0 = fp4.pack %c0, %s0 : tensor<?x16xi8>, tensor<?x1xi8> -> !fp4.tensor<?x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // Blocked along axis 0: codes pack pairs of rows.
  // CHECK: -> !fp4.tensor<64x8x!fp4.s1p2, #fp4.hif4, axis = 0>
  %q1 = fp4.pack %c1, %m1 : tensor<32x8xi8>, tensor<1x8xi32> -> !fp4.tensor<64x8x!fp4.s1p2, #fp4.hif4, axis = 0>
  // CHECK: -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
  %q2 = fp4.pack %c2, %s2, %f2 : tensor<2x128xi8>, tensor<2x8xi8>, tensor<2x1xbf16> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
  // CHECK: -> !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4, axis = 0>
  %q3 = fp4.pack %c3, %s3, %t3 : tensor<8x16xi8>, tensor<1x16xi8>, tensor<f32> -> !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4, axis = 0>
  return
}

// -----

// CHECK-LABEL: func @matmul_forms
func.func @matmul_forms(%x: tensor<16x64xbf16>, %xb: tensor<2x16x64xf32>,
                        %w: !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>,
                        %wb: !fp4.tensor<2x32x64xf4E2M1FN, #fp4.nvfp4, axis = 2>,
                        %f: tensor<32x64xf16>) {
  // W4A16.
  // CHECK: fp4.matmul %{{.*}}, %{{.*}} : tensor<16x64xbf16>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xf32>
  %0 = fp4.matmul %x, %w : tensor<16x64xbf16>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xf32>
  // W4A4 with mixed schemes and a bf16 result.
  %q = fp4.quantize %x : tensor<16x64xbf16> -> !fp4.tensor<16x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  // CHECK: -> tensor<16x32xbf16>
  %1 = fp4.matmul %q, %w : !fp4.tensor<16x64x!fp4.s1p2, #fp4.hif4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xbf16>
  // Batched lhs with a shared rank-2 rhs, and fully batched.
  // CHECK: -> tensor<2x16x32xf32>
  %2 = fp4.matmul %xb, %w : tensor<2x16x64xf32>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x16x32xf32>
  // CHECK: -> tensor<2x16x32xf32>
  %3 = fp4.matmul %xb, %wb : tensor<2x16x64xf32>, !fp4.tensor<2x32x64xf4E2M1FN, #fp4.nvfp4, axis = 2> -> tensor<2x16x32xf32>
  // Float operands only.
  // CHECK: -> tensor<16x32xf32>
  %4 = fp4.matmul %x, %f : tensor<16x64xbf16>, tensor<32x64xf16> -> tensor<16x32xf32>
  return
}

// -----

// Folders: unpack(pack) forwards the components, pack(unpack) the tensor.
// RUN: fp4-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefix=CANON
// CANON-LABEL: func @fold_pack_unpack
// CANON-SAME: (%[[Q:.*]]: !fp4.tensor
func.func @fold_pack_unpack(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, %c: tensor<4x32xi8>, %s: tensor<4x2xi8>)
    -> (!fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<4x32xi8>, tensor<4x2xi8>) {
  %c1, %s1 = fp4.unpack %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x32xi8>, tensor<4x2xi8>
  %q1 = fp4.pack %c1, %s1 : tensor<4x32xi8>, tensor<4x2xi8> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q2 = fp4.pack %c, %s : tensor<4x32xi8>, tensor<4x2xi8> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %c2, %s2 = fp4.unpack %q2 : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x32xi8>, tensor<4x2xi8>
  // CANON-NOT: fp4.pack
  // CANON-NOT: fp4.unpack
  // CANON: return %[[Q]], %{{.*}}, %{{.*}}
  return %q1, %c2, %s2 : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<4x32xi8>, tensor<4x2xi8>
}
