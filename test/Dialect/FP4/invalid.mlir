// RUN: fp4-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{blocked axis 1 has size 100, which is not a multiple of 32 (the block structure of #fp4.mxfp4)}}
func.func @axis_not_multiple(%q: !fp4.tensor<4x100xf4E2M1FN, #fp4.mxfp4, axis = 1>)

// -----

// expected-error @+1 {{blocked axis 2 is out of range for a rank-2 tensor}}
func.func @axis_out_of_range(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 2>)

// -----

// expected-error @+1 {{blocked axis 1 must have a static size}}
func.func @dynamic_axis(%q: !fp4.tensor<4x?xf4E2M1FN, #fp4.mxfp4, axis = 1>)

// -----

// expected-error @+1 {{element type 'f8E4M3FN' does not match the element type 'f4E2M1FN' of #fp4.mxfp4}}
func.func @wrong_element(%q: !fp4.tensor<4x64xf8E4M3FN, #fp4.mxfp4, axis = 1>)

// -----

// expected-error @+1 {{element type 'f4E2M1FN' does not match the element type '!fp4.s1p2' of #fp4.hif4}}
func.func @hif4_element(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.hif4, axis = 1>)

// -----

// expected-error @+1 {{blocked axis 1 has size 96, which is not a multiple of 64 (the block structure of #fp4.hif4)}}
func.func @hif4_group(%q: !fp4.tensor<4x96x!fp4.s1p2, #fp4.hif4, axis = 1>)

// -----

// expected-error @+1 {{blocked axis 1 has size 384, which is not a multiple of 256 (the block structure of #fp4.mxfp4_macro)}}
func.func @macro_group(%q: !fp4.tensor<4x384xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>)

// -----

// expected-error @+1 {{expected a quantization scheme attribute}}
func.func @not_a_scheme(%q: !fp4.tensor<4x64xf4E2M1FN, 32 : i64, axis = 1>)

// -----

// expected-error @+1 {{quantized tensor must have rank >= 1}}
func.func @rank0(%q: !fp4.tensor<f4E2M1FN, #fp4.mxfp4, axis = 0>)

// -----

// expected-error @+1 {{#fp4.mxfp4: block_size must be an even number in [2, 1024], got 33}}
func.func @odd_block(%q: !fp4.tensor<4x66xf4E2M1FN, #fp4.mxfp4<block_size = 33>, axis = 1>)

// -----

// expected-error @+1 {{#fp4.mxfp4: 'seed' is only meaningful with rounding = stochastic}}
func.func @seed_without_stochastic(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<seed = 3>, axis = 1>)

// -----

// expected-error @+1 {{unknown parameter 'scale' for #fp4.mxfp4, expected one of: block_size, scale_rounding, rounding, seed}}
func.func @unknown_param(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale = floor>, axis = 1>)

// -----

// expected-error @+1 {{unknown value 'nearest', expected one of: floor, ceil, even, rceil}}
func.func @bad_scale_rounding(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = nearest>, axis = 1>)

// -----

// expected-error @+1 {{unknown value 'rtz', expected one of: rne, half_away, stochastic}}
func.func @bad_rounding(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.nvfp4<rounding = rtz>, axis = 1>)

// -----

// expected-error @+1 {{parameter 'rounding' given twice for #fp4.mxfp4}}
func.func @twice(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<rounding = rne, rounding = rne>, axis = 1>)

// -----

// expected-error @+1 {{expected 'true' or 'false'}}
func.func @bad_bool(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.nvfp4<four_over_six = 1>, axis = 1>)

// -----

// expected-error @+1 {{#fp4.mxfp4_macro: macro_block must be 0 (whole axis) or a multiple of 32 in [32, 65536], got 48}}
func.func @macro_block(%q: !fp4.tensor<4x96xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 48>, axis = 1>)

// -----

// expected-error @+1 {{#fp4.mxfp4_macro: search must be in [0, 256], got 1000}}
func.func @macro_search(%q: !fp4.tensor<4x256xf4E2M1FN, #fp4.mxfp4_macro<search = 1000>, axis = 1>)

// -----

// expected-error @+1 {{#fp4.nvfp4<tile2d = true> needs a tensor of rank >= 2}}
func.func @tile2d_rank(%q: !fp4.tensor<64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 0>)

// -----

// expected-error @+1 {{#fp4.nvfp4<tile2d = true> needs dimension 0 to be a static multiple of 16}}
func.func @tile2d_partner(%q: !fp4.tensor<8x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>)

// -----

// expected-error @+1 {{#fp4.nvfp4<tile2d = true> tiles the two innermost dimensions, but the blocked axis is 0}}
func.func @tile2d_axis(%q: !fp4.tensor<16x16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 0>)

// -----

func.func @quantize_shape(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'fp4.quantize' op input shape [4, 64] does not match result shape [4, 32]}}
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return
}

// -----

func.func @quantize_int(%x: tensor<4x64xi32>) {
  // expected-error @+1 {{'fp4.quantize' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %q = fp4.quantize %x : tensor<4x64xi32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return
}

// -----

func.func @dequantize_shape(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @+1 {{'fp4.dequantize' op result shape [4, 32] does not match input shape [4, 64]}}
  %x = fp4.dequantize %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x32xf32>
  return
}

// -----

func.func @matmul_k(%x: tensor<16x96xf32>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @+1 {{'fp4.matmul' op contraction sizes differ: lhs has K = 96, rhs has K = 64}}
  %y = fp4.matmul %x, %w : tensor<16x96xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x8xf32>
  return
}

// -----

func.func @matmul_axis(%x: tensor<16x64xf32>, %w: !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 0>) {
  // expected-error @+1 {{'fp4.matmul' op rhs is quantized along axis 0, but fp4.matmul contracts its last axis (K); quantize it along axis 1}}
  %y = fp4.matmul %x, %w : tensor<16x64xf32>, !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 0> -> tensor<16x64xf32>
  return
}

// -----

func.func @matmul_result(%x: tensor<16x64xf32>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @+1 {{'fp4.matmul' op result shape [8, 16] does not match the expected shape [16, 8]}}
  %y = fp4.matmul %x, %w : tensor<16x64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<8x16xf32>
  return
}

// -----

func.func @matmul_rank(%x: tensor<64xf32>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @+1 {{'fp4.matmul' op lhs must be [M, K] or [B, M, K], got rank 1}}
  %y = fp4.matmul %x, %w : tensor<64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<8xf32>
  return
}

// -----

func.func @matmul_batched_rhs(%x: tensor<16x64xf32>, %w: !fp4.tensor<2x8x64xf4E2M1FN, #fp4.mxfp4, axis = 2>) {
  // expected-error @+1 {{'fp4.matmul' op a batched rhs [B, N, K] needs a batched lhs [B, M, K]}}
  %y = fp4.matmul %x, %w : tensor<16x64xf32>, !fp4.tensor<2x8x64xf4E2M1FN, #fp4.mxfp4, axis = 2> -> tensor<16x8xf32>
  return
}

// -----

func.func @matmul_batch(%x: tensor<3x16x64xf32>, %w: !fp4.tensor<2x8x64xf4E2M1FN, #fp4.mxfp4, axis = 2>) {
  // expected-error @+1 {{'fp4.matmul' op batch sizes differ: lhs 3, rhs 2}}
  %y = fp4.matmul %x, %w : tensor<3x16x64xf32>, !fp4.tensor<2x8x64xf4E2M1FN, #fp4.mxfp4, axis = 2> -> tensor<3x16x8xf32>
  return
}

// -----

func.func @pack_count(%c: tensor<4x32xi8>) {
  // expected-error @+1 {{'fp4.pack' op expected 2 operands for '!fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>' (codes, scales), got 1}}
  %q = fp4.pack %c : tensor<4x32xi8> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return
}

// -----

func.func @pack_type(%c: tensor<4x32xi8>, %s: tensor<4x4xi8>) {
  // expected-error @+1 {{'fp4.pack' op component #1 ('scales') has type 'tensor<4x4xi8>', expected 'tensor<4x2xi8>'}}
  %q = fp4.pack %c, %s : tensor<4x32xi8>, tensor<4x4xi8> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return
}

// -----

func.func @unpack_type(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.nvfp4, axis = 1>) {
  // expected-error @+1 {{'fp4.unpack' op component #2 ('tensor_scale') has type 'tensor<1xf32>', expected 'tensor<f32>'}}
  %c, %s, %t = fp4.unpack %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<4x32xi8>, tensor<4x4xi8>, tensor<1xf32>
  return
}
