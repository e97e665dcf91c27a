// RUN: fp4-opt %s -split-input-file -fp4-macro-scale -verify-diagnostics | FileCheck %s

// fp4-macro-scale with the default options (macro-block = 256, search = 0):
// every MXFP4 (blocks of 32) quantize becomes #fp4.mxfp4_macro with the
// same scale rounding, element rounding and seed; its uses see the new type.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.*]]: tensor<4x512xf32>, %[[W:.*]]: tensor<8x512xf32>)
// CHECK: %[[QX:.*]] = fp4.quantize %[[X]] : tensor<4x512xf32> -> !fp4.tensor<4x512xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
// CHECK: %[[QW:.*]] = fp4.quantize %[[W]] : tensor<8x512xf32> -> !fp4.tensor<8x512xf4E2M1FN, #fp4.mxfp4_macro<scale_rounding = rceil, rounding = stochastic, seed = 7>, axis = 1>
// CHECK: fp4.matmul %[[QX]], %[[QW]] : !fp4.tensor<4x512xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>, !fp4.tensor<8x512xf4E2M1FN, #fp4.mxfp4_macro<scale_rounding = rceil, rounding = stochastic, seed = 7>, axis = 1> -> tensor<4x8xf32>
func.func @matmul(%x: tensor<4x512xf32>, %w: tensor<8x512xf32>) -> tensor<4x8xf32> {
  %qx = fp4.quantize %x : tensor<4x512xf32> -> !fp4.tensor<4x512xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qw = fp4.quantize %w : tensor<8x512xf32> -> !fp4.tensor<8x512xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil, rounding = stochastic, seed = 7>, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<4x512xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x512xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil, rounding = stochastic, seed = 7>, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A batched matmul with a float operand, and a dequantize user; a quantize
// along axis 0.
// CHECK-LABEL: func.func @users
// CHECK: fp4.quantize {{.*}} -> !fp4.tensor<2x4x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 2>
// CHECK: fp4.matmul {{.*}} : !fp4.tensor<2x4x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 2>, tensor<2x3x256xbf16> -> tensor<2x4x3xf32>
// CHECK: fp4.quantize {{.*}} -> !fp4.tensor<256x8xf4E2M1FN, #fp4.mxfp4_macro, axis = 0>
// CHECK: fp4.dequantize {{.*}} : !fp4.tensor<256x8xf4E2M1FN, #fp4.mxfp4_macro, axis = 0> -> tensor<256x8xbf16>
func.func @users(%x: tensor<2x4x256xf32>, %w: tensor<2x3x256xbf16>, %v: tensor<256x8xf32>) -> (tensor<2x4x3xf32>, tensor<256x8xbf16>) {
  %qx = fp4.quantize %x : tensor<2x4x256xf32> -> !fp4.tensor<2x4x256xf4E2M1FN, #fp4.mxfp4, axis = 2>
  %y = fp4.matmul %qx, %w : !fp4.tensor<2x4x256xf4E2M1FN, #fp4.mxfp4, axis = 2>, tensor<2x3x256xbf16> -> tensor<2x4x3xf32>
  %qv = fp4.quantize %v : tensor<256x8xf32> -> !fp4.tensor<256x8xf4E2M1FN, #fp4.mxfp4, axis = 0>
  %d = fp4.dequantize %qv : !fp4.tensor<256x8xf4E2M1FN, #fp4.mxfp4, axis = 0> -> tensor<256x8xbf16>
  return %y, %d : tensor<2x4x3xf32>, tensor<256x8xbf16>
}

// -----

// Other schemes are not touched and get no remark; the pass warns that it
// found nothing to rewrite.
// CHECK-LABEL: func.func @other_schemes
// CHECK: #fp4.nvfp4
// CHECK: #fp4.hif4
// CHECK: #fp4.mxfp4_macro<macro_block = 64>
// expected-warning @below {{fp4-macro-scale: nothing rewritten: the input has no fp4.quantize to #fp4.mxfp4}}
func.func @other_schemes(%x: tensor<2x256xf32>) {
  %a = fp4.quantize %x : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %b = fp4.quantize %x : tensor<2x256xf32> -> !fp4.tensor<2x256x!fp4.s1p2, #fp4.hif4, axis = 1>
  %c = fp4.quantize %x : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  return
}

// -----

// Not rewritten, with a remark each: K not a multiple of the macro block,
// MXFP4 blocks other than 32, a result that leaves the function (its
// signature is kept) or is taken apart by fp4.unpack.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: #fp4.mxfp4
// CHECK-NOT: mxfp4_macro
func.func @kept(%x: tensor<2x96xf32>, %y: tensor<2x256xf32>) -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-remark @below {{not rewritten: the blocked axis has 96 elements, not a multiple of macro-block = 256}}
  %a = fp4.quantize %x : tensor<2x96xf32> -> !fp4.tensor<2x96xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{not rewritten: MXFP4 blocks of 16 elements; macro-block scaling is defined on blocks of 32}}
  %b = fp4.quantize %y : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1>
  // expected-remark @below {{not rewritten: the result is used by 'func.return', whose types would have to change with the scheme}}
  %c = fp4.quantize %y : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{not rewritten: the result is used by 'fp4.unpack', whose types would have to change with the scheme}}
  %d = fp4.quantize %y : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %codes, %scales = fp4.unpack %d : !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x128xi8>, tensor<2x8xi8>
  return %c : !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// MXFP4 values that no fp4.quantize produces keep their type: function
// arguments (the remark is on the function) and fp4.pack results (a folded
// weight: run fp4-macro-scale before fp4-fold-constants).
// CHECK-LABEL: func.func @not_quantize_results
// CHECK: fp4.pack {{.*}} -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: fp4.matmul {{.*}} : !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// expected-remark @below {{not rewritten: block argument #0 of type '!fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>' (signatures and region arguments are kept)}}
func.func @not_quantize_results(%q: !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, %c: tensor<2x128xi8>, %s: tensor<2x8xi8>) -> tensor<2x2xf32> {
  // expected-remark @below {{not rewritten: result #0 is produced by 'fp4.pack', not by fp4.quantize}}
  %p = fp4.pack %c, %s : tensor<2x128xi8>, tensor<2x8xi8> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %q, %p : !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
