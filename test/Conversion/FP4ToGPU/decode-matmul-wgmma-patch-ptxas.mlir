// REQUIRES: ptxas
// The decode kernel's register form of the weight entries
// (decode-outliers=patch, sm_90a) on the full recipe at the benchmark's
// 16 x 14336 x 4096: the weight outliers are split from the same weight,
// so the quantized rest is +-0 at their positions, and each lane replaces
// their elements in its own dequantized A fragments (a byte permute per
// pair and entry, one predicated PRMT in SASS; the two entries' predicates
// of a pair from one f16x2 compare of their keys 1024 + j, 16 pairs x 2
// rows of a lane) before the register-A wgmma. No shared
// weight tile (no 16-bit entry stores, no A descriptor; the dynamic shared
// memory is the activation slots and the stages: 40 KB against the tile
// form's 72 KB), no activation sum (the prep writes none); ptxas assembles
// it without spills.
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t decode-outliers=patch" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=F16 < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json
// The default (no option): the same patch with two 64-row warp groups per
// K warp group sharing its activation slot (128 rows per CTA, 16 warps).
// RUN: rm -rf %t.d && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t.d" -o /dev/null
// RUN: %ptxas -arch=sm_90a -v %t.d/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=DEF < %t.d/kernels.json

// PTX-LABEL: .entry fp4_matmul_
// PTX-NOT: mma.sync
// PTX-NOT: st.shared.b16
// PTX-DAG: prmt.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
// PTX-DAG: selp.b32 {{%r[0-9]+}}, 12884, 21520, {{%p[0-9]+}};

// PTX-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{{[^}]*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {{%rd[0-9]+}}, 1, 1, 1, 0;
// PTX-DAG: wgmma.wait_group.sync.aligned{{[[:space:]]+}}0;
// PTX: .entry

// Two entries per pair compare: 16 pairs x 2 rows = 32 f16x2 compares,
// keys built from bits (no int-to-f16 conversion).
// F16-COUNT-32: setp.eq.f16x2 {{%p[0-9]+}}|{{%p[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
// F16-NOT: setp.eq.f16x2
// F16-NOT: cvt.rn.f16

// PTXAS: Function properties for fp4_matmul_
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// JSON-DAG: "variant": "decode_w4a16_wgmma_patch_epilogue"
// JSON-DAG: "shared_bytes": 40960
// JSON-NOT: summed_t

// DEF: "block": [{{[[:space:]]+}}512,
// DEF: "grid": [{{[[:space:]]+}}112,
// DEF: "shared_bytes": 65536
// DEF: "variant": "decode_w4a16_wgmma_patch_epilogue"

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
