// RUN: fp4-opt %s -split-input-file -fp4-residual="remarks=true" -verify-diagnostics

// Products left alone, each with the reason as a remark.

func.func @float_activations(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %qw = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no residual correction: lhs is not quantized}}
  %y = fp4.matmul %x, %qw : tensor<4x64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @argument(%x: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{no residual correction: lhs is not produced by fp4.quantize (a function argument or an already folded constant)}}
  %y = fp4.matmul %x, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Running the pass again adds nothing.
func.func @already_corrected(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<4x64xf32>, !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x16x2xbf16>, tensor<4x16x2xi8>
  // expected-remark @below {{no residual correction: lhs already has a residual correction}}
  %y = fp4.matmul %q, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  %z = fp4.correction_matmul (%v, %i block 4), (%w) acc %y : (tensor<4x16x2xbf16>, tensor<4x16x2xi8>), (tensor<8x64xf32>), tensor<4x8xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
