// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 prefill-dequant=shared" | FileCheck %s
// RUN: fp4-opt %s -split-input-file -convert-fp4-to-gpu="chip=sm_90 prefill-stages=2" | FileCheck %s --check-prefix=FALLBACK

// prefill-dequant=shared (the default): the weight codes tile is dequantized
// once per CTA into a double-buffered bf16 tile that the mma loop reads
// with ldmatrix. 3 x (16 KB bf16 A + 4 KB codes) + 2 x 16 KB bf16 W =
// 94208 bytes.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a16_smem", grid = [2, 2, 1], block = [256, 1, 1], shared_bytes = 94208,
// CHECK: gpu.func @fp4_matmul_0(
// CHECK: memref.view {{.*}} to memref<3x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}}[%c49152{{.*}} to memref<3x128x32xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}}[%c61440{{.*}} to memref<2x128x32xi32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}}[%c61440{{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// Prologue: tiles 0 and 1 in flight; tile 0's weights dequantized (16-byte
// code loads, exact bf16x2 products, 16-byte stores into the bf16 tile).
// CHECK: nvgpu.device_async_copy {{.*}}, 8 {bypassL1} : memref<256x512xbf16> to memref<3x128x64xbf16
// CHECK: nvgpu.device_async_copy {{.*}}, 16 {bypassL1} : memref<256x256xi8> to memref<3x128x32xi8
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: memref.load %{{.*}} : memref<256x16xi8>
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<3x128x8xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: nvvm.prmt <default>
// CHECK: arith.mulf {{.*}} : vector<2xbf16>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<2x128x32xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// Loop: one wait (the tile dequantized ahead has landed) and one barrier.
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// Tile kt + 1 dequantized while tile kt is multiplied.
// CHECK: scf.if
// CHECK: vector.load {{.*}} : memref<3x128x8xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: vector.store {{.*}} : memref<2x128x32xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK-NOT: nvvm.vote.sync
// mma loop: ldmatrix.x4 of A from the cp.async ring, of W from the bf16 tile.
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<3x128x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x256xf32>, vector<2xf32>
// CHECK: gpu.return
// FALLBACK: variant = "prefill_w4a16"
// FALLBACK-NOT: nvgpu.ldmatrix
func.func @w4a16_mxfp4(%x: tensor<256x512xbf16>, %w: !fp4.tensor<256x512xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<256x256xf32> {
  %y = fp4.matmul %x, %w : tensor<256x512xbf16>, !fp4.tensor<256x512xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<256x256xf32>
  return %y : tensor<256x256xf32>
}

// -----

// W4A4 NVFP4 with tails: both code tiles dequantized into bf16 tiles
// (3 x 2 x 4 KB codes + 2 x 2 x 16 KB bf16 = 90112 bytes), zero-filled
// cp.async in the tails, guarded stores.
// CHECK-LABEL: module attributes
// CHECK-SAME: variant = "prefill_w4a4_smem", {{[^>]*}}shared_bytes = 90112,
// CHECK: memref.view {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix {{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix {{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<150x70xbf16>, vector<2xbf16>
func.func @w4a4_nvfp4_tails(%x: !fp4.tensor<150x208xf4E2M1FN, #fp4.nvfp4, axis = 1>, %w: !fp4.tensor<70x208xf4E2M1FN, #fp4.nvfp4, axis = 1>) -> tensor<150x70xbf16> {
  %y = fp4.matmul %x, %w : !fp4.tensor<150x208xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<70x208xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<150x70xbf16>
  return %y : tensor<150x70xbf16>
}
