// REQUIRES: ptxas
// fp4-pipeline-nvvm dependent-launch=true (fp4-gpu-dependent-launch) on a
// W4A4 decode product and a decode-sized full recipe (sm_90a): every
// kernel's PTX starts with griddepcontrol.launch_dependents and waits
// (griddepcontrol.wait); with dependent-prefetch-bytes the products
// prefetch their weight into L2 (prefetch.global.L2) before the wait, by
// default they do not; kernels.json marks every kernel
// dependent (fp4.gpu.load launches them with programmatic stream
// serialization); ptxas assembles all of it. Without the option nothing
// of it is there.
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t dependent-launch=true dependent-prefetch-bytes=67108864" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t/fp4_kernels.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json
// RUN: rm -rf %t.off && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t.off" -o /dev/null
// RUN: FileCheck %s --check-prefix=OFF < %t.off/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=OFF < %t.off/kernels.json
// RUN: rm -rf %t.small && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t.small dependent-launch=true dependent-prefetch-bytes=0" -o /dev/null
// RUN: FileCheck %s --check-prefix=SMALL < %t.small/fp4_kernels.ptx
// RUN: rm -rf %t.def && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t.def dependent-launch=true" -o /dev/null
// RUN: FileCheck %s --check-prefix=SMALL < %t.def/fp4_kernels.ptx

// The loops' bodies are laid out after the wait (their branches go back
// up): no global load precedes the wait in the text, and the products'
// prefetches are in those loop bodies.
// PTX: .entry fp4_activation_prep_0(
// PTX-NEXT: .param
// PTX: griddepcontrol.launch_dependents;
// PTX-NOT: ld.global
// PTX: griddepcontrol.wait;
// PTX: .entry fp4_matmul_1(
// PTX: griddepcontrol.launch_dependents;
// PTX-NOT: ld.global
// PTX: griddepcontrol.wait;
// PTX-COUNT-4: prefetch.global.L2
// PTX: .entry fp4_quantize_2(
// PTX: griddepcontrol.launch_dependents;
// PTX-NOT: ld.global
// PTX: griddepcontrol.wait;
// PTX: .entry fp4_matmul_3(
// PTX: griddepcontrol.launch_dependents;
// PTX-NOT: ld.global
// PTX: griddepcontrol.wait;
// PTX-COUNT-2: prefetch.global.L2
// PTX-NOT: prefetch.global

// JSON-COUNT-4: "dependent": true,
// JSON-NOT: "dependent"

// OFF-NOT: griddepcontrol
// OFF-NOT: prefetch.global
// OFF-NOT: "dependent"

// SMALL-NOT: prefetch.global
// SMALL-COUNT-4: griddepcontrol.wait;
// SMALL-NOT: prefetch.global

!qw = !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qx = !fp4.tensor<1x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @w4a4(%x: tensor<1x4096xbf16>, %qw: !qw) -> tensor<1x14336xf32> {
  %qx = fp4.quantize %x : tensor<1x4096xbf16> -> !qx
  %y = fp4.matmul %qx, %qw : !qx, !qw -> tensor<1x14336xf32>
  return %y : tensor<1x14336xf32>
}

func.func @full(%x: tensor<1x4096xbf16>, %qw: !qw, %wv: tensor<14336x128x2xbf16>, %wi: tensor<14336x128x2xi8>) -> tensor<1x14336xf32> {
  %xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : tensor<1x4096xbf16> -> tensor<1x4096xf32>
  %rest, %xv, %xi = fp4.split_outliers %xr block 32 top 2 : tensor<1x4096xf32> -> tensor<1x128x2xbf16>, tensor<1x128x2xi8>
  %qx = fp4.quantize %rest : tensor<1x4096xf32> -> !qx
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<1x4096xf32>, !qx -> tensor<1x1024x2xbf16>, tensor<1x1024x2xi8>
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<1x14336xf32>
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!qx), (tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>), tensor<1x14336xf32> -> tensor<1x14336xf32>
  %y2 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y1 : (tensor<1x128x2xbf16>, tensor<1x128x2xi8>), (!qw), tensor<1x14336xf32> -> tensor<1x14336xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<1x128x2xbf16>, tensor<1x128x2xi8>), (tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>), tensor<1x14336xf32> -> tensor<1x14336xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<1x1024x2xbf16>, tensor<1x1024x2xi8>), (!qw), tensor<1x14336xf32> -> tensor<1x14336xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<1x1024x2xbf16>, tensor<1x1024x2xi8>), (tensor<14336x128x2xbf16>, tensor<14336x128x2xi8>), tensor<1x14336xf32> -> tensor<1x14336xf32>
  return %y5 : tensor<1x14336xf32>
}
