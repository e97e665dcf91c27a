// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 decode-split-k=1 decode-rows-per-cta=16 decode-prefetch=1 decode-warps=4" | FileCheck %s
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 decode-warps=2 decode-k-unroll=512 decode-split-k=1 decode-prefetch=0" | FileCheck %s --check-prefix=OPT
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 decode-max-m=32 decode-prefetch=1" | FileCheck %s --check-prefix=MAXM
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 decode-max-m=64 decode-prefetch=1" | FileCheck %s --check-prefix=MAXM64

// The decode family (DecodeMatmulKernel.cpp): one CTA per 16 weight rows,
// warps splitting K, mma.sync m16n8k16 bf16 on weight pairs dequantized in
// registers (E2M1 bit placement, two exact bf16x2 scale multiplies) and
// activation pairs regrouped by prmt, then a shared-memory reduction.

// M = 1 MXFP4 weights, the bench's shape: 896 CTAs of 4 warps (each gets
// four main-loop iterations; no split-K, one row group here). Software
// pipelined (decode-prefetch=1, pinned above; the default is 0, which measured faster): the prologue loads the weight
// words and scale bytes of the first group (2 chunks x 2 weight rows of 16
// bytes, v4 aligned loads, one scale byte each) and the loop carries them
// (8 f32 sums + 2 x 2 x 5 i32); each iteration first loads the next
// group's weights, then per chunk its 4 activation vectors and 8 mmas on
// the weights loaded one iteration earlier. The empty asm after
// the loads keeps LLVM from sinking them back into the using iteration.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "decode_w4a16", grid = [896, 1, 1], block = [128, 1, 1]
// CHECK: gpu.func @fp4_matmul_0(%[[X:.*]]: memref<1x4096xbf16> {llvm.noalias, llvm.readonly}, %[[C:.*]]: memref<14336x2048xi8> {llvm.noalias, llvm.readonly}, %[[S:.*]]: memref<14336x128xi8> {llvm.noalias, llvm.readonly}, %[[Y:.*]]: memref<1x14336xf32> {llvm.noalias}) workgroup(%[[SMEM:.*]] : memref<512xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: vector.load %[[C]][{{.*}}] {alignment = 16 : i64} : memref<14336x2048xi8>, vector<16xi8>
// CHECK: vector.bitcast {{.*}} : vector<16xi8> to vector<4xi32>
// CHECK: memref.load %[[S]]
// CHECK-COUNT-3: vector.load %[[C]][{{.*}}] {alignment = 16 : i64} : memref<14336x2048xi8>, vector<16xi8>
// CHECK-NOT: vector.load
// CHECK: llvm.inline_asm has_side_effects "", ""
// CHECK-NOT: vector.load
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
// CHECK-COUNT-4: vector.load %[[C]][{{.*}}] {alignment = 16 : i64} : memref<14336x2048xi8>, vector<16xi8>
// CHECK-NOT: nvvm.mma.sync
// CHECK-COUNT-4: vector.load %[[X]][{{.*}}] {alignment = 16 : i64} : memref<1x4096xbf16>, vector<8xbf16>
// CHECK-NOT: vector.load
// CHECK: nvvm.prmt <default> %c21520_i32{{.*}} : i32
// CHECK: nvvm.prmt <default> %c30258_i32{{.*}} : i32
// CHECK: arith.shli %{{.*}}, %c6_i32{{.*}} : i32
// CHECK: arith.andi %{{.*}}, %c29360576_i32{{.*}} : i32
// CHECK: arith.shli %{{.*}}, %c12_i32{{.*}} : i32
// CHECK: arith.andi %{{.*}}, %c-2147450880_i32{{.*}} : i32
// CHECK: arith.ori
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-7: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK-COUNT-4: vector.load %[[X]]
// CHECK-NOT: vector.load
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: llvm.inline_asm has_side_effects "", ""
// CHECK-NEXT: scf.yield
// CHECK-NOT: nvvm.mma.sync
// CHECK: memref.store %{{.*}}, %[[SMEM]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SMEM]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[Y]][{{.*}}] : memref<1x14336xf32>

