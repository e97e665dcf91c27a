// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 prefill-dequant=registers" | FileCheck %s

// W4A16 MXFP4, whole tiles: 128x128x64 CTA tiles, 8 warps, 3-stage ring in
// dynamic shared memory (3 x (16 KB bf16 A + 4 KB codes) = 61440 bytes).
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a16", grid = [2, 2, 1], block = [256, 1, 1], shared_bytes = 61440,
// CHECK: gpu.func @fp4_matmul_0(%{{.*}}: memref<256x512xbf16> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<256x256xi8> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<256x16xi8> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<256x256xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x32xi32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}}[%c49152{{.*}} to memref<3x128x32xi8, #gpu.address_space<workgroup>>
// Prologue: tiles 0 and 1 in flight (16-byte cp.async.cg; whole tiles, so
// no zero fill).
// CHECK: nvgpu.device_async_copy {{.*}}, 8 {bypassL1} : memref<256x512xbf16> to memref<3x128x64xbf16
// CHECK: nvgpu.device_async_copy {{.*}}, 16 {bypassL1} : memref<256x256xi8> to memref<3x128x32xi8
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: memref.load %{{.*}} : memref<256x16xi8>
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// The one-multiply MXFP4 form when the whole warp's scales are <= 2.
// CHECK: arith.cmpi ule, %{{.*}}, %c128_i32
// CHECK: %[[ALL:.*]] = nvvm.vote.sync all %c-1_i32, %{{.*}} -> i1
// CHECK: scf.if %[[ALL]] -> (vector<4xf32>
// Weight codes: one 8-byte word per lane and 8-row slice; A: 16-byte loads.
// CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<3x128x8xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<3x128x32xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// In-register dequantization: pair bits, byte permutes, exact bf16x2 scaling.
// CHECK: arith.constant 29360576 : i32
// CHECK: nvvm.prmt <default>
// CHECK: arith.mulf {{.*}} : vector<2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: } else {
// General form: 2^126 (bf16x2 0x7E807E80), then the scale.
// CHECK: arith.constant 2122350208 : i32
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// Whole tiles: unguarded 8-byte stores.
// CHECK-NOT: scf.if
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x256xf32>, vector<2xf32>
// CHECK: gpu.return
func.func @w4a16_mxfp4(%x: tensor<256x512xbf16>, %w: !fp4.tensor<256x512xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<256x256xf32> {
  %y = fp4.matmul %x, %w : tensor<256x512xbf16>, !fp4.tensor<256x512xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<256x256xf32>
  return %y : tensor<256x256xf32>
}

// -----

// W4A4 NVFP4 with tails in M, N and K (K = 336: 8-byte code chunks, the last
// K tile half empty). A codes are dequantized cooperatively into a
// double-buffered bf16 tile one K tile ahead, so the loop waits for one more
// tile; the tensor scales and 2^16 (2^8 per operand) scale the result.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a4", grid = [3, 2, 1], {{[^>]*}}shared_bytes = 57344,
// CHECK: gpu.func @fp4_matmul_0
// CHECK: memref.view {{.*}} to memref<3x128x32xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}}[%c24576{{.*}} to memref<2x128x32xi32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} : memref<200x168xi8> to memref<3x128x32xi8
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} : memref<300x168xi8> to memref<3x128x32xi8
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<2x128x32xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// Blocks past K get a zero multiplier (their codes were zero-filled).
// CHECK: arith.constant 336 : index
// CHECK: arith.select %{{.*}}, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: arith.constant 6.553600e+04 : f32
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: scf.if
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<200x300xbf16>, vector<2xbf16>
func.func @w4a4_nvfp4_tails(%x: !fp4.tensor<200x336xf4E2M1FN, #fp4.nvfp4, axis = 1>, %w: !fp4.tensor<300x336xf4E2M1FN, #fp4.nvfp4, axis = 1>) -> tensor<200x300xbf16> {
  %y = fp4.matmul %x, %w : !fp4.tensor<200x336xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<300x336xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<200x300xbf16>
  return %y : tensor<200x300xbf16>
}

// -----

