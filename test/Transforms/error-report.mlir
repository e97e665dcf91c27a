// RUN: fp4-opt %s -split-input-file -fp4-error-report -verify-diagnostics | FileCheck %s

// fp4-error-report on constants: one remark per fp4.quantize with the
// energy attribution relative to ||x||^2 and the fractions clipped/zeroed.
// The expected figures come from the NumPy oracle of
// test/python/test_error_report.py (spec formulas, not the C++ code) on
// x[i] = ((37 i) mod 101 - 50) / 8, i = 0..127, which holds exact grid
// points and ties relative to the block scales. The IR is left unchanged.

// -----

// CHECK-LABEL: func.func @mxfp4
// CHECK: %[[C:.*]] = arith.constant dense
// CHECK: fp4.quantize %[[C]]
func.func @mxfp4() -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<[[-6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375, 5.0, -3.0, 1.625, 6.25, -1.75, 2.875, -5.125, -0.5, 4.125, -3.875, 0.75, 5.375, -2.625, 2.0, -6.0, -1.375, 3.25, -4.75, -0.125, 4.5, -3.5, 1.125, 5.75, -2.25, 2.375, -5.625, -1.0, 3.625, -4.375, 0.25, 4.875, -3.125, 1.5, 6.125, -1.875, 2.75, -5.25],
      [-0.625, 4.0, -4.0, 0.625, 5.25, -2.75, 1.875, -6.125, -1.5, 3.125, -4.875, -0.25, 4.375, -3.625, 1.0, 5.625, -2.375, 2.25, -5.75, -1.125, 3.5, -4.5, 0.125, 4.75, -3.25, 1.375, 6.0, -2.0, 2.625, -5.375, -0.75, 3.875, -4.125, 0.5, 5.125, -2.875, 1.75, -6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375]]> : tensor<2x64xf32> loc("w")
  // expected-remark @below {{E_total 1.060e-02 = E_scale -1.813e-04 + E_dead 9.175e-05 + E_grid 1.069e-02 of ||x||^2; clipped 3.91%, zeroed 3.12% (constant, key 'w')}}
  %q = fp4.quantize %c : tensor<2x64xf32> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// CHECK-LABEL: func.func @mxfp4_rceil
// CHECK: %[[C:.*]] = arith.constant dense
// CHECK: fp4.quantize %[[C]]
func.func @mxfp4_rceil() -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1> {
  %c = arith.constant dense<[[-6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375, 5.0, -3.0, 1.625, 6.25, -1.75, 2.875, -5.125, -0.5, 4.125, -3.875, 0.75, 5.375, -2.625, 2.0, -6.0, -1.375, 3.25, -4.75, -0.125, 4.5, -3.5, 1.125, 5.75, -2.25, 2.375, -5.625, -1.0, 3.625, -4.375, 0.25, 4.875, -3.125, 1.5, 6.125, -1.875, 2.75, -5.25],
      [-0.625, 4.0, -4.0, 0.625, 5.25, -2.75, 1.875, -6.125, -1.5, 3.125, -4.875, -0.25, 4.375, -3.625, 1.0, 5.625, -2.375, 2.25, -5.75, -1.125, 3.5, -4.5, 0.125, 4.75, -3.25, 1.375, 6.0, -2.0, 2.625, -5.375, -0.75, 3.875, -4.125, 0.5, 5.125, -2.875, 1.75, -6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375]]> : tensor<2x64xf32> loc("w")
  // expected-remark @below {{E_total 1.199e-02 = E_scale 1.213e-03 + E_dead 9.175e-05 + E_grid 1.069e-02 of ||x||^2; clipped 0.00%, zeroed 7.81% (constant, key 'w')}}
  %q = fp4.quantize %c : tensor<2x64xf32> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
  return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
}

// -----

