// RUN: fp4-opt %s -split-input-file -fp4-residual | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-residual="sparsity=topk operands=both" | FileCheck %s --check-prefix=TOPK
// RUN: fp4-opt %s -split-input-file -fp4-residual="sparsity=topk k=2 block-size=16 operands=weights" | FileCheck %s --check-prefix=WGT

// Default: 2:4 residual of the activations, one correction term against the
// quantized weights; the sum is rounded once to the bf16 result.
// CHECK-LABEL: func @w4a4
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
// CHECK:       %[[QX:.*]] = fp4.quantize %[[X]]
// CHECK:       %[[V:.*]], %[[I:.*]] = fp4.residual %[[X]], %[[QX]] block 4 top 2 : tensor<16x64xbf16>, !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x16x2xbf16>, tensor<16x16x2xi8>
// CHECK:       %[[QW:.*]] = fp4.quantize %[[W]]
// CHECK:       %[[P0:.*]] = fp4.matmul %[[QX]], %[[QW]] : {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[P1:.*]] = fp4.correction_matmul (%[[V]], %[[I]] block 4), (%[[QW]]) acc %[[P0]] : {{.*}} -> tensor<16x32xbf16>
// CHECK:       return %[[P1]]
// Top-4 of 32 on both operands: the residual of x times Q(W), Q(x) times
// the residual of W, and the two residuals.
// TOPK-LABEL:  func @w4a4
// TOPK:        %[[V:.*]], %[[I:.*]] = fp4.residual %{{.*}}, %[[QX:.*]] block 32 top 4 : {{.*}} -> tensor<16x2x4xbf16>, tensor<16x2x4xi8>
// TOPK:        %[[WV:.*]], %[[WI:.*]] = fp4.residual %{{.*}}, %[[QW:.*]] block 32 top 4 : {{.*}} -> tensor<32x2x4xbf16>, tensor<32x2x4xi8>
// TOPK:        %[[P0:.*]] = fp4.matmul %[[QX]], %[[QW]]
// TOPK:        %[[P1:.*]] = fp4.correction_matmul (%[[V]], %[[I]] block 32), (%[[QW]]) acc %[[P0]]
// TOPK:        %[[P2:.*]] = fp4.correction_matmul (%[[QX]]), (%[[WV]], %[[WI]] block 32) acc %[[P1]]
// TOPK:        %[[P3:.*]] = fp4.correction_matmul (%[[V]], %[[I]] block 32), (%[[WV]], %[[WI]] block 32) acc %[[P2]] : {{.*}} -> tensor<16x32xbf16>
// WGT-LABEL:   func @w4a4
// WGT:         %[[WV:.*]], %[[WI:.*]] = fp4.residual %{{.*}}, %[[QW:.*]] block 16 top 2 : {{.*}} -> tensor<32x4x2xbf16>, tensor<32x4x2xi8>
// WGT:         %[[P0:.*]] = fp4.matmul %[[QX:.*]], %[[QW]]
// WGT:         fp4.correction_matmul (%[[QX]]), (%[[WV]], %[[WI]] block 16) acc %[[P0]]
// WGT-NOT:     fp4.correction_matmul
func.func @w4a4(%x: tensor<16x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x32xbf16> {
  %qx = fp4.quantize %x : tensor<16x64xbf16> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qw = fp4.quantize %w : tensor<32x64xbf16> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----

// A4W16 with dynamic tokens and batches: the residual of the activations
// times the float weights, shared by every batch.
// CHECK-LABEL: func @batched_float_weights
// CHECK:       %[[V:.*]], %[[I:.*]] = fp4.residual %{{.*}}, %[[QX:.*]] block 4 top 2 : tensor<2x?x64xf32>, {{.*}} -> tensor<2x?x16x2xbf16>, tensor<2x?x16x2xi8>
// CHECK:       %[[P0:.*]] = fp4.matmul %[[QX]], %[[W:.*]] : {{.*}} -> tensor<2x?x8xf32>
// CHECK:       fp4.correction_matmul (%[[V]], %[[I]] block 4), (%[[W]]) acc %[[P0]] : (tensor<2x?x16x2xbf16>, tensor<2x?x16x2xi8>), (tensor<8x64xf32>), tensor<2x?x8xf32> -> tensor<2x?x8xf32>
// TOPK-LABEL:  func @batched_float_weights
// TOPK:        fp4.residual {{.*}} block 32 top 4
// WGT-LABEL:   func @batched_float_weights
// WGT-NOT:     fp4.residual
func.func @batched_float_weights(%x: tensor<2x?x64xf32>, %w: tensor<8x64xf32>) -> tensor<2x?x8xf32> {
  %qx = fp4.quantize %x : tensor<2x?x64xf32> -> !fp4.tensor<2x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
  %y = fp4.matmul %qx, %w : !fp4.tensor<2x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>, tensor<8x64xf32> -> tensor<2x?x8xf32>
  return %y : tensor<2x?x8xf32>
}

// -----

// Each scheme's quantized value is the residual's reference (NVFP4 here).
// CHECK-LABEL: func @nvfp4
// CHECK:       fp4.residual %{{.*}}, %{{.*}} block 4 top 2 : tensor<4x32xf16>, !fp4.tensor<4x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<4x8x2xbf16>, tensor<4x8x2xi8>
func.func @nvfp4(%x: tensor<4x32xf16>, %w: tensor<8x32xf16>) -> tensor<4x8xf16> {
  %qx = fp4.quantize %x : tensor<4x32xf16> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x32xf4E2M1FN, #fp4.nvfp4, axis = 1>, tensor<8x32xf16> -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
