// RUN: fp4-opt %s -split-input-file -verify-diagnostics -fp4-merge-constant-corrections | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-merge-constant-corrections -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// The statistics, summed over the cases below: two products merged (3
// terms removed), the overlapping, out-of-block and argument ones left.
// STATS:       FP4MergeConstantCorrections
// STATS-DAG:   3 terms-removed
// STATS-DAG:   2 products-merged
// STATS-DAG:   2 skipped-overlap
// STATS-DAG:   3 products-unchanged

// A constant weight split into a rest and its outliers (top 1 per block of
// 4): the terms of each lhs part (x, then the sparse s) against the two
// rhs parts become one term against their sum, exact since the rest is 0
// where the outlier was taken: rest [[1, 0, 2, 3], [0, 4, 5, 6]] plus
// outliers 7 at (0, 1) and -8 at (1, 0).
// CHECK-LABEL: func @merge_rest_and_outliers
// CHECK:       %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 7.000000e+00, 2.000000e+00, 3.000000e+00], [-8.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x4xf32>
// CHECK:       %[[P:.*]] = fp4.correction_matmul (%arg0), (%[[W]]) : (tensor<3x4xf32>), (tensor<2x4xf32>) -> tensor<3x2xf32>
// CHECK-NOT:   arith.constant
// CHECK:       %[[Y:.*]] = fp4.correction_matmul (%arg1, %arg2 block 4), (%[[W]]) acc %[[P]] : {{.*}} -> tensor<3x2xbf16>
// CHECK-NOT:   fp4.correction_matmul
// CHECK-NOT:   fp4.matmul
// CHECK:       return %[[Y]]
func.func @merge_rest_and_outliers(%x: tensor<3x4xf32>, %sv: tensor<3x1x2xbf16>,
                                   %si: tensor<3x1x2xi8>) -> tensor<3x2xbf16> {
  %w = arith.constant dense<[[1.0, 0.0, 2.0, 3.0], [0.0, 4.0, 5.0, 6.0]]> : tensor<2x4xf32>
  %ov = arith.constant dense<[[[7.0]], [[-8.0]]]> : tensor<2x1x1xbf16>
  %oi = arith.constant dense<[[[1]], [[0]]]> : tensor<2x1x1xi8>
  %y0 = fp4.matmul %x, %w : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %y1 = fp4.correction_matmul (%x), (%ov, %oi block 4) acc %y0 : (tensor<3x4xf32>), (tensor<2x1x1xbf16>, tensor<2x1x1xi8>), tensor<3x2xf32> -> tensor<3x2xf32>
  %y2 = fp4.correction_matmul (%sv, %si block 4), (%w) acc %y1 : (tensor<3x1x2xbf16>, tensor<3x1x2xi8>), (tensor<2x4xf32>), tensor<3x2xf32> -> tensor<3x2xf32>
  %y = fp4.correction_matmul (%sv, %si block 4), (%ov, %oi block 4) acc %y2 : (tensor<3x1x2xbf16>, tensor<3x1x2xi8>), (tensor<2x1x1xbf16>, tensor<2x1x1xi8>), tensor<3x2xf32> -> tensor<3x2xbf16>
  return %y : tensor<3x2xbf16>
}

// -----