// OPT-LABEL: module attributes
// OPT-SAME: grid = [896, 1, 1], block = [64, 1, 1]
// OPT-NOT: llvm.inline_asm
// OPT-NOT: vector.load
// OPT: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// OPT-COUNT-8: vector.load %{{.*}} : memref<14336x2048xi8>, vector<16xi8>
// OPT-COUNT-32: nvvm.mma.sync
// OPT-NOT: nvvm.mma.sync
// OPT: scf.yield
func.func @w4a16_m1(%x: tensor<1x4096xbf16>, %w: !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x14336xf32> {
  %y = fp4.matmul %x, %w : tensor<1x4096xbf16>, !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x14336xf32>
  return %y : tensor<1x14336xf32>
}

// -----

// M = 16: two n-tiles share each A fragment (two mmas per step); N = 100 and
// K = 4160 need tails: 7 CTAs with clamped rows and predicated stores, and
// a last half chunk (64 of 128 elements) on one warp, its units beyond K
// zeroed (codes, activations) with benign scale bytes (127).
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "decode_w4a16", grid = [7, 1, 1], block = [128, 1, 1]
// CHECK: gpu.func @fp4_matmul_0(%[[X:.*]]: memref<16x4160xbf16>
// CHECK: arith.minui %{{.*}}, %c99
// CHECK: arith.minui %{{.*}}, %c15
// CHECK: scf.for
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if %[[MINE]]
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %c4160
// CHECK: arith.select %[[VALID]], %{{.*}}, %c0
// CHECK: arith.select %[[VALID]], %{{.*}}, %c127_i32
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: } else {
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %c100
// CHECK: arith.cmpi ult, %{{.*}}, %c16
// CHECK: scf.if
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}} : memref<16x100xbf16>
func.func @w4a16_m16_tails(%x: tensor<16x4160xbf16>, %w: !fp4.tensor<100x4160xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<16x100xbf16> {
  %y = fp4.matmul %x, %w : tensor<16x4160xbf16>, !fp4.tensor<100x4160xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x100xbf16>
  return %y : tensor<16x100xbf16>
}

// -----

// W4A4: the activation codes go through the same pair construction as the
// weights (no prmt), with their own scales.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "decode_w4a4"
// CHECK: gpu.func @fp4_matmul_0(%[[XC:.*]]: memref<4x2048xi8> {llvm.noalias, llvm.readonly}, %[[XS:.*]]: memref<4x128xi8> {llvm.noalias, llvm.readonly}, %[[WC:.*]]: memref<4096x2048xi8>
// CHECK-NOT: nvvm.prmt
// CHECK: vector.load %[[WC]][{{.*}}] {alignment = 16 : i64} : memref<4096x2048xi8>, vector<16xi8>
// CHECK: vector.load %[[XC]][{{.*}}] {alignment = 16 : i64} : memref<4x2048xi8>, vector<16xi8>
// CHECK: memref.load %[[XS]]
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.prmt
// CHECK: gpu.return
func.func @w4a4(%x: !fp4.tensor<4x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>, %w: !fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<4x4096xbf16> {
  %y = fp4.matmul %x, %w : !fp4.tensor<4x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x4096xbf16>
  return %y : tensor<4x4096xbf16>
}

// -----

// NVFP4: two E4M3 bytes per 32-element unit, each one multiply by
// 2^118 * e4m3 (decoded with the numerics rule); the f32 sums get 2^8 and
// the tensor scale at the end.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "decode_w4a16"
// CHECK: gpu.func @fp4_matmul_0({{.*}}, %[[S:.*]]: memref<100x260xi8> {llvm.noalias, llvm.readonly}, %[[TS:.*]]: memref<f32> {llvm.noalias, llvm.readonly}, %[[Y:.*]]: memref<3x100xf16>
// CHECK: scf.for
// CHECK-COUNT-2: memref.load %[[S]]
// CHECK: arith.constant 3.323070e+35 : f32
// CHECK: scf.yield
// CHECK: %[[G:.*]] = memref.load %[[TS]][] : memref<f32>
// CHECK: arith.mulf %cst{{.*}}, %[[G]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @w4a16_nvfp4(%x: tensor<3x4160xbf16>, %w: !fp4.tensor<100x4160xf4E2M1FN, #fp4.nvfp4, axis = 1>) -> tensor<3x100xf16> {
  %y = fp4.matmul %x, %w : tensor<3x4160xbf16>, !fp4.tensor<100x4160xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<3x100xf16>
  return %y : tensor<3x100xf16>
}

// -----

// Macro-block factors scale each chunk's f32 partial sum.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "decode_w4a16"
// CHECK: gpu.func @fp4_matmul_0({{.*}}, %[[F:.*]]: memref<64x4xbf16> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<9x64xf32>
// Pipelined: the factor is loaded one iteration ahead and carried.
// CHECK: %[[M:.*]] = memref.load %[[F]]
// CHECK: %[[MF:.*]] = arith.extf %[[M]] : bf16 to f32
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[A:arg[0-9]+]] = %[[MF]],
// CHECK: nvvm.mma.sync
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %[[A]] : f32
// CHECK: arith.addf %{{.*}}, %[[P]] : f32
func.func @w4a16_macro(%x: tensor<9x1024xbf16>, %w: !fp4.tensor<64x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 256>, axis = 1>) -> tensor<9x64xf32> {
  %y = fp4.matmul %x, %w : tensor<9x1024xbf16>, !fp4.tensor<64x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 256>, axis = 1> -> tensor<9x64xf32>
  return %y : tensor<9x64xf32>
}

