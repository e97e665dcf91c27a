// RUN: fp4-opt %s -split-input-file -fp4-rotate="remarks=true" -verify-diagnostics | FileCheck %s
// Without remarks=true the same matmuls are left alone silently.
// RUN: fp4-opt %s -split-input-file -fp4-rotate 2>&1 | FileCheck %s --check-prefix=QUIET
// QUIET-NOT: remark: not rotated
// QUIET-NOT: fp4.rotate

// CHECK-LABEL: func @folded_weight
// CHECK-NOT: fp4.rotate
func.func @folded_weight(%x: tensor<1x32xf32>, %c: tensor<2x16xi8>, %s: tensor<2x1xi8>) -> tensor<1x2xf32> {
  %xq = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %w = fp4.pack %c, %s : tensor<2x16xi8>, tensor<2x1xi8> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{not rotated: rhs is a quantized value not produced by fp4.quantize (e.g. an already folded weight or a function argument), and rotating only the other operand would change the product}}
  %y = fp4.matmul %xq, %w : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// CHECK-LABEL: func @argument
// CHECK-NOT: fp4.rotate
func.func @argument(%xq: !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, %w: tensor<2x32xf32>) -> tensor<1x2xf32> {
  // expected-remark @below {{not rotated: lhs is a quantized value not produced by fp4.quantize}}
  %y = fp4.matmul %xq, %w : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<2x32xf32> -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// CHECK-LABEL: func @dynamic_k
// CHECK-NOT: fp4.rotate
func.func @dynamic_k(%a: tensor<1x?xf32>, %b: tensor<2x?xf32>) -> tensor<1x2xf32> {
  // expected-remark @below {{not rotated: K is dynamic}}
  %z = fp4.matmul %a, %b : tensor<1x?xf32>, tensor<2x?xf32> -> tensor<1x2xf32>
  return %z : tensor<1x2xf32>
}
