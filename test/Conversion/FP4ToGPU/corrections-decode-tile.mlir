// decode-outliers=tile (sm_90a; the default above 16 stacked rows): a decode-sized chain whose weight
// outliers are split from the same weight (so the quantized rest is +-0 at
// their positions) runs on the decode kernel's warp-group form with the
// outliers written into its shared weight tile: the activation prep
// writes no [K, M] sum and the product takes the outliers' values and
// indices. A chain whose weight parts are plain arguments (nothing proves
// Q(W) +-0 there) keeps the default plan, the tail form gathering from
// the activation sum, and a remark says why. Other decode products are
// untouched (M = 1 plain: mma.sync).
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=tile" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=tile" 2>/dev/null | FileCheck %s
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=tile remarks=false" -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// Without the option proven chains with at most 2 entries per 32-element
// unit take the register patch (decode_w4a16_wgmma_patch_epilogue) above
// 16 stacked rows, with 128 weight rows per CTA (the chain with the 2:4
// residual, 32 rows: 112 CTAs of 512 threads), and from 9 rows (the top-1
// and top-2 chains, 16 rows: 64 rows per CTA; docs/Performance.md
// "Session 20" and "Session 22"), and no remark is given (the unproven chain's plan is the
// default one, the tail form gathering from the activation sum);
// decode-outliers=loop keeps every chain off the entries forms.
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" 2>/dev/null | FileCheck %s --check-prefix=DEF
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=loop" 2>/dev/null | FileCheck %s --check-prefix=LOOP
// decode-outliers=sparse takes only constant entries (packed at compile
// time, decode-matmul-wgmma-sparse-ptxas.mlir): entries split at run time
// keep the register patch, each chain with a remark saying why.
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=sparse" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPREMARK
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=sparse" 2>/dev/null | FileCheck %s --check-prefix=SPARSE
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=packed" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PKREMARK
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-outliers=packed" 2>/dev/null | FileCheck %s --check-prefix=PACKED

// REMARK-NOT: stays on the host
// REMARK: remark: decode-outliers=tile: the weight outliers are multiplied from the activation sum, not written into the weight operand (the quantized weight is not proven +-0 at their positions)
// REMARK-NOT: decode-outliers=tile
// QUIET-NOT: remark

// CHECK-DAG: variant = "decode_w4a16_wgmma_entries_epilogue"
// CHECK-DAG: "stacked0", "weight.codes", "weight.scales", "weights.values", "weights.indices", "result"
// CHECK-DAG: variant = "decode_w4a16_epilogue_tail"
// CHECK-DAG: variant = "decode_w4a16"

// DEF-DAG: @fp4_matmul_{{[0-9]+}}_launch(memref<16x256xbf16>, {{[^}]*}}memref<96x8x2xi8>, memref<16x96xf32>) attributes {{.*}}variant = "decode_w4a16_wgmma_patch_epilogue", grid = [2, 1, 1], block = [256, 1, 1]
// DEF-DAG: @fp4_matmul_{{[0-9]+}}_launch(memref<32x256xbf16>, {{[^}]*}}memref<96x8x2xi8>, memref<16x96xf32>) attributes {{.*}}variant = "decode_w4a16_wgmma_patch_epilogue", grid = [1, 1, 1], block = [512, 1, 1]
// DEF-DAG: @fp4_matmul_{{[0-9]+}}_launch(memref<16x256xbf16>, {{[^}]*}}memref<96x8x1xi8>, memref<16x96xf32>) attributes {{.*}}variant = "decode_w4a16_wgmma_patch_epilogue", grid = [2, 1, 1], block = [256, 1, 1]
// DEF-DAG: @fp4_matmul_{{[0-9]+}}_launch(memref<32x256xbf16>, {{.*}}memref<256x16xf32>{{.*}}variant = "decode_w4a16_epilogue_tail"

// SPREMARK-COUNT-3: remark: decode-outliers=sparse: the entries are not constants; the entries take the register patch
// SPREMARK: remark: decode-outliers=sparse: the weight outliers are multiplied from the activation sum, not written into the weight operand (the quantized weight is not proven +-0 at their positions)
// SPARSE-NOT: decode_w4a16_wgmma_sparse_epilogue
// SPARSE-COUNT-3: variant = "decode_w4a16_wgmma_patch_epilogue"
// The patch's packed entries (decode-outliers=packed) need constants too:
// the same chains keep the patch from their stored arrays.
// PKREMARK-COUNT-3: remark: decode-outliers=packed: the entries are not constants; the entries take the register patch from their stored arrays
// PACKED-NOT: decode_w4a16_wgmma_patch_packed_epilogue
// PACKED-COUNT-3: variant = "decode_w4a16_wgmma_patch_epilogue"

// LOOP-NOT: decode_w4a16_wgmma_entries_epilogue
// LOOP-NOT: decode_w4a16_wgmma_patch_epilogue
// LOOP-DAG: variant = "prefill_w4a16_smem_entries"
// LOOP-DAG: variant = "decode_w4a16_epilogue"

!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>

func.func @proven(%x: tensor<16x256xbf16>, %w: tensor<96x256xbf16>) -> tensor<16x96xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<16x256xbf16> -> tensor<16x8x2xbf16>, tensor<16x8x2xi8>
  %qx = fp4.quantize %rest : tensor<16x256xbf16> -> !qx
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<96x256xbf16> -> tensor<96x8x2xbf16>, tensor<96x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<96x256xbf16> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  return %y3 : tensor<16x96xf32>
}

func.func @proven_top1(%x: tensor<16x256xbf16>, %w: tensor<96x256xbf16>) -> tensor<16x96xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 1 : tensor<16x256xbf16> -> tensor<16x8x1xbf16>, tensor<16x8x1xi8>
  %qx = fp4.quantize %rest : tensor<16x256xbf16> -> !qx
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 1 : tensor<96x256xbf16> -> tensor<96x8x1xbf16>, tensor<96x8x1xi8>
  %qw = fp4.quantize %wrest : tensor<96x256xbf16> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x1xbf16>, tensor<16x8x1xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x1xbf16>, tensor<96x8x1xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x1xbf16>, tensor<16x8x1xi8>), (tensor<96x8x1xbf16>, tensor<96x8x1xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  return %y3 : tensor<16x96xf32>
}

func.func @proven_residual(%x: tensor<16x256xbf16>, %w: tensor<96x256xbf16>) -> tensor<16x96xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<16x256xbf16> -> tensor<16x8x2xbf16>, tensor<16x8x2xi8>
  %qx = fp4.quantize %rest : tensor<16x256xbf16> -> !qx
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<16x256xbf16>, !qx -> tensor<16x64x2xbf16>, tensor<16x64x2xi8>
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<96x256xbf16> -> tensor<96x8x2xbf16>, tensor<96x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<96x256xbf16> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<16x64x2xbf16>, tensor<16x64x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<16x64x2xbf16>, tensor<16x64x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  return %y5 : tensor<16x96xf32>
}

func.func @unproven(%qx: !qx, %xv: tensor<16x8x2xbf16>, %xi: tensor<16x8x2xi8>, %qw: !qw, %wv: tensor<96x8x2xbf16>, %wi: tensor<96x8x2xi8>) -> tensor<16x96xf32> {
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  return %y3 : tensor<16x96xf32>
}

func.func @plain(%x: tensor<1x256xbf16>, %qw: !qw) -> tensor<1x96xf32> {
  %y = fp4.matmul %x, %qw : tensor<1x256xbf16>, !qw -> tensor<1x96xf32>
  return %y : tensor<1x96xf32>
}
