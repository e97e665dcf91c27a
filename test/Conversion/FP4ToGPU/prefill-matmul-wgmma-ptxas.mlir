// REQUIRES: ptxas
// chip=sm_90a (mma = wgmma, the selection's choice there): the shared form
// of every prefill variant through fp4-pipeline-nvvm to PTX, assembled for
// sm_90a with no spills. The A tile (cp.async, or W4A4's dequantized tile)
// and the dequantized W tile are stored in 128-byte-swizzle atoms; after a
// proxy fence and the barrier each warp group issues wgmma.mma_async
// m64nNk16 per k16 step from shared-memory descriptors, commits, dequantizes
// the next W tile while the tensor cores run, then waits. No ldmatrix and
// no mma.sync remain in those kernels. Macro partial sums (the two
// mxfp4_macro kernels: macro blocks shorter than K) keep mma.sync.
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90a format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90a -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json

// PTX: .target sm_90a
// PTX-LABEL: .entry fp4_matmul_0(
// PTX: .maxntid 256, 1, 1
// PTX-NOT: ldmatrix
// PTX-NOT: mma.sync
// (LLVM rotates the K loop, so the order in the text is not the issue
// order.)
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: bar.sync 0;
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: st.shared.v4.b32
// PTX-DAG: wgmma.wait_group.sync.aligned{{[[:space:]]+}}0;
// A dynamic shared memory base off the 1024-byte swizzle period traps.
// PTX-DAG: trap;
// PTX-LABEL: .entry fp4_matmul_1(
// PTX-NOT: mma.sync
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-LABEL: .entry fp4_matmul_2(
// PTX-NOT: mma.sync
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-LABEL: .entry fp4_matmul_3(
// PTX-NOT: mma.sync
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-LABEL: .entry fp4_matmul_4(
// PTX-NOT: wgmma
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_5(
// PTX-NOT: wgmma
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// Two warp groups side by side on the 64-row tile, 64 columns each.
// PTX-LABEL: .entry fp4_matmul_6(
// PTX-NOT: mma.sync
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16

// ptxas lists the entries last to first.
// PTXAS: Compiling entry function 'fp4_matmul_6' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_5' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_4' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_3' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_2' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_1' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_0' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: warning

// JSON: "variant": "prefill_w4a16_smem_wgmma"
// JSON: "variant": "prefill_w4a16_smem_wgmma"
// JSON: "variant": "prefill_w4a4_smem_wgmma"
// JSON: "variant": "prefill_w4a4_smem_wgmma"
// JSON: "variant": "prefill_w4a16_smem"
// JSON: "variant": "prefill_w4a4_smem"
// JSON: "variant": "prefill_w4a16_smem_wgmma"

func.func @w4a16_mxfp4(%x: tensor<512x512xbf16>, %w: !fp4.tensor<512x512xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<512x512xf32> {
  %y = fp4.matmul %x, %w : tensor<512x512xbf16>, !fp4.tensor<512x512xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
func.func @w4a16_nvfp4_tails(%x: tensor<200x336xbf16>, %w: !fp4.tensor<300x336xf4E2M1FN, #fp4.nvfp4, axis = 1>) -> tensor<200x300xf32> {
  %y = fp4.matmul %x, %w : tensor<200x336xbf16>, !fp4.tensor<300x336xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<200x300xf32>
  return %y : tensor<200x300xf32>
}
func.func @w4a4_mxfp4(%x: !fp4.tensor<512x512xf4E2M1FN, #fp4.mxfp4, axis = 1>, %w: !fp4.tensor<512x512xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<512x512xf32> {
  %y = fp4.matmul %x, %w : !fp4.tensor<512x512xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<512x512xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
func.func @w4a4_nvfp4_tails(%x: !fp4.tensor<150x208xf4E2M1FN, #fp4.nvfp4, axis = 1>, %w: !fp4.tensor<70x208xf4E2M1FN, #fp4.nvfp4, axis = 1>) -> tensor<150x70xbf16> {
  %y = fp4.matmul %x, %w : !fp4.tensor<150x208xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<70x208xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<150x70xbf16>
  return %y : tensor<150x70xbf16>
}
func.func @w4a16_macro(%x: tensor<256x1024xbf16>, %w: !fp4.tensor<384x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>) -> tensor<256x384xf32> {
  %y = fp4.matmul %x, %w : tensor<256x1024xbf16>, !fp4.tensor<384x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1> -> tensor<256x384xf32>
  return %y : tensor<256x384xf32>
}
func.func @w4a4_macro(%x: !fp4.tensor<200x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 128>, axis = 1>, %w: !fp4.tensor<300x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>) -> tensor<200x300xbf16> {
  %y = fp4.matmul %x, %w : !fp4.tensor<200x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 128>, axis = 1>, !fp4.tensor<300x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1> -> tensor<200x300xbf16>
  return %y : tensor<200x300xbf16>
}
func.func @w4a16_m64(%x: tensor<64x4096xbf16>, %w: !fp4.tensor<1024x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<64x1024xf32> {
  %y = fp4.matmul %x, %w : tensor<64x4096xbf16>, !fp4.tensor<1024x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}