// Odd N: no pair stores (they would be misaligned), one guarded scalar store
// per element.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a16"
// CHECK: gpu.func @fp4_matmul_0
// CHECK: scf.for
// CHECK-NOT: vector.store {{.*}} memref<40x77xf16>
// CHECK: memref.store {{.*}} : memref<40x77xf16>
func.func @odd_n(%x: tensor<40x64xbf16>, %w: !fp4.tensor<77x64xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1>) -> tensor<40x77xf16> {
  %y = fp4.matmul %x, %w : tensor<40x64xbf16>, !fp4.tensor<77x64xf4E2M1FN, #fp4.mxfp4<block_size = 16>, axis = 1> -> tensor<40x77xf16>
  return %y : tensor<40x77xf16>
}

// -----

// Macro-scaled MXFP4: factors of 256-element macro blocks scale f32 partial
// sums folded into the accumulators every 4 K tiles; W4A4 with partial sums
// narrows the N tile to 64 (two accumulator sets must fit in registers).
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a16", grid = [3, 2, 1]
// CHECK-SAME: variant = "prefill_w4a4", grid = [5, 2, 1]
// CHECK: gpu.func @fp4_matmul_0
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: arith.remui %{{.*}}, %c4
// CHECK: scf.if %{{.*}} -> (vector<4xf32>
// CHECK: memref.load %{{.*}} : memref<384x4xbf16>
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: arith.addf
// CHECK: gpu.func @fp4_matmul_1
// CHECK: memref.load %{{.*}} : memref<300x4xbf16>
// CHECK: memref.load %{{.*}} : memref<200x8xbf16>
func.func @macro(%x: tensor<256x1024xbf16>, %w: !fp4.tensor<384x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>,
                 %xq: !fp4.tensor<200x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 128>, axis = 1>,
                 %wq: !fp4.tensor<300x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>) -> (tensor<256x384xf32>, tensor<200x300xbf16>) {
  %0 = fp4.matmul %x, %w : tensor<256x1024xbf16>, !fp4.tensor<384x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1> -> tensor<256x384xf32>
  %1 = fp4.matmul %xq, %wq : !fp4.tensor<200x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 128>, axis = 1>, !fp4.tensor<300x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1> -> tensor<200x300xbf16>
  return %0, %1 : tensor<256x384xf32>, tensor<200x300xbf16>
}

// -----

// One macro factor per row (macro_block = 0): applied in the epilogue.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a16"
// CHECK: gpu.func @fp4_matmul_0
// CHECK: scf.for
// CHECK-NOT: memref<64x1xbf16>
// CHECK: scf.yield
// CHECK: memref.load %{{.*}}[%{{.*}}, %c0{{.*}}] : memref<64x1xbf16>
// CHECK: vector.store
func.func @macro_whole_axis(%x: tensor<128x512xbf16>, %w: !fp4.tensor<64x512xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>) -> tensor<128x64xf32> {
  %y = fp4.matmul %x, %w : tensor<128x512xbf16>, !fp4.tensor<64x512xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1> -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// Declined (the reference kernel takes over): f16 activations, macro blocks
// shorter than a K tile, MXFP4 blocks that are not a multiple of 16.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "reference"
// CHECK-SAME: variant = "reference"
// CHECK-SAME: variant = "reference"
// CHECK-NOT: prefill
func.func @declined(%x: tensor<32x64xf16>, %w: !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>,
                    %xb: tensor<32x256xbf16>, %wm: !fp4.tensor<32x256xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32>, axis = 1>,
                    %w8: !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4<block_size = 8>, axis = 1>, %x64: tensor<32x64xbf16>)
    -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %0 = fp4.matmul %x, %w : tensor<32x64xf16>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<32x32xf32>
  %1 = fp4.matmul %xb, %wm : tensor<32x256xbf16>, !fp4.tensor<32x256xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32>, axis = 1> -> tensor<32x32xf32>
  %2 = fp4.matmul %x64, %w8 : tensor<32x64xbf16>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4<block_size = 8>, axis = 1> -> tensor<32x32xf32>
  return %0, %1, %2 : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}
