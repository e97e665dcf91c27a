// Decode-sized correction chains from the chip's correctionPrefillMinM (9
// rows on every chip of the table, measured on the H200) run on the prefill
// kernel's medium class (a 16-row tile, 64 columns, K steps of 128, two K
// groups of warps) instead
// of the decode plans' stacked rows and separate outlier epilogue: the 2:4
// residual on mma.sp, the weight outliers written into the weight tile
// (FusedCorrectionChain.cpp). Where that kernel cannot take the chain (the
// weight's outliers are not proven to sit on +-0 codes: @unproven16), and
// below 9 rows (@full8), the decode plan stays; so it does when the user
// gives decode-max-m, and on chips whose 2:4 residual cannot use mma.sp
// with ordered metadata (sm_80: correctionPrefillMinM = 0) (DECODE).
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 decode-max-m=16" | FileCheck %s --check-prefix=DECODE
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=DECODE

!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>

// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "activation_prep_mxfp4_hadamard32_top2_residual_sparse24"
// CHECK-SAME: variant = "prefill_w4a16_smem_sparse24_entries", grid = [2, 1, 1], block = [256, 1, 1]
// CHECK-NOT: decode_
// CHECK-NOT: stacked_epilogue
// CHECK-LABEL: func.func @full16
// The 16-row tile's mma steps split over two K groups of 4 warps (256
// threads; PrefillMatmulKernel.cpp chooseWarpsK): after the K loop, group 1
// stores its sums in shared memory ([1][4 warps][2 sums][32 lanes] x 4 f32,
// over the drained ring), group 0 adds them and writes the result.
// CHECK: gpu.func @fp4_matmul_{{[0-9]+}}(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: scf.for
// CHECK: nvvm.mma.sp.sync
// CHECK: scf.yield
// CHECK: memref.view {{.*}} to memref<256x4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-2: vector.store {{.*}} : memref<256x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK: vector.load {{.*}} : memref<256x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: arith.addf {{.*}} : vector<4xf32>
// CHECK: vector.store {{.*}} : memref<16x96xbf16>, vector<2xbf16>
// DECODE-LABEL: module attributes {fp4.gpu_manifest
// DECODE-SAME: variant = "activation_prep_mxfp4_hadamard32_top2_residual"
// DECODE-SAME: variant = "decode_w4a16_epilogue_tail"
// DECODE-NOT: prefill_
// DECODE-LABEL: func.func @full16
func.func @full16(%x: tensor<16x256xbf16>, %w: tensor<96x256xbf16>) -> tensor<16x96xbf16> {
  %xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  %rest, %xv, %xi = fp4.split_outliers %xr block 32 top 2 : tensor<16x256xf32> -> tensor<16x8x2xbf16>, tensor<16x8x2xi8>
  %qx = fp4.quantize %rest : tensor<16x256xf32> -> !qx
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<16x256xf32>, !qx -> tensor<16x64x2xbf16>, tensor<16x64x2xi8>
  %wr = fp4.rotate %w hadamard 32 seed 0 axis 1 : tensor<96x256xbf16> -> tensor<96x256xf32>
  %wrest, %wv, %wi = fp4.split_outliers %wr block 32 top 2 : tensor<96x256xf32> -> tensor<96x8x2xbf16>, tensor<96x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<96x256xf32> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<16x64x2xbf16>, tensor<16x64x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<16x64x2xbf16>, tensor<16x64x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xbf16>
  return %y5 : tensor<16x96xbf16>
}

// -----

