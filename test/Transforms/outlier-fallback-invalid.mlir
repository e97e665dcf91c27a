// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback=remarks=true -verify-diagnostics | FileCheck %s

// Products left alone, each with the reason as a remark.

func.func @argument_weights(%x: tensor<4x64xf32>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<4x8xf32> {
  // expected-remark @below {{no outlier fallback: lhs is not quantized; rhs is not produced by fp4.quantize (a function argument or an already folded constant)}}
  %y = fp4.matmul %x, %w : tensor<4x64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Running the pass again does not split the rest a second time.
// CHECK-LABEL: func @already_split
// CHECK-COUNT-1: fp4.split_outliers
// CHECK-NOT:     fp4.split_outliers
func.func @already_split(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %r, %v, %i = fp4.split_outliers %x block 32 top 1 : tensor<4x64xf32> -> tensor<4x2x1xbf16>, tensor<4x2x1xi8>
  %q = fp4.quantize %r : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no outlier fallback: lhs already has its outliers split; rhs is not quantized}}
  %y = fp4.matmul %q, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @packed(%c: tensor<8x32xi8>, %s: tensor<8x2xi8>, %x: tensor<4x64xf32>) -> tensor<4x8xf32> {
  %w = fp4.pack %c, %s : tensor<8x32xi8>, tensor<8x2xi8> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no outlier fallback: lhs is not quantized; rhs is not produced by fp4.quantize (a function argument or an already folded constant)}}
  %y = fp4.matmul %x, %w : tensor<4x64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dynamic_k(%x: tensor<4x?xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %q = fp4.quantize %x : tensor<4x?xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no outlier fallback: lhs is quantized from a tensor with a dynamic K; rhs is not quantized}}
  %y = fp4.matmul %q, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Only products are rewritten: an fp4.quantize feeding something else stays.
// CHECK-LABEL: func @no_product
// CHECK-NOT:     fp4.split_outliers
func.func @no_product(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}
