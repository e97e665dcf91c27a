// RUN: fp4-opt %s -fp4-gpu-select-config | FileCheck %s
// RUN: fp4-opt %s -fp4-gpu-select-config="prefill-tile-n=256" | FileCheck %s --check-prefix=TILE
// RUN: fp4-opt %s -convert-fp4-to-gpu | FileCheck %s --check-prefix=CONV
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_86" | FileCheck %s --check-prefix=SM86
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_86" -verify-diagnostics -o /dev/null

// The prefill family's medium class (GPUConfigSelection.cpp): up to the
// chip's mediumMaxM (128) the K step is 128; up to 64 rows the tile takes
// roundUp(M, 16) rows in 16-row warp slices (32-row ones at 64 rows: 8
// warps, not 16, keep ptxas from spilling), 64 columns at 16 rows and 128
// above; 65..128 rows keep the 128 x 128 tile. From 129 rows the family's
// 128 x 128 x 64 defaults (the bare attribute; the printer leaves out
// parameters at their defaults, e.g. warps_m = 2).
// CHECK-LABEL: func.func @medium
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 32, tile_k = 128>}
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 48, tile_k = 128, warps_m = 3>}
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 64, tile_k = 128>}
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_k = 128>}
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill>}

// An option that sets the tile turns the medium class off: the options
// give the tile for every M.
// TILE-COUNT-5: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_n = 256>}

// A tile the chip's shared memory cannot hold (every form of the kernel,
// prefillSharedBytes) steps K by 64, and takes the defaults where even
// that does not fit: sm_80 (166912 bytes) loses the 128-row K-128 tile
// (188416), sm_86 (101376) the K-128 tiles from 32 rows (114688; the
// 16-row one, 65536 with 4 stages, fits). No launch falls back to the reference
// kernel (no remark in the sm_86 RUN).
// SM80: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 32, tile_k = 128>}
// SM80: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 48, tile_k = 128, warps_m = 3>}
// SM80: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 64, tile_k = 128>}
// SM80: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill>}
// SM86: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 32>}
// SM86: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 48, warps_m = 3>}
// SM86: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 64>}
// SM86: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill>}

// The kernels follow: the 40-row product runs 384 threads over 48-row
// tiles, 14336 / 128 = 112 CTAs; 129 rows take two rows of CTA tiles.
// CONV: launches = [<@fp4_kernels::@fp4_matmul_0, variant = "prefill_w4a16_smem", grid = [112, 1, 1], block = [256, 1, 1],
// CONV: launches = [<@fp4_kernels::@fp4_matmul_1, variant = "prefill_w4a16_smem", grid = [112, 1, 1], block = [384, 1, 1],
// CONV: launches = [<@fp4_kernels::@fp4_matmul_2, variant = "prefill_w4a16_smem", grid = [112, 1, 1], block = [256, 1, 1],
// CONV: launches = [<@fp4_kernels::@fp4_matmul_3, variant = "prefill_w4a16_smem", grid = [112, 1, 1], block = [256, 1, 1],
// CONV: launches = [<@fp4_kernels::@fp4_matmul_4, variant = "prefill_w4a16_smem", grid = [112, 2, 1], block = [256, 1, 1],
!w = !fp4.tensor<14336x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @medium(%a: tensor<17x4096xbf16>, %b: tensor<40x4096xbf16>, %c: tensor<64x4096xbf16>, %d: tensor<65x4096xbf16>, %e: tensor<129x4096xbf16>, %w: !w) -> (tensor<17x14336xf32>, tensor<40x14336xf32>, tensor<64x14336xf32>, tensor<65x14336xf32>, tensor<129x14336xf32>) {
  %r0 = fp4.matmul %a, %w : tensor<17x4096xbf16>, !w -> tensor<17x14336xf32>
  %r1 = fp4.matmul %b, %w : tensor<40x4096xbf16>, !w -> tensor<40x14336xf32>
  %r2 = fp4.matmul %c, %w : tensor<64x4096xbf16>, !w -> tensor<64x14336xf32>
  %r3 = fp4.matmul %d, %w : tensor<65x4096xbf16>, !w -> tensor<65x14336xf32>
  %r4 = fp4.matmul %e, %w : tensor<129x4096xbf16>, !w -> tensor<129x14336xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<17x14336xf32>, tensor<40x14336xf32>, tensor<64x14336xf32>, tensor<65x14336xf32>, tensor<129x14336xf32>
}
