// The medium class's 16-row tile with two K groups of warps (the full
// recipe of corrections-medium.mlir: 2:4 residual on mma.sp, weight
// outliers in the weight tile, the K groups' sums meeting in shared memory)
// down to PTX, which ptxas accepts for sm_90 without spills.
// REQUIRES: ptxas
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS

// PTX: .entry fp4_matmul_3(
// PTX: .maxntid 256, 1, 1
// PTX: mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32
// PTXAS: Compiling entry function 'fp4_matmul_3' for 'sm_90'
// PTXAS-NEXT: Function properties for fp4_matmul_3
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>

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
