// REQUIRES: ptxas
// The recipe kernels of corrections.mlir through fp4-pipeline-nvvm to PTX,
// assembled for sm_90 with no spills. The numerics stay exact: every f32
// operation rounds to nearest (.rn), nothing is contracted into an FMA,
// flushed to zero or approximated; sparse entries are read as bf16 values
// and signed i8 indices (ld.global.nc: the inputs are read-only).
// RUN: rm -rf %t && fp4-opt %S/corrections.mlir -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=EXACT < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS

// EXACT-NOT: {{fma\.|\.ftz|\.approx|add\.f32|mul\.f32|sub\.f32}}
// EXACT: mul.rn.f32
// EXACT-NOT: {{fma\.|\.ftz|\.approx|add\.f32|mul\.f32|sub\.f32}}

// PTX-LABEL: .entry fp4_rotate_0(
// PTX: .maxntid 128, 1, 1
// PTX: add.rn.f32
// PTX: sub.rn.f32
// PTX: mul.rn.f32
// PTX-LABEL: .entry fp4_split_outliers_1(
// PTX: and.b32 {{.*}}, 2147483647;
// PTX: setp.gt.s32
// PTX: st.global.b16
// PTX: st.global.b8
// PTX-LABEL: .entry fp4_residual_2(
// PTX: sub.rn.f32
// PTX-LABEL: .entry fp4_correction_5(
// PTX: ld.global.nc.b16
// PTX: ld.global.nc.s8
// PTX: mul.rn.f32
// PTX: add.rn.f32
// PTX-LABEL: .entry fp4_densify_8(
// PTX: st.global.b16 {{.*}}, 0;
// PTX-LABEL: .entry fp4_accumulate_9(
// PTX: add.rn.f32
// PTX-LABEL: .entry fp4_split_channels_11(
// PTX-LABEL: .entry fp4_matmul_17(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// PTXAS-COUNT-20: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: spill stores

