// RUN: %python %S/Inputs/write_npz.py %t.npz @linear/arg0=1x64:0.1 @float_weights/arg0=1x64:0.1 @batched/arg0=1x1x64:0.1 x=2x64:0.01 @no_outliers/arg0=1x64:0.05 @packed/arg0=1x64:0.1 @corrected/arg0=1x64:0.1
// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback="mode=static-channels calibration=%t.npz remarks=true" -verify-diagnostics | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback="mode=static-channels calibration=%t.npz threshold=6.2" | FileCheck %s --check-prefix=HIGHER

// The calibration samples of @linear's x are [0, 0.1, ..., 6.3] (channel c
// holds 0.1 c): channels 61, 62 and 63 exceed 6.0 (6.0 itself does not).
// Activations and weights are split at them; the gathered channels (bf16)
// multiply in high precision after the quantized product of the rests.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<8x64xf32>)
// CHECK:       %[[XR:.*]], %[[XC:.*]] = fp4.split_channels %[[X]] channels [61, 62, 63] : tensor<4x64xbf16> -> tensor<4x3xbf16>
// CHECK:       %[[QX:.*]] = fp4.quantize %[[XR]] : tensor<4x64xbf16>
// CHECK:       %[[WR:.*]], %[[WC:.*]] = fp4.split_channels %[[W]] channels [61, 62, 63] : tensor<8x64xf32> -> tensor<8x3xbf16>
// CHECK:       %[[QW:.*]] = fp4.quantize %[[WR]] : tensor<8x64xf32>
// CHECK:       %[[P0:.*]] = fp4.matmul %[[QX]], %[[QW]] {{.*}} -> tensor<4x8xf32>
// CHECK:       %[[P1:.*]] = fp4.correction_matmul (%[[XC]]), (%[[WC]]) acc %[[P0]] : (tensor<4x3xbf16>), (tensor<8x3xbf16>), tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK:       return %[[P1]]
// With threshold=6.2 only channel 63 (6.3) is taken.
// HIGHER-LABEL: func @linear
// HIGHER:       fp4.split_channels %{{.*}} channels [63] : tensor<4x64xbf16> -> tensor<4x1xbf16>
func.func @linear(%x: tensor<4x64xbf16>, %w: tensor<8x64xf32>) -> tensor<4x8xbf16> {
  %qx = fp4.quantize %x : tensor<4x64xbf16> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qw = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Float weights (A4W16): the rest of x is zero at the channels, so the
// weights are only gathered.
// CHECK-LABEL: func @float_weights
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<8x64xf32>)
// CHECK:       %[[XR:.*]], %[[XC:.*]] = fp4.split_channels %[[X]] channels [61, 62, 63] : tensor<?x64xf32> -> tensor<?x3xbf16>
// CHECK:       %[[QX:.*]] = fp4.quantize %[[XR]]
// CHECK:       %{{.*}}, %[[WC:.*]] = fp4.split_channels %[[W]] channels [61, 62, 63] : tensor<8x64xf32> -> tensor<8x3xbf16>
// CHECK:       %[[P0:.*]] = fp4.matmul %[[QX]], %[[W]]
// CHECK:       fp4.correction_matmul (%[[XC]]), (%[[WC]]) acc %[[P0]] : (tensor<?x3xbf16>), (tensor<8x3xbf16>), tensor<?x8xf32> -> tensor<?x8xf32>
func.func @float_weights(%x: tensor<?x64xf32>, %w: tensor<8x64xf32>) -> tensor<?x8xf32> {
  %qx = fp4.quantize %x : tensor<?x64xf32> -> !fp4.tensor<?x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<?x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Batched activations (calibration rows flattened) with a shared weight.
// CHECK-LABEL: func @batched
// CHECK:       fp4.split_channels %{{.*}} channels [61, 62, 63] : tensor<2x?x64xf32> -> tensor<2x?x3xbf16>
// CHECK:       fp4.split_channels %{{.*}} channels [61, 62, 63] : tensor<8x64xf32> -> tensor<8x3xbf16>
// CHECK:       fp4.correction_matmul ({{.*}}), ({{.*}}) acc {{.*}} : (tensor<2x?x3xbf16>), (tensor<8x3xbf16>), tensor<2x?x8xf32> -> tensor<2x?x8xf32>
func.func @batched(%x: tensor<2x?x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x?x8xf32> {
  %qx = fp4.quantize %x : tensor<2x?x64xf32> -> !fp4.tensor<2x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
  %qw = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<2x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x?x8xf32>
  return %y : tensor<2x?x8xf32>
}

// -----

// The fp4.calibration attribute names the samples: "x" holds 0.01 * (0 ..
// 127) over two rows, at most 1.27: no channel exceeds 6.0.
// CHECK-LABEL: func @keyed_by_attribute
// CHECK-NOT:   fp4.split_channels
func.func @keyed_by_attribute(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %qx = fp4.quantize %x {fp4.calibration = "x"} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no outlier fallback: no channel of the lhs is an outlier channel}}
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @no_outliers(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %qx = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no outlier fallback: no channel of the lhs is an outlier channel}}
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @packed(%x: tensor<4x64xf32>, %c: tensor<8x32xi8>, %s: tensor<8x2xi8>) -> tensor<4x8xf32> {
  %qx = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %w = fp4.pack %c, %s : tensor<8x32xi8>, tensor<8x2xi8> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-remark @below {{no outlier fallback: rhs is quantized but not produced by fp4.quantize (its channels cannot be taken in high precision)}}
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @corrected(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %qx = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %v, %i = fp4.residual %x, %qx block 4 top 2 : tensor<4x64xf32>, !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x16x2xbf16>, tensor<4x16x2xi8>
  // expected-remark @below {{no outlier fallback: the product already has correction terms (run the static channel split before the other corrections)}}
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  %z = fp4.correction_matmul (%v, %i block 4), (%w) acc %y : (tensor<4x16x2xbf16>, tensor<4x16x2xi8>), (tensor<8x64xf32>), tensor<4x8xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
