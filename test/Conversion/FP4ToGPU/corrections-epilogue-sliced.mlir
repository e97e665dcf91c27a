// Weight outliers (top-4 of 32) at decode size with an activation sum
// larger than a CTA's shared memory (M = 16, K = 4096: 256 KB of [K, M]
// f32): the epilogue kernel stages the sum a K slice of 32 KB at a time
// (stacked_epilogue_warp_sliced, StackedEpilogueKernel.cpp), each warp
// keeping its 4 rows' 16 sums per lane across the slices; ptxas assembles
// it without spills.
// REQUIRES: ptxas
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" -o /dev/null
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: variant = "decode_w4a16"
// CHECK-SAME: <@fp4_kernels::@fp4_stacked_epilogue_2, variant = "stacked_epilogue_warp_sliced", grid = [224, 1, 1], block = [512, 1, 1]
// CHECK: gpu.func @fp4_stacked_epilogue_2
// CHECK-SAME: workgroup(%{{.*}} : memref<8192xf32, #gpu.address_space<workgroup>>)
// PTXAS: Compiling entry function 'fp4_stacked_epilogue_2' for 'sm_90'
// PTXAS-NEXT: Function properties for fp4_stacked_epilogue_2
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @w4a16_outliers(%x: tensor<16x4096xbf16>,
    %qw: !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    %wv: tensor<14336x128x4xbf16>, %wi: tensor<14336x128x4xi8>) -> tensor<16x14336xf32> {
  %qx = fp4.quantize %x : tensor<16x4096xbf16> -> !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x14336xf32>
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<14336x128x4xbf16>, tensor<14336x128x4xi8>), tensor<16x14336xf32> -> tensor<16x14336xf32>
  return %y1 : tensor<16x14336xf32>
}
