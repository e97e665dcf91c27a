// RUN: fp4-opt %s -split-input-file -fp4-fold-constants="max-elements=32" -verify-diagnostics

// A constant above max-elements is an error naming the op and both sizes;
// non-constant inputs of any size are not.
func.func @too_large(%arg: tensor<2x32xf32>) -> (!fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  %c = arith.constant dense<1.0> : tensor<2x32xf32>
  // expected-error @below {{'fp4.quantize' op constant input has 64 elements, more than max-elements = 32; not folded}}
  %q = fp4.quantize %c : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %r = fp4.quantize %arg : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q, %r : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// The limit counts the quantized tensor, also behind a transpose.
func.func @too_large_transposed() -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1> {
  %c = arith.constant dense<1.0> : tensor<32x2xbf16>
  %e = tensor.empty() : tensor<2x32xbf16>
  %t = linalg.transpose ins(%c : tensor<32x2xbf16>) outs(%e : tensor<2x32xbf16>) permutation = [1, 0]
  // expected-error @below {{'fp4.quantize' op constant input has 64 elements, more than max-elements = 32; not folded}}
  %q = fp4.quantize %t : tensor<2x32xbf16> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
}

// -----

// At the limit the constant folds (no diagnostic).
func.func @at_limit() -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<1.0> : tensor<1x32xf32>
  %q = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}
