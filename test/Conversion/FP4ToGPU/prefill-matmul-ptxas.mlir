// REQUIRES: ptxas
// Every prefill variant through fp4-pipeline-nvvm to PTX, assembled for
// sm_90: no spills, and the instructions the design relies on are there
// (16-byte cp.async.cg, zero-filling in the tails, 16-byte shared loads,
// prmt, exact bf16x2 multiplies, bf16 mma.sync, paired global stores).
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa prefill-dequant=registers export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json

// PTX-LABEL: .entry fp4_matmul_0(
// PTX: .maxntid 256, 1, 1
// PTX-DAG: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16;
// PTX-DAG: cp.async.commit_group;
// PTX-DAG: cp.async.wait_group 1;
// PTX-DAG: bar.sync 0;
// PTX-DAG: ld.shared.v4.b32
// PTX-DAG: ld.shared.v2.b32
// PTX-DAG: ld.global.nc.{{.*}}8
// PTX-DAG: prmt.b32
// PTX-DAG: mul.rn.bf16x2
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: st.global.v2.b32
// PTX-DAG: vote.sync.all.pred
// Tails: zero fill (source size operand).
// PTX-LABEL: .entry fp4_matmul_1(
// PTX-DAG: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16, %r{{[0-9]+}};
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_2(
// PTX-DAG: cp.async.wait_group 0;
// PTX-DAG: st.shared.v4.b32
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_3(
// PTX-DAG: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 8, %r{{[0-9]+}};
// PTX-DAG: st.shared.v4.b32
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: st.global.b32

// PTX-LABEL: .entry fp4_matmul_4(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_5(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// ptxas lists the entries last to first.
// PTXAS: Compiling entry function 'fp4_matmul_5' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_4' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_3' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_2' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_1' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_0' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// JSON: "shared_bytes": 61440
// JSON: "variant": "prefill_w4a16"
// JSON: "shared_bytes": 61440
// JSON: "variant": "prefill_w4a16"
// JSON: "shared_bytes": 57344
// JSON: "variant": "prefill_w4a4"
// JSON: "shared_bytes": 57344
// JSON: "variant": "prefill_w4a4"
// JSON: "shared_bytes": 61440
// JSON: "variant": "prefill_w4a16"
// JSON: "shared_bytes": 51200
// JSON: "variant": "prefill_w4a4"

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