// A quantized weight (an fp4.pack of constants, as fp4-fold-constants
// leaves it) is dequantized with the scheme's reference: E2M1 codes 1..4
// (0.5, 1, 1.5, 2) at scale 2^0; the outlier 9 sits where the code is 0.
// CHECK-LABEL: func @merge_packed_weight
// CHECK:       %[[W:.*]] = arith.constant dense<{{\[}}[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 0.000000e+00, 9.000000e+00, 0.000000e+00, {{.*}}]]> : tensor<1x32xf32>
// CHECK:       fp4.correction_matmul (%arg0), (%[[W]])
// CHECK-NOT:   fp4.pack
func.func @merge_packed_weight(%x: tensor<1x32xf32>) -> tensor<1x1xf32> {
  %codes = arith.constant dense<[[33, 67, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<1x16xi8>
  %scales = arith.constant dense<127> : tensor<1x1xi8>
  %q = fp4.pack %codes, %scales : tensor<1x16xi8>, tensor<1x1xi8> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %ov = arith.constant dense<[[[9.0]]]> : tensor<1x1x1xbf16>
  %oi = arith.constant dense<[[[5]]]> : tensor<1x1x1xi8>
  %y0 = fp4.matmul %x, %q : tensor<1x32xf32>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x1xf32>
  %y = fp4.correction_matmul (%x), (%ov, %oi block 32) acc %y0 : (tensor<1x32xf32>), (tensor<1x1x1xbf16>, tensor<1x1x1xi8>), tensor<1x1xf32> -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// Overlapping parts (an outlier where the rest is not 0) would round: left.
// CHECK-LABEL: func @overlap_is_left
// CHECK:       fp4.matmul
// CHECK:       fp4.correction_matmul
func.func @overlap_is_left(%x: tensor<1x4xf32>) -> tensor<1x1xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %ov = arith.constant dense<[[[0.5]]]> : tensor<1x1x1xbf16>
  %oi = arith.constant dense<[[[2]]]> : tensor<1x1x1xi8>
  // expected-warning @below {{fp4-merge-constant-corrections: no corrected product merged (1 left unchanged), first here: two rhs parts are nonzero at one position (the sum would round)}}
  %y0 = fp4.matmul %x, %w : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x1xf32>
  %y = fp4.correction_matmul (%x), (%ov, %oi block 4) acc %y0 : (tensor<1x4xf32>), (tensor<1x1x1xbf16>, tensor<1x1x1xi8>), tensor<1x1xf32> -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// A sparse index outside its block (unspecified by fp4.correction_matmul):
// no exact dense form, left.
// CHECK-LABEL: func @index_outside_block_is_left
// CHECK:       fp4.matmul
// CHECK:       fp4.correction_matmul
func.func @index_outside_block_is_left(%x: tensor<1x4xf32>) -> tensor<1x1xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 0.0]]> : tensor<1x4xf32>
  %ov = arith.constant dense<[[[0.5]]]> : tensor<1x1x1xbf16>
  %oi = arith.constant dense<[[[7]]]> : tensor<1x1x1xi8>
  // expected-warning @below {{first here: a sparse rhs index is outside its block}}
  %y0 = fp4.matmul %x, %w : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x1xf32>
  %y = fp4.correction_matmul (%x), (%ov, %oi block 4) acc %y0 : (tensor<1x4xf32>), (tensor<1x1x1xbf16>, tensor<1x1x1xi8>), tensor<1x1xf32> -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// An rhs that is not a constant (an argument) cannot be merged.
// CHECK-LABEL: func @argument_rhs_is_left
// CHECK:       fp4.matmul
// CHECK:       fp4.correction_matmul
func.func @argument_rhs_is_left(%x: tensor<1x4xf32>, %w: tensor<1x4xf32>) -> tensor<1x1xf32> {
  %ov = arith.constant dense<[[[0.5]]]> : tensor<1x1x1xbf16>
  %oi = arith.constant dense<[[[2]]]> : tensor<1x1x1xi8>
  // expected-warning @below {{no corrected product merged (1 left unchanged), first here:}}
  %y0 = fp4.matmul %x, %w : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x1xf32>
  %y = fp4.correction_matmul (%x), (%ov, %oi block 4) acc %y0 : (tensor<1x4xf32>), (tensor<1x1x1xbf16>, tensor<1x1x1xi8>), tensor<1x1xf32> -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// No corrected product at all: said once.
// expected-warning @+1 {{fp4-merge-constant-corrections: no corrected product (an fp4.matmul followed by fp4.correction_matmul terms) in the input: nothing merged}}
module {
  func.func @plain(%x: tensor<1x4xf32>, %w: tensor<1x4xf32>) -> tensor<1x1xf32> {
    %y = fp4.matmul %x, %w : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x1xf32>
    return %y : tensor<1x1xf32>
  }
}