// CHECK-LABEL: func.func @nvfp4
// CHECK: %[[C:.*]] = arith.constant dense
// CHECK: fp4.quantize %[[C]]
func.func @nvfp4() -> !fp4.tensor<2x64xf4E2M1FN, #fp4.nvfp4, axis = 1> {
  %c = arith.constant dense<[[-6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375, 5.0, -3.0, 1.625, 6.25, -1.75, 2.875, -5.125, -0.5, 4.125, -3.875, 0.75, 5.375, -2.625, 2.0, -6.0, -1.375, 3.25, -4.75, -0.125, 4.5, -3.5, 1.125, 5.75, -2.25, 2.375, -5.625, -1.0, 3.625, -4.375, 0.25, 4.875, -3.125, 1.5, 6.125, -1.875, 2.75, -5.25],
      [-0.625, 4.0, -4.0, 0.625, 5.25, -2.75, 1.875, -6.125, -1.5, 3.125, -4.875, -0.25, 4.375, -3.625, 1.0, 5.625, -2.375, 2.25, -5.75, -1.125, 3.5, -4.5, 0.125, 4.75, -3.25, 1.375, 6.0, -2.0, 2.625, -5.375, -0.75, 3.875, -4.125, 0.5, 5.125, -2.875, 1.75, -6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375]]> : tensor<2x64xf32> loc("w")
  // expected-remark @below {{E_total 1.114e-02 = E_scale 4.338e-04 + E_dead 9.175e-05 + E_grid 1.061e-02 of ||x||^2; clipped 3.12%, zeroed 3.12% (constant, key 'w')}}
  %q = fp4.quantize %c : tensor<2x64xf32> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.nvfp4, axis = 1>
  return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.nvfp4, axis = 1>
}

// -----

// CHECK-LABEL: func.func @hif4
// CHECK: %[[C:.*]] = arith.constant dense
// CHECK: fp4.quantize %[[C]]
func.func @hif4() -> !fp4.tensor<2x64x!fp4.s1p2, #fp4.hif4, axis = 1> {
  %c = arith.constant dense<[[-6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375, 5.0, -3.0, 1.625, 6.25, -1.75, 2.875, -5.125, -0.5, 4.125, -3.875, 0.75, 5.375, -2.625, 2.0, -6.0, -1.375, 3.25, -4.75, -0.125, 4.5, -3.5, 1.125, 5.75, -2.25, 2.375, -5.625, -1.0, 3.625, -4.375, 0.25, 4.875, -3.125, 1.5, 6.125, -1.875, 2.75, -5.25],
      [-0.625, 4.0, -4.0, 0.625, 5.25, -2.75, 1.875, -6.125, -1.5, 3.125, -4.875, -0.25, 4.375, -3.625, 1.0, 5.625, -2.375, 2.25, -5.75, -1.125, 3.5, -4.5, 0.125, 4.75, -3.25, 1.375, 6.0, -2.0, 2.625, -5.375, -0.75, 3.875, -4.125, 0.5, 5.125, -2.875, 1.75, -6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375]]> : tensor<2x64xf32> loc("w")
  // expected-remark @below {{E_total 4.597e-03 = E_scale 1.648e-03 + E_dead 9.175e-05 + E_grid 2.857e-03 of ||x||^2; clipped 2.34%, zeroed 6.25% (constant, key 'w')}}
  %q = fp4.quantize %c : tensor<2x64xf32> -> !fp4.tensor<2x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  return %q : !fp4.tensor<2x64x!fp4.s1p2, #fp4.hif4, axis = 1>
}

// -----

// CHECK-LABEL: func.func @macro
// CHECK: %[[C:.*]] = arith.constant dense
// CHECK: fp4.quantize %[[C]]
func.func @macro() -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> {
  %c = arith.constant dense<[[-6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375, 5.0, -3.0, 1.625, 6.25, -1.75, 2.875, -5.125, -0.5, 4.125, -3.875, 0.75, 5.375, -2.625, 2.0, -6.0, -1.375, 3.25, -4.75, -0.125, 4.5, -3.5, 1.125, 5.75, -2.25, 2.375, -5.625, -1.0, 3.625, -4.375, 0.25, 4.875, -3.125, 1.5, 6.125, -1.875, 2.75, -5.25],
      [-0.625, 4.0, -4.0, 0.625, 5.25, -2.75, 1.875, -6.125, -1.5, 3.125, -4.875, -0.25, 4.375, -3.625, 1.0, 5.625, -2.375, 2.25, -5.75, -1.125, 3.5, -4.5, 0.125, 4.75, -3.25, 1.375, 6.0, -2.0, 2.625, -5.375, -0.75, 3.875, -4.125, 0.5, 5.125, -2.875, 1.75, -6.25, -1.625, 3.0, -5.0, -0.375, 4.25, -3.75, 0.875, 5.5, -2.5, 2.125, -5.875, -1.25, 3.375, -4.625, 0.0, 4.625, -3.375, 1.25, 5.875, -2.125, 2.5, -5.5, -0.875, 3.75, -4.25, 0.375]]> : tensor<2x64xf32> loc("w")
  // expected-remark @below {{E_total 1.128e-02 = E_scale 5.008e-04 + E_dead 9.175e-05 + E_grid 1.069e-02 of ||x||^2; clipped 2.34%, zeroed 3.12% (constant, key 'w')}}
  %q = fp4.quantize %c : tensor<2x64xf32> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
}

