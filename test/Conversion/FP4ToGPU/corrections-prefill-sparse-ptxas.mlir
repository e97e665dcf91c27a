// The prefill kernel with the 2:4-sparse residual on mma.sp and the weight
// outliers in its weight tile (corrections-prefill-sparse.mlir) down to its
// PTX at a 256 x 256 x 256 full recipe (whole warp tiles live), which
// ptxas accepts for sm_90 without spills.
// REQUIRES: ptxas
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// With prefill-residual=sparse on sm_90a (mma = wgmma) the residual's
// packed values go to wgmma.sp (inline PTX): per k32 step two dense wgmma
// k16 and one sparse wgmma k32 into the same accumulators, the weight
// outliers in its weight tile; no mma.sp, no mma.sync, 0 spills, and no
// warpgroup.arrive that ptxas had to inject (the metadata registers are
// loaded before the wgmma fence).
// RUN: rm -rf %t.a && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a prefill-residual=sparse format=isa export-dir=%t.a" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX90A < %t.a/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a -v %t.a/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS90A
// RUN: FileCheck %s --check-prefix=JSON90A < %t.a/kernels.json
// By default (and with prefill-residual=rows) the sm_90a chain is one wgmma
// product of the stacked row groups (Q(x) with its outliers, the
// densified residual).
// RUN: rm -rf %t.r && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t.r" -o /dev/null
// RUN: FileCheck %s --check-prefix=ROWS < %t.r/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a -v %t.r/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS90A
// RUN: FileCheck %s --check-prefix=JSONROWS < %t.r/kernels.json
// RUN: rm -rf %t.rr && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a prefill-residual=rows format=isa export-dir=%t.rr" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSONROWS < %t.rr/kernels.json
// On sm_90 prefill-residual=rows keeps the residual a stacked dense row
// group: the prefill product of the stacked rows, then the row groups'
// epilogue.
// RUN: rm -rf %t.s && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 prefill-residual=rows format=isa export-dir=%t.s" -o /dev/null
// RUN: FileCheck %s --check-prefix=ROWS90 < %t.s/kernels.json

// PTX: .version 8.5
// PTX: .entry fp4_matmul_2(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32
// PTXAS: Compiling entry function 'fp4_matmul_2' for 'sm_90'
// PTXAS-NEXT: Function properties for fp4_matmul_2
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// PTX90A-LABEL: .entry fp4_matmul_2(
// PTX90A-NOT: mma.sp.
// PTX90A-NOT: mma.sync
// PTX90A: wgmma.fence.sync.aligned
// PTX90A: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX90A: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX90A: wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.bf16.bf16 {{.*}}, 0, 1, 1, 1, 0, 0;
// PTX90A: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX90A: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX90A: wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.bf16.bf16
// PTX90A-NOT: wgmma.mma_async
// PTX90A: wgmma.commit_group.sync.aligned
// PTX90A-LABEL: .entry fp4_quantize_3(
// PTXAS90A-NOT: warpgroup.arrive is injected
// PTXAS90A: Compiling entry function 'fp4_matmul_2' for 'sm_90a'
// PTXAS90A-NEXT: Function properties for fp4_matmul_2
// PTXAS90A-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// JSON90A: "variant": "activation_prep_mxfp4_top2_residual_sparse24"
// JSON90A: "variant": "prefill_w4a16_smem_sparse24_entries_wgmma"

// ROWS-LABEL: .entry fp4_matmul_2(
// ROWS-NOT: mma.sp
// ROWS-NOT: mma.sync
// ROWS: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// ROWS-LABEL: .entry fp4_quantize_3(
// JSONROWS: "variant": "activation_prep_mxfp4_top2_residual"
// JSONROWS: "variant": "prefill_w4a16_smem_entries_groups2_wgmma"
// ROWS90: "variant": "activation_prep_mxfp4_top2_residual"
// ROWS90: "variant": "prefill_w4a16_smem_entries"
// ROWS90: "variant": "stacked_epilogue"

func.func @full_recipe_256(%x: tensor<256x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<256x256xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<256x256xbf16> -> tensor<256x8x2xbf16>, tensor<256x8x2xi8>
  %qx = fp4.quantize %rest : tensor<256x256xbf16> -> !fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<256x256xbf16>, !fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<256x64x2xbf16>, tensor<256x64x2xi8>
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<256x256xbf16> -> tensor<256x8x2xbf16>, tensor<256x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<256x256xbf16> -> !fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<256x256xf32>
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<256x8x2xbf16>, tensor<256x8x2xi8>), tensor<256x256xf32> -> tensor<256x256xf32>
  %y2 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y1 : (tensor<256x8x2xbf16>, tensor<256x8x2xi8>), (!fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<256x256xf32> -> tensor<256x256xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<256x8x2xbf16>, tensor<256x8x2xi8>), (tensor<256x8x2xbf16>, tensor<256x8x2xi8>), tensor<256x256xf32> -> tensor<256x256xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<256x64x2xbf16>, tensor<256x64x2xi8>), (!fp4.tensor<256x256xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<256x256xf32> -> tensor<256x256xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<256x64x2xbf16>, tensor<256x64x2xi8>), (tensor<256x8x2xbf16>, tensor<256x8x2xi8>), tensor<256x256xf32> -> tensor<256x256xf32>
  return %y5 : tensor<256x256xf32>
}

