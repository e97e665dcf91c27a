// RUN: fp4-opt %s -split-input-file -convert-fp4-to-linalg -verify-diagnostics

// An op outside fp4/func/branches/scf that takes a quantized value cannot be
// rewritten onto components: the pass names it instead of leaving casts.
func.func @select_quantized(%c: i1, %a: !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
                            %b: !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<2x32xf32> {
  // expected-error @below {{'arith.select' op carries a quantized tensor (!fp4.tensor), which convert-fp4-to-linalg cannot lower}}
  %s = arith.select %c, %a, %b : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %s : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x32xf32>
  return %d : tensor<2x32xf32>
}

// -----

// A region-carrying op with a quantized block argument is refused too.
func.func @execute_region(%x: tensor<2x32xf32>) -> tensor<2x32xf32> {
  // expected-error @below {{'scf.execute_region' op carries a quantized tensor}}
  %r = scf.execute_region -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
    %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
    scf.yield %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  }
  %d = fp4.dequantize %r : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x32xf32>
  return %d : tensor<2x32xf32>
}