// -----

// A bf16 constant stored transposed: the pass analyses the values
// fp4-fold-constants would quantize (transposed, extended exactly). Same
// values as @mxfp4, so the same figures; the key is the NameLoc of the
// transpose (rule 3 looks through the cast).
// CHECK-LABEL: func.func @transposed_bf16
// CHECK: linalg.transpose
// CHECK: arith.extf
// CHECK: fp4.quantize
func.func @transposed_bf16() -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<[[-6.25, -0.625], [-1.625, 4.0], [3.0, -4.0], [-5.0, 0.625], [-0.375, 5.25], [4.25, -2.75], [-3.75, 1.875], [0.875, -6.125], [5.5, -1.5], [-2.5, 3.125], [2.125, -4.875], [-5.875, -0.25], [-1.25, 4.375], [3.375, -3.625], [-4.625, 1.0], [0.0, 5.625], [4.625, -2.375], [-3.375, 2.25], [1.25, -5.75], [5.875, -1.125], [-2.125, 3.5], [2.5, -4.5], [-5.5, 0.125], [-0.875, 4.75], [3.75, -3.25], [-4.25, 1.375], [0.375, 6.0], [5.0, -2.0], [-3.0, 2.625], [1.625, -5.375], [6.25, -0.75], [-1.75, 3.875], [2.875, -4.125], [-5.125, 0.5], [-0.5, 5.125], [4.125, -2.875], [-3.875, 1.75], [0.75, -6.25], [5.375, -1.625], [-2.625, 3.0], [2.0, -5.0], [-6.0, -0.375], [-1.375, 4.25], [3.25, -3.75], [-4.75, 0.875], [-0.125, 5.5], [4.5, -2.5], [-3.5, 2.125], [1.125, -5.875], [5.75, -1.25], [-2.25, 3.375], [2.375, -4.625], [-5.625, 0.0], [-1.0, 4.625], [3.625, -3.375], [-4.375, 1.25], [0.25, 5.875], [4.875, -2.125], [-3.125, 2.5], [1.5, -5.5], [6.125, -0.875], [-1.875, 3.75], [2.75, -4.25], [-5.25, 0.375]]> : tensor<64x2xbf16>
  %e = tensor.empty() : tensor<2x64xbf16>
  %t = linalg.transpose ins(%c : tensor<64x2xbf16>) outs(%e : tensor<2x64xbf16>)
      permutation = [1, 0] loc("wt")
  %f = arith.extf %t : tensor<2x64xbf16> to tensor<2x64xf32>
  // expected-remark @below {{E_total 1.060e-02 = E_scale -1.813e-04 + E_dead 9.175e-05 + E_grid 1.069e-02 of ||x||^2; clipped 3.91%, zeroed 3.12% (constant, key 'wt')}}
  %q = fp4.quantize %f : tensor<2x64xf32> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// An all-zero constant: every figure is 0 (no division by ||x||^2 = 0).
// CHECK-LABEL: func.func @zeros
func.func @zeros() -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<0.0> : tensor<4x32xf32>
  // expected-remark @below {{E_total 0.000e+00 = E_scale 0.000e+00 + E_dead 0.000e+00 + E_grid 0.000e+00 of ||x||^2; clipped 0.00%, zeroed 0.00% (constant, key '')}}
  %q = fp4.quantize %c : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// Runtime values without calibration data are not analysed (remark only).
// CHECK-LABEL: func.func @argument
// CHECK: fp4.quantize %arg0
func.func @argument(%x: tensor<4x32xf32>) -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-remark @below {{not analyzed: input is not a constant (behind linalg.transpose, arith.extf, arith.truncf), and no calibration file was given}}
  %q = fp4.quantize %x : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}
