// RUN: fp4-opt %s -split-input-file -fp4-fold-constants | FileCheck %s

// fp4.split_outliers of a constant (here behind the transpose fp4-quantize
// builds for a [K, N] weight) folds into constants, and the quantize of
// the rest then folds as usual. Blocks of 4, top 1:
//   row 0: [1, -5, 2, 0.5 | 3, 3, -3, 1] -> -5 at 1, 3 at 0 (ties: lower
//          index); rest [1, 0, 2, 0.5, 0, 3, -3, 1]
//   row 1: [0, 0, 0, 0 | 7, 1, 1, 1]     -> 0 at 0, 7 at 0
// CHECK-LABEL: func @split_constant
// CHECK-DAG:   %[[V:.*]] = arith.constant dense<{{\[}}{{\[}}[-5.000000e+00], [3.000000e+00]], {{\[}}[0.000000e+00], [7.000000e+00]]]> : tensor<2x2x1xbf16>
// CHECK-DAG:   %[[I:.*]] = arith.constant dense<{{\[}}{{\[}}[1], [0]], {{\[}}[0], [0]]]> : tensor<2x2x1xi8>
// CHECK-DAG:   %[[R:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 2.000000e+00, 5.000000e-01, 0.000000e+00, 3.000000e+00, -3.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<2x8xf32>
// CHECK-NOT:   fp4.split_outliers
// CHECK:       return %[[R]], %[[V]], %[[I]]
func.func @split_constant() -> (tensor<2x8xf32>, tensor<2x2x1xbf16>, tensor<2x2x1xi8>) {
  %wt = arith.constant dense<[[1.0, 0.0], [-5.0, 0.0], [2.0, 0.0], [0.5, 0.0],
                              [3.0, 7.0], [3.0, 1.0], [-3.0, 1.0], [1.0, 1.0]]> : tensor<8x2xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %w = linalg.transpose ins(%wt : tensor<8x2xf32>) outs(%e : tensor<2x8xf32>) permutation = [1, 0]
  %r, %v, %i = fp4.split_outliers %w block 4 top 1 : tensor<2x8xf32> -> tensor<2x2x1xbf16>, tensor<2x2x1xi8>
  return %r, %v, %i : tensor<2x8xf32>, tensor<2x2x1xbf16>, tensor<2x2x1xi8>
}

// -----

// The whole outlier fallback of a constant weight folds: the split, then
// the quantize of its rest (a pack of constant components).
// CHECK-LABEL: func @split_then_quantize
// CHECK-NOT:   fp4.split_outliers
// CHECK-NOT:   fp4.quantize
// CHECK:       %[[Q:.*]] = fp4.pack %{{.*}}, %{{.*}} : tensor<2x16xi8>, tensor<2x1xi8>
// CHECK:       %[[P:.*]] = fp4.matmul %{{.*}}, %[[Q]]
// CHECK:       fp4.correction_matmul (%{{.*}}), (%{{.*}}, %{{.*}} block 32) acc %[[P]]
func.func @split_then_quantize(%x: tensor<4x32xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 100.0],
                             [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, -100.0]]> : tensor<2x32xf32>
  %r, %v, %i = fp4.split_outliers %w block 32 top 1 : tensor<2x32xf32> -> tensor<2x1x1xbf16>, tensor<2x1x1xi8>
  %q = fp4.quantize %r : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %x, %q : tensor<4x32xf32>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x2xf32>
  %y = fp4.correction_matmul (%x), (%v, %i block 32) acc %y0 : (tensor<4x32xf32>), (tensor<2x1x1xbf16>, tensor<2x1x1xi8>), tensor<4x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// fp4.residual of a constant against its quantize: x = [4, 0.375, 0.875,
