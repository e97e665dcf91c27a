// REQUIRES: ptxas
// Every decode variant through fp4-pipeline-nvvm to PTX, assembled for
// sm_90 with no spills; the instructions the design relies on are there
// (16-byte non-coherent global loads for codes and activations, prmt, exact
// bf16x2 multiplies, bf16 mma.sync, the shared-memory reduction).
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t decode-split-k=1 decode-rows-per-cta=16 decode-prefetch=1 decode-warps=4" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=OPS < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json

// M = 1, the bench shape, software pipelined: the prologue loads the first
// group's 2 chunks of 2 weight rows (16-byte loads) and 4 scale bytes; each
// main-loop iteration loads those of the next group, then 2 x 4 activation
// vectors (per chunk; ptxas hoists them), before its 16 mmas (LLVM must not sink the weight loads into
// the iteration that uses them: 4 of them before the loop).
// PTX-LABEL: .entry fp4_matmul_0(
// PTX: .maxntid 128, 1, 1
// PTX-NOT: ld.global.nc.b32
// PTX-COUNT-4: ld.global.nc.v4.b32
// PTX-NOT: ld.global.nc.{{(v4.)?}}b32
// PTX: $L__BB0_1:
// PTX-NOT: mma.sync
// PTX-COUNT-12: ld.global.nc.v4.b32
// PTX-NOT: ld.global.nc.{{(v4.)?}}b32
// OPS-LABEL: .entry fp4_matmul_0(
// OPS-DAG: ld.global.nc.b8
// OPS-DAG: prmt.b32
// OPS-DAG: mul.rn.bf16x2
// OPS-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// OPS-DAG: bar.sync 0;
// OPS-DAG: ld.shared.b32
// OPS-LABEL: .entry fp4_matmul_1(
// PTX-LABEL: .entry fp4_matmul_1(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_2(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_3(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_4(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_5(
// PTX-NOT: prmt.b32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_6(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_matmul_7(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// ptxas lists the entries last to first. The M = 1 kernel must stay small
// enough for 2 CTAs of 256 threads per SM (under 96 registers).
// PTXAS: Compiling entry function 'fp4_matmul_7' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_matmul_6' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
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
// PTXAS-NEXT: Used {{[1-8]?[0-9]}} registers

// JSON: "block": [
// JSON-NEXT: 128,
// JSON: "grid": [
// JSON-NEXT: 896,
// JSON: "variant": "decode_w4a16"
// JSON: "variant": "decode_w4a16"
// JSON: "variant": "decode_w4a16"
// JSON: "variant": "decode_w4a16"
// JSON: "variant": "decode_w4a16"
// JSON: "variant": "decode_w4a4"
// JSON: "variant": "decode_w4a4"
// JSON: "variant": "decode_w4a16"

!wmx = !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!wmxt = !fp4.tensor<4096x14336xf4E2M1FN, #fp4.mxfp4, axis = 1>
!wnv = !fp4.tensor<100x4160xf4E2M1FN, #fp4.nvfp4, axis = 1>
!wmacro = !fp4.tensor<64x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 256>, axis = 1>
!xa4 = !fp4.tensor<4x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!wa4 = !fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!xnv = !fp4.tensor<11x640xf4E2M1FN, #fp4.nvfp4, axis = 1>
!wnv2 = !fp4.tensor<21x640xf4E2M1FN, #fp4.nvfp4, axis = 1>
!wb64 = !fp4.tensor<18x1216xf4E2M1FN, #fp4.mxfp4<block_size = 64>, axis = 1>

func.func @decode_variants(%x1: tensor<1x4096xbf16>, %w: !wmx, %x1t: tensor<1x14336xbf16>, %wt: !wmxt,
                           %x16: tensor<16x4096xbf16>, %x3: tensor<3x4160xbf16>, %wnv: !wnv,
                           %x9: tensor<9x1024xbf16>, %wmacro: !wmacro, %xa4: !xa4, %wa4: !wa4,
                           %xnv: !xnv, %wnv2: !wnv2, %x5: tensor<5x1216xbf16>, %wb64: !wb64)
    -> (tensor<1x14336xf32>, tensor<1x4096xf32>, tensor<16x14336xbf16>, tensor<3x100xf16>,
        tensor<9x64xf32>, tensor<4x4096xbf16>, tensor<11x21xf32>, tensor<5x18xf32>) {
  %0 = fp4.matmul %x1, %w : tensor<1x4096xbf16>, !wmx -> tensor<1x14336xf32>
  %1 = fp4.matmul %x1t, %wt : tensor<1x14336xbf16>, !wmxt -> tensor<1x4096xf32>
  %2 = fp4.matmul %x16, %w : tensor<16x4096xbf16>, !wmx -> tensor<16x14336xbf16>
  %3 = fp4.matmul %x3, %wnv : tensor<3x4160xbf16>, !wnv -> tensor<3x100xf16>
  %4 = fp4.matmul %x9, %wmacro : tensor<9x1024xbf16>, !wmacro -> tensor<9x64xf32>
  %5 = fp4.matmul %xa4, %wa4 : !xa4, !wa4 -> tensor<4x4096xbf16>
  %6 = fp4.matmul %xnv, %wnv2 : !xnv, !wnv2 -> tensor<11x21xf32>
  %7 = fp4.matmul %x5, %wb64 : tensor<5x1216xbf16>, !wb64 -> tensor<5x18xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<1x14336xf32>, tensor<1x4096xf32>, tensor<16x14336xbf16>,
      tensor<3x100xf16>, tensor<9x64xf32>, tensor<4x4096xbf16>, tensor<11x21xf32>, tensor<5x18xf32>
}
