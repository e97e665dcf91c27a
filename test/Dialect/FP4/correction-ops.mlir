// RUN: fp4-opt %s -split-input-file | FileCheck %s
// Round trip: parse, print, parse again, print again must be identical.
// RUN: fp4-opt %s -split-input-file | fp4-opt -split-input-file | FileCheck %s
// The generic form must also round-trip.
// RUN: fp4-opt %s -split-input-file -mlir-print-op-generic | fp4-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @split_outliers
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xbf16>, %[[Y:.*]]: tensor<?x4x32xf32>)
func.func @split_outliers(%x: tensor<16x64xbf16>, %y: tensor<?x4x32xf32>) {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = fp4.split_outliers %[[X]] block 32 top 2 : tensor<16x64xbf16> -> tensor<16x2x2xbf16>, tensor<16x2x2xi8>
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<16x64xbf16> -> tensor<16x2x2xbf16>, tensor<16x2x2xi8>
  // Dynamic leading dimensions, f32 side values, one block per row.
  // CHECK: fp4.split_outliers %[[Y]] block 32 top 4 : tensor<?x4x32xf32> -> tensor<?x4x1x4xf32>, tensor<?x4x1x4xi8>
  %r2, %v2, %i2 = fp4.split_outliers %y block 32 top 4 : tensor<?x4x32xf32> -> tensor<?x4x1x4xf32>, tensor<?x4x1x4xi8>
  // The whole block: every element is an outlier.
  // CHECK: fp4.split_outliers %[[X]] block 4 top 4 : tensor<16x64xbf16> -> tensor<16x16x4xf16>, tensor<16x16x4xi8>
  %r3, %v3, %i3 = fp4.split_outliers %x block 4 top 4 : tensor<16x64xbf16> -> tensor<16x16x4xf16>, tensor<16x16x4xi8>
  return
}

// -----

// CHECK-LABEL: func @residual
func.func @residual(%x: tensor<8x64xbf16>, %d: tensor<?x64xf32>) {
  %q = fp4.quantize %x : tensor<8x64xbf16> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // CHECK: fp4.residual %{{.*}}, %{{.*}} block 4 top 2 : tensor<8x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<8x16x2xbf16>, tensor<8x16x2xi8>
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<8x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<8x16x2xbf16>, tensor<8x16x2xi8>
  // Dynamic rows, NVFP4, top-4 of 32.
  %qd = fp4.quantize %d : tensor<?x64xf32> -> !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4, axis = 1>
  // CHECK: fp4.residual %{{.*}}, %{{.*}} block 32 top 4 : tensor<?x64xf32>, !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<?x2x4xf32>, tensor<?x2x4xi8>
  %v2, %i2 = fp4.residual %d, %qd block 32 top 4 : tensor<?x64xf32>, !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<?x2x4xf32>, tensor<?x2x4xi8>
  return
}

// -----

// CHECK-LABEL: func @correction_matmul
// CHECK-SAME: (%[[V:.*]]: tensor<16x2x2xbf16>, %[[I:.*]]: tensor<16x2x2xi8>, %[[W:.*]]: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, %[[ACC:.*]]: tensor<16x8xf32>, %[[X:.*]]: tensor<16x64xbf16>, %[[WV:.*]]: tensor<8x16x2xbf16>, %[[WI:.*]]: tensor<8x16x2xi8>)
func.func @correction_matmul(%v: tensor<16x2x2xbf16>, %i: tensor<16x2x2xi8>,
    %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, %acc: tensor<16x8xf32>,
    %x: tensor<16x64xbf16>, %wv: tensor<8x16x2xbf16>, %wi: tensor<8x16x2xi8>) {
  // Sparse lhs, quantized rhs, accumulator.
  // CHECK: fp4.correction_matmul (%[[V]], %[[I]] block 32), (%[[W]]) acc %[[ACC]] : (tensor<16x2x2xbf16>, tensor<16x2x2xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<16x8xf32> -> tensor<16x8xbf16>
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) acc %acc : (tensor<16x2x2xbf16>, tensor<16x2x2xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<16x8xf32> -> tensor<16x8xbf16>
  // Dense float lhs, sparse rhs (2:4), no accumulator.
  // CHECK: fp4.correction_matmul (%[[X]]), (%[[WV]], %[[WI]] block 4) : (tensor<16x64xbf16>), (tensor<8x16x2xbf16>, tensor<8x16x2xi8>) -> tensor<16x8xf32>
  %1 = fp4.correction_matmul (%x), (%wv, %wi block 4) : (tensor<16x64xbf16>), (tensor<8x16x2xbf16>, tensor<8x16x2xi8>) -> tensor<16x8xf32>
  // Both sparse, different block sizes.
  // CHECK: fp4.correction_matmul (%[[V]], %[[I]] block 32), (%[[WV]], %[[WI]] block 4) acc %[[ACC]]
  %2 = fp4.correction_matmul (%v, %i block 32), (%wv, %wi block 4) acc %acc : (tensor<16x2x2xbf16>, tensor<16x2x2xi8>), (tensor<8x16x2xbf16>, tensor<8x16x2xi8>), tensor<16x8xf32> -> tensor<16x8xf32>
  // Both dense (a gathered-channel product).
  // CHECK: fp4.correction_matmul (%[[X]]), (%[[W]]) acc %[[ACC]] : (tensor<16x64xbf16>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<16x8xf32> -> tensor<16x8xf32>
  %3 = fp4.correction_matmul (%x), (%w) acc %acc : (tensor<16x64xbf16>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

// CHECK-LABEL: func @correction_matmul_batched
func.func @correction_matmul_batched(%v: tensor<2x?x4x1xf32>, %i: tensor<2x?x4x1xi8>,
    %w: tensor<8x128xf32>, %wb: tensor<2x8x128xbf16>) {
  // Batched sparse lhs with a shared rank-2 rhs; dynamic M.
  // CHECK: fp4.correction_matmul (%{{.*}}, %{{.*}} block 32), (%{{.*}}) : (tensor<2x?x4x1xf32>, tensor<2x?x4x1xi8>), (tensor<8x128xf32>) -> tensor<2x?x8xf32>
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<2x?x4x1xf32>, tensor<2x?x4x1xi8>), (tensor<8x128xf32>) -> tensor<2x?x8xf32>
  // CHECK: fp4.correction_matmul (%{{.*}}, %{{.*}} block 32), (%{{.*}}) : (tensor<2x?x4x1xf32>, tensor<2x?x4x1xi8>), (tensor<2x8x128xbf16>) -> tensor<2x?x8xf32>
  %1 = fp4.correction_matmul (%v, %i block 32), (%wb) : (tensor<2x?x4x1xf32>, tensor<2x?x4x1xi8>), (tensor<2x8x128xbf16>) -> tensor<2x?x8xf32>
  return
}

// -----

// CHECK-LABEL: func @split_channels
func.func @split_channels(%x: tensor<?x64xbf16>, %w: tensor<8x64xf32>) {
  // CHECK: fp4.split_channels %{{.*}} channels [3, 17, 63] : tensor<?x64xbf16> -> tensor<?x3xbf16>
  %r, %g = fp4.split_channels %x channels [3, 17, 63] : tensor<?x64xbf16> -> tensor<?x3xbf16>
  // CHECK: fp4.split_channels %{{.*}} channels [0] : tensor<8x64xf32> -> tensor<8x1xf32>
  %r2, %g2 = fp4.split_channels %w channels [0] : tensor<8x64xf32> -> tensor<8x1xf32>
  return
}
