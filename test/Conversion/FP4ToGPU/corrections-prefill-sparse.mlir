// The 2:4 residual at prefill sizes on the sparse tensor cores: the
// activation prep writes fp4.residual's block-4 top-2 compressed (values by
// ascending position, metadata nibbles; variant ..._residual_sparse24) and
// one prefill kernel adds its mma.sp product into the dense product's
// accumulators, from the same dequantized weight tile
// (prefill_w4a16_smem_sparse24, with the weight outliers written into that
// tile: _entries). No stacked residual rows, no epilogue, unless an outer
// acc is added (@outer_acc). On sm_80 (PTX 7.0, no ordered metadata) the
// residual stays stacked rows (SM80). corrections-prefill-sparse-ptxas.mlir
// assembles the kernels. The 64-row products take the medium class's 64-row
// tile (8 warps: select-config-medium.mlir).
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=SM80
// Where the residual stays stacked rows, a remark says why (expected-remark
// below; on sm_80 for every chain).
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_80" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK80
// With the register form of the prefill kernel neither the weight entries
// nor the sparse residual fit: the full recipe runs term by term, said once
// per chain, and the outer-acc chain keeps its residual as stacked rows.
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 prefill-dequant=registers" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REG
// REG: remark: the weight's block-sparse part at prefill sizes is not taken by the prefill kernel
// REG-NOT: remark: the weight's block-sparse part
// REG: remark: the 2:4 residual runs as stacked dense rows, not on the sparse tensor cores: prefill: the 2:4-sparse lhs needs W4A16 with prefill-dequant=shared
// REMARK80: remark: the 2:4 residual runs as stacked dense rows, not on the sparse tensor cores: prefill: the 2:4-sparse lhs needs mma.sp::ordered_metadata (PTX 8.5; sm_80 targets PTX 7.0)

// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "activation_prep_mxfp4_top2_residual_sparse24"
// CHECK-SAME: args = ["input", "quantized.codes", "quantized.scales", "stacked0", "residual.sparse_values", "residual.sparse_meta"]
// CHECK-SAME: variant = "prefill_w4a16_smem_sparse24_entries", grid = [1, 1, 1], block = [256, 1, 1], shared_bytes = {{[0-9]+}}, args = ["stacked0", "weight.codes", "weight.scales", "residual.sparse_values", "residual.sparse_meta", "weights.values", "weights.indices", "result"]>
// CHECK-NOT: stacked_epilogue
// CHECK-LABEL: func.func @full_recipe
// CHECK-NOT: fp4.correction_matmul
// CHECK-NOT: fp4.residual
// SM80-LABEL: module attributes {fp4.gpu_manifest
// SM80-NOT: sparse24
// SM80-SAME: variant = "activation_prep_mxfp4_top2_residual"
// SM80-SAME: variant = "prefill_w4a16_smem_entries"
// SM80-NOT: sparse24
// SM80-SAME: variant = "stacked_epilogue"
func.func @full_recipe(%x: tensor<64x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<64x8xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<64x64xbf16> -> tensor<64x2x2xbf16>, tensor<64x2x2xi8>
  %qx = fp4.quantize %rest : tensor<64x64xbf16> -> !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<64x64xbf16>, !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x16x2xbf16>, tensor<64x16x2xi8>
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<8x64xbf16> -> tensor<8x2x2xbf16>, tensor<8x2x2xi8>
  %qw = fp4.quantize %wrest : tensor<8x64xbf16> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x8xf32>
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y2 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y1 : (tensor<64x2x2xbf16>, tensor<64x2x2xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<64x2x2xbf16>, tensor<64x2x2xi8>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<64x16x2xbf16>, tensor<64x16x2xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<64x16x2xbf16>, tensor<64x16x2xi8>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y5 : tensor<64x8xf32>
}

// -----

// An outer acc: the one product (f32) and the epilogue that adds the acc.
// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "prefill_w4a16_smem_sparse24", grid = [1, 1, 1], block = [256, 1, 1], shared_bytes = {{[0-9]+}}, args = ["stacked0", "weight.codes", "weight.scales", "residual.sparse_values", "residual.sparse_meta", "product0"]>
// CHECK-SAME: variant = "stacked_epilogue"
// CHECK-LABEL: func.func @outer_acc
func.func @outer_acc(%x: tensor<64x96xbf16>, %w: tensor<8x96xbf16>, %acc: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<64x96xbf16> -> tensor<64x3x2xbf16>, tensor<64x3x2xi8>
  %qx = fp4.quantize %rest : tensor<64x96xbf16> -> !fp4.tensor<64x96xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<64x96xbf16>, !fp4.tensor<64x96xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x24x2xbf16>, tensor<64x24x2xi8>
  %qw = fp4.quantize %w : tensor<8x96xbf16> -> !fp4.tensor<8x96xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y1 = fp4.correction_matmul (%qx), (%qw) acc %acc : (!fp4.tensor<64x96xf4E2M1FN, #fp4.mxfp4, axis = 1>), (!fp4.tensor<8x96xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y2 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y1 : (tensor<64x3x2xbf16>, tensor<64x3x2xi8>), (!fp4.tensor<8x96xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y3 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y2 : (tensor<64x24x2xbf16>, tensor<64x24x2xi8>), (!fp4.tensor<8x96xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y3 : tensor<64x8xf32>
}

// -----

// K not a multiple of 32 (mma.sp steps of 32): the residual stays stacked
// rows (the prefill kernel declines the sparse form before any IR changes).
// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-NOT: sparse24
// CHECK-SAME: variant = "stacked_epilogue"
// CHECK-LABEL: func.func @k_not_multiple_of_32
func.func @k_not_multiple_of_32(%x: tensor<64x48xbf16>, %w: tensor<8x48xbf16>) -> tensor<64x8xf32> {
  %qx = fp4.quantize %x : tensor<64x48xbf16> -> !fp4.tensor<64x48xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1>
  %rv, %ri = fp4.residual %x, %qx block 4 top 2 : tensor<64x48xbf16>, !fp4.tensor<64x48xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1> -> tensor<64x12x2xbf16>, tensor<64x12x2xi8>
  %qw = fp4.quantize %w : tensor<8x48xbf16> -> !fp4.tensor<8x48xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x48xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1>, !fp4.tensor<8x48xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1> -> tensor<64x8xf32>
  // expected-remark @below {{the 2:4 residual runs as stacked dense rows, not on the sparse tensor cores: the compressed residual needs K a multiple of 32 (mma.sp m16n8k32 steps), K = 48}}
  %y1 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y0 : (tensor<64x12x2xbf16>, tensor<64x12x2xi8>), (!fp4.tensor<8x48xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y1 : tensor<64x8xf32>
}
