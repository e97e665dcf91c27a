// REQUIRES: ptxas
// The decode kernel's weight-tile form (decode-outliers=tile, sm_90a) on the
// full recipe at the benchmark's 16 x 14336 x 4096: the weight outliers are
// split from the same weight, so the quantized rest is +-0 at their
// positions and they are written into the kernel's shared weight tile
// (16-bit stores over the dequantized 16-byte chunks) instead of being
// gathered from an activation sum (the prep writes none). Both wgmma
// operands come from shared memory by descriptor (no register A operand,
// no mma.sync); ptxas assembles it without spills.
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t decode-outliers=tile" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json

// PTX-LABEL: .entry fp4_matmul_
// PTX-NOT: mma.sync
// PTX-DAG: st.shared.v4.b32
// PTX-DAG: st.shared.b16
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: bar.sync {{%r[0-9]+}}, 128;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{{[^}]*}}}, {{%rd[0-9]+}}, {{%rd[0-9]+}}, p,
// PTX-DAG: wgmma.wait_group.sync.aligned{{[[:space:]]+}}0;

// PTXAS: Function properties for fp4_matmul_
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// JSON-DAG: "variant": "decode_w4a16_wgmma_entries_epilogue"
// JSON-DAG: "shared_bytes": 73728
// JSON-NOT: summed_t

!qx = !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>

func.func @full16(%x: tensor<16x4096xbf16>, %w: tensor<14336x4096xbf16>) -> tensor<16x14336xf32> {
  %xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : tensor<16x4096xbf16> -> tensor<16x4096xf32>
  %rest, %xv, %xi = fp4.split_outliers %xr block 32 top 2 : tensor<16x4096xf32> -> tensor<16x128x2xbf16>, tensor<16x128x2xi8>
  %qx = fp4.quantize %rest : tensor<16x4096xf32> -> !qx
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<16x4096xf32>, !qx -> tensor<16x1024x2xbf16>, tensor<16x1024x2xi8>
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<14336x4096xbf16> -> tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>
  %qw = fp4.quantize %wrest : tensor<14336x4096xbf16> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x14336xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x128x2xbf16>, tensor<16x128x2xi8>), (!qw), tensor<16x14336xf32> -> tensor<16x14336xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>), tensor<16x14336xf32> -> tensor<16x14336xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x128x2xbf16>, tensor<16x128x2xi8>), (tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>), tensor<16x14336xf32> -> tensor<16x14336xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<16x1024x2xbf16>, tensor<16x1024x2xi8>), (!qw), tensor<16x14336xf32> -> tensor<16x14336xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<16x1024x2xbf16>, tensor<16x1024x2xi8>), (tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>), tensor<16x14336xf32> -> tensor<16x14336xf32>
  return %y5 : tensor<16x14336xf32>
}
