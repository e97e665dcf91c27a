// REQUIRES: ptxas
// The recipe kernels of corrections.mlir (the fused decode plan, as its RUN
// line pins it) and
// corrections-terms.mlir (the per-term kernels) through fp4-pipeline-nvvm to
// PTX, assembled for sm_90 with no spills. The numerics stay exact: every f32
// operation rounds to nearest (.rn), nothing is contracted into an FMA,
// flushed to zero or approximated; sparse entries are read as bf16 values
// and signed i8 indices (ld.global.nc: the inputs are read-only).
// RUN: rm -rf %t && fp4-opt %S/corrections.mlir -fp4-pipeline-nvvm="chip=sm_90 decode-max-m=16 decode-outliers=loop format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=EXACT < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rm -rf %t.shared && fp4-opt %S/corrections.mlir -fp4-pipeline-nvvm="chip=sm_90 decode-max-m=16 decode-outliers=loop prep-readback=shared format=isa export-dir=%t.shared" -o /dev/null
// RUN: FileCheck %s --check-prefix=SHARED < %t.shared/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=EXACT < %t.shared/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t.shared/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rm -rf %t.terms && fp4-opt %S/corrections-terms.mlir -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t.terms" -o /dev/null
// RUN: FileCheck %s --check-prefix=TERMS < %t.terms/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=EXACT < %t.terms/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t.terms/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=TERMSPTXAS
// decode-outliers=tail: the decode kernels multiply the weight outliers in
// a phase after the main loop (_epilogue_tail); exact arithmetic, no spill.
// The activation sum and the CTA's entries (16 rows per CTA x 16 entries
// x 3 bytes) are copied by cp.async before the main loop and waited for
// before the tail; all of the kernel's shared memory is then dynamic:
// 20224 bytes = 768 of entries + the [256, 16] f32 sum (16384) + the
// result stage [32][16] f32 (2048) + the outlier stage [16][16] f32
// (1024).
// RUN: rm -rf %t.tail && fp4-opt %S/corrections.mlir -fp4-pipeline-nvvm="chip=sm_90 decode-max-m=16 decode-outliers=tail format=isa export-dir=%t.tail" -o /dev/null
// RUN: FileCheck %s --check-prefix=EXACT < %t.tail/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=TAILPTX < %t.tail/fp4_kernels.ptx
// TAILPTX-LABEL: .entry fp4_matmul_6(
// TAILPTX: cp.async.cg.shared.global
// TAILPTX: cp.async.commit_group
// TAILPTX-NOT: .entry
// TAILPTX: cp.async.wait_group 0
// TAILPTX-NEXT: bar.sync 0
// RUN: %ptxas -arch=sm_90 -v %t.tail/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=TAILPTXAS
// RUN: FileCheck %s --check-prefix=TAILJSON < %t.tail/kernels.json
// TAILPTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// TAILPTXAS: 0 bytes spill stores
// TAILPTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// TAILJSON: "shared_bytes": 20224,
// TAILJSON-NEXT: "variant": "decode_w4a16_epilogue_tail"

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

// The fused plan: the stacker dequantizes, adds the outlier entries whose
// column matches and stores bf16 rows (cvt.rn) and the f32 transposed sum;
// the epilogue reads entries (bf16 values, i8 indices: 16- and 8-byte
// vector loads of 4 blocks per lane), multiplies them by the sum's row at
// their column (staged in shared memory), and butterflies each sum over the
// lanes (shfl.sync.bfly).
// PTX-LABEL: .entry fp4_stack_activations_5(
// PTX: ld.global.nc.s8
// PTX: add.rn.f32
// PTX: cvt.rn.bf16.f32
// PTX: st.global.b16
// PTX: st.global.b32
// The decode kernel with the fused epilogue: the activation sum staged
// (16-byte shared stores, a barrier), the weight outliers' bf16 values and
// i8 indices in read-only loads, the tensor-core product, the outlier sums
// from the staged rows (16-byte shared loads, .rn multiplies and adds), the
// quad butterflies, then the stage and the rounded bf16 result.
// PTX-LABEL: .entry fp4_matmul_6(
// PTX: st.shared.v4.b32
// PTX: bar.sync 0;
// PTX: ld.global.nc.v2.b16
// PTX: ld.global.nc.v2.b8
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: ld.shared.v4.b32
// PTX: mul.rn.f32
// PTX: add.rn.f32
// PTX: shfl.sync.bfly.b32
// PTX: st.shared.b32
// PTX: bar.sync 0;
// PTX: ld.shared.b32
// PTX: cvt.rn.bf16.f32
// PTX: st.global.b16
// The activation prep: x in 16-byte read-only loads, the cross-lane
// butterflies, amax and top-k by shfl.sync.bfly, one CTA barrier, then the
// codes and scales it stored read back through the coherent path (plain
// ld.global: written by this kernel), bf16 rows stored as packed pairs.
// PTX-LABEL: .entry fp4_activation_prep_9(
// PTX: ld.global.nc.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync 0;
// PTX: ld.global.b8
// PTX: cvt.rn.bf16x2.f32
// PTX: st.global.v4.b32
// With prep-readback=shared the codes and scales go to shared copies (they
// fit at this size), one CTA barrier, then each thread copies its codes to
// the global output with one 4-byte store and reads the codes and scales
// back from shared memory (not an L2 round trip); no spill either.
// SHARED-LABEL: .entry fp4_activation_prep_9(
// SHARED: shfl.sync.bfly.b32
// SHARED: st.shared.b32
// SHARED: st.shared.b8
// SHARED: bar.sync 0;
// SHARED: ld.shared
// SHARED: st.global.b32
// SHARED-NOT: ld.global.b8
// SHARED: cvt.rn.bf16x2.f32
// SHARED: st.global.v4.b32
// PTX-LABEL: .entry fp4_matmul_10(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-LABEL: .entry fp4_split_channels_11(
// PTX-LABEL: .entry fp4_matmul_18(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// TERMS-LABEL: .entry fp4_correction_0(
// TERMS: ld.global.nc.b16
// TERMS: ld.global.nc.s8
// TERMS: mul.rn.f32
// TERMS: add.rn.f32
// TERMS-LABEL: .entry fp4_densify_3(
// TERMS: st.global.b16 {{.*}}, 0;
// TERMS-LABEL: .entry fp4_accumulate_4(
// TERMS: add.rn.f32
// TERMS-LABEL: .entry fp4_matmul_6(
// TERMS: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// TERMSPTXAS-COUNT-7: 0 bytes spill stores, 0 bytes spill loads
// TERMSPTXAS-NOT: spill stores

// PTXAS-COUNT-19: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: spill stores

