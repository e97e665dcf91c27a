// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback="k=2 operands=activations" | FileCheck %s --check-prefix=ACT
// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback="k=4 operands=weights block-size=16" | FileCheck %s --check-prefix=WGT

// Both operands quantized (W4A4), bf16 product: each operand is split, the
// quantize reads the rest, and three correction terms follow the quantized
// product: outliers(x) * Q(W), Q(x) * outliers(W), outliers(x) * outliers(W).
// Partial sums are f32; the last term rounds once to bf16.
// CHECK-LABEL: func @w4a4
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
// CHECK:       %[[XR:.*]], %[[XV:.*]], %[[XI:.*]] = fp4.split_outliers %[[X]] block 32 top 1 : tensor<16x64xbf16> -> tensor<16x2x1xbf16>, tensor<16x2x1xi8>
// CHECK:       %[[QX:.*]] = fp4.quantize %[[XR]] : tensor<16x64xbf16> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[WR:.*]], %[[WV:.*]], %[[WI:.*]] = fp4.split_outliers %[[W]] block 32 top 1 : tensor<32x64xbf16> -> tensor<32x2x1xbf16>, tensor<32x2x1xi8>
// CHECK:       %[[QW:.*]] = fp4.quantize %[[WR]] : tensor<32x64xbf16> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[P0:.*]] = fp4.matmul %[[QX]], %[[QW]] : {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[P1:.*]] = fp4.correction_matmul (%[[XV]], %[[XI]] block 32), (%[[QW]]) acc %[[P0]] : {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[P2:.*]] = fp4.correction_matmul (%[[QX]]), (%[[WV]], %[[WI]] block 32) acc %[[P1]] : {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[P3:.*]] = fp4.correction_matmul (%[[XV]], %[[XI]] block 32), (%[[WV]], %[[WI]] block 32) acc %[[P2]] : {{.*}} -> tensor<16x32xbf16>
// CHECK:       return %[[P3]]
// ACT-LABEL:   func @w4a4
// ACT:         %[[XR:.*]], %[[XV:.*]], %[[XI:.*]] = fp4.split_outliers %{{.*}} block 32 top 2 : tensor<16x64xbf16> -> tensor<16x2x2xbf16>, tensor<16x2x2xi8>
// ACT:         %[[QX:.*]] = fp4.quantize %[[XR]]
// ACT-NOT:     fp4.split_outliers
// ACT:         %[[P0:.*]] = fp4.matmul %[[QX]], %[[QW:.*]] : {{.*}} -> tensor<16x32xf32>
// ACT:         %[[P1:.*]] = fp4.correction_matmul (%[[XV]], %[[XI]] block 32), (%[[QW]]) acc %[[P0]] : {{.*}} -> tensor<16x32xbf16>
// ACT-NOT:     fp4.correction_matmul
// ACT:         return %[[P1]]
// WGT-LABEL:   func @w4a4
// WGT:         %[[WR:.*]], %[[WV:.*]], %[[WI:.*]] = fp4.split_outliers %{{.*}} block 16 top 4 : tensor<32x64xbf16> -> tensor<32x4x4xbf16>, tensor<32x4x4xi8>
// WGT:         %[[QW:.*]] = fp4.quantize %[[WR]]
// WGT:         %[[P0:.*]] = fp4.matmul %[[QX:.*]], %[[QW]] : {{.*}} -> tensor<16x32xf32>
// WGT:         %[[P1:.*]] = fp4.correction_matmul (%[[QX]]), (%[[WV]], %[[WI]] block 16) acc %[[P0]] : {{.*}} -> tensor<16x32xbf16>
// WGT:         return %[[P1]]
func.func @w4a4(%x: tensor<16x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x32xbf16> {
  %qx = fp4.quantize %x : tensor<16x64xbf16> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qw = fp4.quantize %w : tensor<32x64xbf16> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----

// W4A16: only the weights are quantized, the activations stay float and
// multiply the weight outliers directly. Dynamic M is kept.
// CHECK-LABEL: func @w4a16
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<8x64xf32>)
// CHECK:       %[[WR:.*]], %[[WV:.*]], %[[WI:.*]] = fp4.split_outliers %[[W]] block 32 top 1
// CHECK:       %[[QW:.*]] = fp4.quantize %[[WR]]
// CHECK:       %[[P0:.*]] = fp4.matmul %[[X]], %[[QW]] : tensor<?x64xf32>, {{.*}} -> tensor<?x8xf32>
// CHECK:       %[[P1:.*]] = fp4.correction_matmul (%[[X]]), (%[[WV]], %[[WI]] block 32) acc %[[P0]] : (tensor<?x64xf32>), {{.*}} -> tensor<?x8xf32>
// CHECK:       return %[[P1]]
// ACT-LABEL:   func @w4a16
// ACT-NOT:     fp4.split_outliers
// WGT-LABEL:   func @w4a16
// WGT:         fp4.split_outliers %{{.*}} block 16 top 4
func.func @w4a16(%x: tensor<?x64xf32>, %w: tensor<8x64xf32>) -> tensor<?x8xf32> {
  %qw = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %x, %qw : tensor<?x64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// The default block follows each operand's scheme: NVFP4 16, HiF4 its
// 64-element group, macro-scaled MXFP4 its 32-element E8M0 block.
// CHECK-LABEL: func @schemes
// ACT-LABEL:   func @schemes
// WGT-LABEL:   func @schemes
// CHECK:       fp4.split_outliers %{{.*}} block 16 top 1 : tensor<4x128xf32> -> tensor<4x8x1xbf16>, tensor<4x8x1xi8>
// CHECK:       fp4.quantize %{{.*}} : tensor<4x128xf32> -> !fp4.tensor<4x128xf4E2M1FN, #fp4.nvfp4, axis = 1>
// CHECK:       fp4.split_outliers %{{.*}} block 64 top 1 : tensor<8x128xf32> -> tensor<8x2x1xbf16>, tensor<8x2x1xi8>
// CHECK:       fp4.quantize %{{.*}} : tensor<8x128xf32> -> !fp4.tensor<8x128x!fp4.s1p2, #fp4.hif4, axis = 1>
// CHECK:       fp4.split_outliers %{{.*}} block 32 top 1 : tensor<8x256xf32> -> tensor<8x8x1xbf16>, tensor<8x8x1xi8>
// CHECK:       fp4.quantize %{{.*}} : tensor<8x256xf32> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
func.func @schemes(%x: tensor<4x128xf32>, %w: tensor<8x128xf32>, %m: tensor<8x256xf32>, %y: tensor<4x256xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %qx = fp4.quantize %x : tensor<4x128xf32> -> !fp4.tensor<4x128xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %qw = fp4.quantize %w : tensor<8x128xf32> -> !fp4.tensor<8x128x!fp4.s1p2, #fp4.hif4, axis = 1>
  %r = fp4.matmul %qx, %qw : !fp4.tensor<4x128xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<8x128x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<4x8xf32>
  %qm = fp4.quantize %m : tensor<8x256xf32> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
  %r2 = fp4.matmul %y, %qm : tensor<4x256xf32>, !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1> -> tensor<4x8xf32>
  return %r, %r2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Batched activations with a weight shared by every batch.
// CHECK-LABEL: func @batched
// ACT-LABEL:   func @batched
// CHECK:       %[[XR:.*]], %[[XV:.*]], %[[XI:.*]] = fp4.split_outliers %{{.*}} block 32 top 1 : tensor<2x?x64xf32> -> tensor<2x?x2x1xbf16>, tensor<2x?x2x1xi8>
// CHECK:       %[[QX:.*]] = fp4.quantize %[[XR]] : tensor<2x?x64xf32>
// CHECK:       %[[P0:.*]] = fp4.matmul %[[QX]], %[[QW:.*]] : {{.*}} -> tensor<2x?x8xf32>
// CHECK:       fp4.correction_matmul (%[[XV]], %[[XI]] block 32), (%[[QW]]) acc %[[P0]] : (tensor<2x?x2x1xbf16>, tensor<2x?x2x1xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<2x?x8xf32> -> tensor<2x?x8xf32>
func.func @batched(%x: tensor<2x?x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x?x8xf32> {
  %qx = fp4.quantize %x : tensor<2x?x64xf32> -> !fp4.tensor<2x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
  %qw = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<2x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x?x8xf32>
  return %y : tensor<2x?x8xf32>
}

// -----

// Every user of the product sees the corrected sum; a quantize shared by two
// products is split for each (CSE merges the copies); discardable attributes
// of the quantize are kept.
// CHECK-LABEL: func @shared
// CHECK-SAME: (%[[X:.*]]: tensor<4x32xf32>, %[[W1:.*]]: tensor<8x32xf32>, %[[W2:.*]]: tensor<8x32xf32>)
// CHECK:       fp4.split_outliers %[[X]] block 32 top 1
// CHECK:       fp4.quantize %{{.*}} {fp4.calibration = "x"}
// CHECK:       fp4.split_outliers %[[X]] block 32 top 1
// CHECK:       fp4.quantize %{{.*}} {fp4.calibration = "x"}
// CHECK:       %[[Y1:.*]] = fp4.correction_matmul {{.*}}, (%[[W1]])
// CHECK:       %[[Y2:.*]] = fp4.correction_matmul {{.*}}, (%[[W2]])
// CHECK:       %[[S:.*]] = arith.addf %[[Y1]], %[[Y1]]
// CHECK:       return %[[S]], %[[Y2]]
// ACT-LABEL:   func @shared
// ACT-COUNT-2: fp4.split_outliers
// ACT-NOT:     fp4.split_outliers
func.func @shared(%x: tensor<4x32xf32>, %w1: tensor<8x32xf32>, %w2: tensor<8x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %qx = fp4.quantize %x {fp4.calibration = "x"} : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y1 = fp4.matmul %qx, %w1 : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x32xf32> -> tensor<4x8xf32>
  %y2 = fp4.matmul %qx, %w2 : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x32xf32> -> tensor<4x8xf32>
  %s = arith.addf %y1, %y1 : tensor<4x8xf32>
  return %s, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A product accumulated into a non-zero output by fp4-quantize's generic
// stays f32 up to that generic.
// CHECK-LABEL: func @accumulated
// ACT-LABEL:   func @accumulated
// CHECK:       %[[P0:.*]] = fp4.matmul {{.*}} -> tensor<4x8xf32>
// CHECK:       %[[P1:.*]] = fp4.correction_matmul {{.*}} acc %[[P0]] : {{.*}} -> tensor<4x8xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[P1]] : tensor<4x8xf32>)
func.func @accumulated(%x: tensor<4x32xf32>, %w: tensor<8x32xf32>, %c: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %qx = fp4.quantize %x : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x32xf32> -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%c : tensor<4x8xbf16>) {
  ^bb0(%p: f32, %acc: bf16):
    %a = arith.extf %acc : bf16 to f32
    %s = arith.addf %a, %p : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}