// -----

// Declined (the reference kernel takes them): f16 activations, HiF4, macro
// blocks that split a 128-element chunk, K not a multiple of 32.
// CHECK-LABEL: module attributes
// CHECK-NOT: decode_
// CHECK-COUNT-4: variant = "reference"
// CHECK-NOT: decode_
func.func @declined(%xh: tensor<2x256xf16>, %w: !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1>,
                    %x: tensor<2x256xbf16>, %wh: !fp4.tensor<64x256x!fp4.s1p2, #fp4.hif4, axis = 1>,
                    %wm: !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>,
                    %x48: tensor<2x48xbf16>, %w48: !fp4.tensor<64x48xf4E2M1FN, #fp4.nvfp4, axis = 1>)
    -> (tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>) {
  %0 = fp4.matmul %xh, %w : tensor<2x256xf16>, !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x64xf32>
  %1 = fp4.matmul %x, %wh : tensor<2x256xbf16>, !fp4.tensor<64x256x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<2x64xf32>
  %2 = fp4.matmul %x, %wm : tensor<2x256xbf16>, !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> -> tensor<2x64xf32>
  %3 = fp4.matmul %x48, %w48 : tensor<2x48xbf16>, !fp4.tensor<64x48xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<2x64xf32>
  return %0, %1, %2, %3 : tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>
}

// -----

// M = 17 needs a third n-tile: the decode kernel takes up to four (32
// rows, the fused correction chain's stacked activations) when decode-max-m
// sends it there.
// MAXM: module attributes {{.*}}"result" : memref<17x64xf32>{{.*}}variant = "decode_w4a16"
func.func @seventeen_rows(%x: tensor<17x256xbf16>, %w: !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<17x64xf32> {
  %y = fp4.matmul %x, %w : tensor<17x256xbf16>, !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<17x64xf32>
  return %y : tensor<17x64xf32>
}

// -----

// M = 33 is beyond the decode kernel's four n-tiles even when decode-max-m
// sends it there: another family takes it.
// MAXM64: module attributes {{.*}}"result" : memref<33x64xf32>{{.*}}variant = "{{reference|prefill_w4a16(_smem)?}}"
func.func @thirty_three_rows(%x: tensor<33x256xbf16>, %w: !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<33x64xf32> {
  %y = fp4.matmul %x, %w : tensor<33x256xbf16>, !fp4.tensor<64x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<33x64xf32>
  return %y : tensor<33x64xf32>
}