// 12 rows: a partial 16-row tile, the activation side's 2:4 residual only.
!qx = !fp4.tensor<12x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "activation_prep_mxfp4_residual_sparse24"
// CHECK-SAME: variant = "prefill_w4a16_smem_sparse24", grid = [2, 1, 1], block = [256, 1, 1]
// CHECK-NOT: decode_
// CHECK-LABEL: func.func @residual12
// DECODE-LABEL: module attributes {fp4.gpu_manifest
// DECODE-SAME: variant = "decode_w4a16
// DECODE-NOT: prefill_
// DECODE-LABEL: func.func @residual12
func.func @residual12(%x: tensor<12x256xbf16>, %qw: !qw) -> tensor<12x96xf32> {
  %qx = fp4.quantize %x : tensor<12x256xbf16> -> !qx
  %rv, %ri = fp4.residual %x, %qx block 4 top 2 : tensor<12x256xbf16>, !qx -> tensor<12x64x2xbf16>, tensor<12x64x2xi8>
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<12x96xf32>
  %y1 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y0 : (tensor<12x64x2xbf16>, tensor<12x64x2xi8>), (!qw), tensor<12x96xf32> -> tensor<12x96xf32>
  return %y1 : tensor<12x96xf32>
}

// -----

// Below 9 rows the decode plan is faster and stays.
!qx = !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "decode_w4a16
// CHECK-NOT: prefill_
// CHECK-LABEL: func.func @full8
func.func @full8(%x: tensor<8x256xbf16>, %w: tensor<96x256xbf16>) -> tensor<8x96xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<8x256xbf16> -> tensor<8x8x2xbf16>, tensor<8x8x2xi8>
  %qx = fp4.quantize %rest : tensor<8x256xbf16> -> !qx
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<96x256xbf16> -> tensor<96x8x2xbf16>, tensor<96x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<96x256xbf16> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<8x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<8x8x2xbf16>, tensor<8x8x2xi8>), (!qw), tensor<8x96xf32> -> tensor<8x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<8x96xf32> -> tensor<8x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<8x8x2xbf16>, tensor<8x8x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<8x96xf32> -> tensor<8x96xf32>
  return %y3 : tensor<8x96xf32>
}

// -----

// Weight outliers that are function arguments: nothing proves the quantized
// weight +-0 at their positions, which the prefill kernel needs; the decode
// plan adds their product from the activation sum and stays, quietly (it is
// a fused plan: nothing runs term by term).
!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "decode_w4a16
// CHECK-NOT: prefill_
// CHECK-LABEL: func.func @unproven16
func.func @unproven16(%x: tensor<16x256xbf16>, %qw: !qw, %wv: tensor<96x8x2xbf16>, %wi: tensor<96x8x2xi8>) -> tensor<16x96xf32> {
  %qx = fp4.quantize %x : tensor<16x256xbf16> -> !qx
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  return %y1 : tensor<16x96xf32>
}

// -----

// Outliers on both operands, no residual, 16 rows: the 16-row tile without
// the 2:4 buffers runs 4 stages (GPUConfigSelection.cpp): 4 x (4 KB of A +
// 4 KB of weight codes) + the 32 KB double-buffered weight tile = 65536
// bytes (3 stages: 57344).
!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "activation_prep_mxfp4_top2"
// CHECK-SAME: variant = "prefill_w4a16_smem_entries", grid = [1, 1, 1], block = [256, 1, 1], shared_bytes = 65536
// CHECK-LABEL: func.func @outliers16
// DECODE-LABEL: module attributes {fp4.gpu_manifest
// DECODE-NOT: prefill_
// DECODE-LABEL: func.func @outliers16
func.func @outliers16(%x: tensor<16x256xbf16>, %w: tensor<64x256xbf16>) -> tensor<16x64xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<16x256xbf16> -> tensor<16x8x2xbf16>, tensor<16x8x2xi8>
  %qx = fp4.quantize %rest : tensor<16x256xbf16> -> !qx
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<64x256xbf16> -> tensor<64x8x2xbf16>, tensor<64x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<64x256xbf16> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x64xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (!qw), tensor<16x64xf32> -> tensor<16x64xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<64x8x2xbf16>, tensor<64x8x2xi8>), tensor<16x64xf32> -> tensor<16x64xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (tensor<64x8x2xbf16>, tensor<64x8x2xi8>), tensor<16x64xf32> -> tensor<16x64xf32>
  return %y3 : tensor<16x64xf32>
}