// 1.375, 2.75, 3.75, -0.125, 5.5, 0...], one MXFP4 block with X = 1, so
// r = x - E2M1(x) = [0, -0.125, -0.125, -0.125, -0.25, -0.25, -0.125, -0.5,
// 0...]; 2:4 keeps r[1], r[2] | r[7], r[4] | zeros at 0, 1.
// CHECK-LABEL: func @residual_of_quantize
// CHECK-DAG:   arith.constant dense<{{\[}}{{\[}}[-1.250000e-01, -1.250000e-01], [-5.000000e-01, -2.500000e-01], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]]]> : tensor<1x8x2xbf16>
// CHECK-DAG:   arith.constant dense<{{\[}}{{\[}}[1, 2], [3, 0], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1]]]> : tensor<1x8x2xi8>
// CHECK-NOT:   fp4.residual
func.func @residual_of_quantize() -> (tensor<1x8x2xbf16>, tensor<1x8x2xi8>) {
  %x = arith.constant dense<[[4.0, 0.375, 0.875, 1.375, 2.75, 3.75, -0.125, 5.5,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xbf16>
  %q = fp4.quantize %x : tensor<1x32xbf16> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<1x32xbf16>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8x2xbf16>, tensor<1x8x2xi8>
  return %v, %i : tensor<1x8x2xbf16>, tensor<1x8x2xi8>
}

// -----

// ... and against an fp4.pack of constant components: codes 0x22 (1.0 in
// both nibbles) with scale byte 127 (X = 1) dequantize to 1.0 everywhere;
// x_i = 1 + i/64, so r_i = i/64 and every block of 4 keeps its indices 3
// and 2: 3/64, 2/64 | 7/64, 6/64 | ...
// CHECK-LABEL: func @residual_of_pack
// CHECK-DAG:   arith.constant dense<{{\[}}{{\[}}[4.687500e-02, 3.125000e-02], [1.093750e-01, 9.375000e-02], [1.718750e-01, 1.562500e-01], [2.343750e-01, 2.187500e-01], [2.968750e-01, 2.812500e-01], [3.593750e-01, 3.437500e-01], [4.218750e-01, 4.062500e-01], [4.843750e-01, 4.687500e-01]]]> : tensor<1x8x2xbf16>
// CHECK-DAG:   arith.constant dense<{{\[}}{{\[}}[3, 2], [3, 2], [3, 2], [3, 2], [3, 2], [3, 2], [3, 2], [3, 2]]]> : tensor<1x8x2xi8>
// CHECK-NOT:   fp4.residual
func.func @residual_of_pack() -> (tensor<1x8x2xbf16>, tensor<1x8x2xi8>) {
  %x = arith.constant dense<[[1.0, 1.015625, 1.03125, 1.046875, 1.0625, 1.078125, 1.09375, 1.109375,
      1.125, 1.140625, 1.15625, 1.171875, 1.1875, 1.203125, 1.21875, 1.234375,
      1.25, 1.265625, 1.28125, 1.296875, 1.3125, 1.328125, 1.34375, 1.359375,
      1.375, 1.390625, 1.40625, 1.421875, 1.4375, 1.453125, 1.46875, 1.484375]]> : tensor<1x32xf32>
  %codes = arith.constant dense<34> : tensor<1x16xi8>
  %scales = arith.constant dense<127> : tensor<1x1xi8>
  %q = fp4.pack %codes, %scales : tensor<1x16xi8>, tensor<1x1xi8> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<1x32xf32>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8x2xbf16>, tensor<1x8x2xi8>
  return %v, %i : tensor<1x8x2xbf16>, tensor<1x8x2xi8>
}

// -----

// fp4.split_channels of a constant folds too: the rest (channels zeroed) and
// the gathered channels rounded to bf16 (1.00390625 ties to 1).
// CHECK-LABEL: func @split_channels_constant
// CHECK-DAG:   %[[R:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 2.000000e+00, 0.000000e+00, 4.000000e+00], [0.000000e+00, 6.000000e+00, 0.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>
// CHECK-DAG:   %[[G:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [5.000000e+00, 7.000000e+00]]> : tensor<2x2xbf16>
// CHECK-NOT:   fp4.split_channels
// CHECK:       return %[[R]], %[[G]]
func.func @split_channels_constant() -> (tensor<2x4xf32>, tensor<2x2xbf16>) {
  %w = arith.constant dense<[[1.00390625, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %r, %g = fp4.split_channels %w channels [0, 2] : tensor<2x4xf32> -> tensor<2x2xbf16>
  return %r, %g : tensor<2x4xf32>, tensor<2x2xbf16>
}

// -----

// Values that are not constants stay.
// CHECK-LABEL: func @not_constant
// CHECK:       fp4.split_outliers
// CHECK:       fp4.residual
// CHECK:       fp4.split_channels
func.func @not_constant(%x: tensor<2x32xf32>) -> (tensor<2x32xf32>, tensor<2x1x1xbf16>, tensor<2x1x1xi8>, tensor<2x8x2xbf16>, tensor<2x8x2xi8>, tensor<2x1xbf16>) {
  %r, %v, %i = fp4.split_outliers %x block 32 top 1 : tensor<2x32xf32> -> tensor<2x1x1xbf16>, tensor<2x1x1xi8>
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %rv, %ri = fp4.residual %x, %q block 4 top 2 : tensor<2x32xf32>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x8x2xbf16>, tensor<2x8x2xi8>
  %cr, %cg = fp4.split_channels %x channels [5] : tensor<2x32xf32> -> tensor<2x1xbf16>
  return %r, %v, %i, %rv, %ri, %cg : tensor<2x32xf32>, tensor<2x1x1xbf16>, tensor<2x1x1xi8>, tensor<2x8x2xbf16>, tensor<2x8x2xi8>, tensor<2x1xbf16>
}
