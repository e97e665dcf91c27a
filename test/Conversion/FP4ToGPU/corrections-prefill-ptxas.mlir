// The prefill kernel with weight entries (corrections-prefill.mlir) down to
// its PTX, which ptxas accepts for sm_90 without spills. Each entry is one 16-bit
// shared store after the tile's dequantization.
// REQUIRES: ptxas
// The first split only (export-dir keeps the last module of a split file).
// RUN: rm -rf %t && sed -n '1,/^\/\/ -----/p' %S/corrections-prefill.mlir | fp4-opt - -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS

// PTX: .entry fp4_matmul_2(
// PTX: st.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: Compiling entry function 'fp4_matmul_2' for 'sm_90'
// PTXAS-NEXT: Function properties for fp4_matmul_2
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
