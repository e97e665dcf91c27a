// REQUIRES: ptxas
// The decode kernel's warp-group form (sm_90a, the default from 9 rows)
// through fp4-pipeline-nvvm to PTX, assembled with no spills: each K warp
// group converts its rows' activations into its shared-memory slot
// (16-byte loads, prmt pairs, 4-byte shared stores), publishes them with a
// proxy fence and its own named barrier (bar.sync 1 + K warp group, 128
// threads; the groups run different trip counts), then issues one
// wgmma.mma_async per k16 step with the dequantized weights as the
// register A operand ({4 x b32}) and the staged activations by
// descriptor; no mma.sync remains. The dynamic shared memory base is
// checked against the 1024-byte swizzle period (trap).
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t decode-max-m=32" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json

// PTX: .target sm_90a
// PTX-LABEL: .entry fp4_matmul_0(
// PTX-NOT: mma.sync
// PTX-DAG: ld.global.nc.v4.b32
// PTX-DAG: prmt.b32
// PTX-DAG: st.shared.b32
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: bar.sync {{%r[0-9]+}}, 128;
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{{[^}]*}}}, {{{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+}}}, {{%rd[0-9]+}}, 1, 1, 1, 0;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned{{[[:space:]]+}}0;
// PTX-DAG: trap;
// PTX-LABEL: .entry fp4_matmul_1(
// PTX-NOT: mma.sync
// PTX: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PTX-LABEL: .entry fp4_matmul_2(
// PTX-NOT: mma.sync
// PTX: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16

// PTXAS-COUNT-3: 0 bytes spill stores, 0 bytes spill loads

// JSON-DAG: "variant": "decode_w4a16_wgmma"
// JSON-DAG: "variant": "decode_w4a4_wgmma"

!w = !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!q = !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @f(%x16: tensor<16x4096xbf16>, %x32: tensor<32x4096xbf16>, %q: !q, %w: !w)
    -> (tensor<16x14336xbf16>, tensor<32x14336xf32>, tensor<16x14336xf32>) {
  %0 = fp4.matmul %x16, %w : tensor<16x4096xbf16>, !w -> tensor<16x14336xbf16>
  %1 = fp4.matmul %x32, %w : tensor<32x4096xbf16>, !w -> tensor<32x14336xf32>
  %2 = fp4.matmul %q, %w : !q, !w -> tensor<16x14336xf32>
  return %0, %1, %2 : tensor<16x14336xbf16>, tensor<32x14336xf32>, tensor<16x14336xf32>
}
