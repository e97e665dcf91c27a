// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90a" | FileCheck %s --check-prefix=SEL
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90a decode-mma=sync" | FileCheck %s --check-prefix=SYNC
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90a decode-mma=wgmma decode-k-unroll=256" | FileCheck %s --check-prefix=ALL
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90a decode-rows-per-cta=32" | FileCheck %s --check-prefix=ROWS
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=CONV
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-mma=wgmma decode-rows-per-cta=32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FALLBACK
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-mma=wgmma decode-split-k=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLITK
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-rows-per-cta=128" | FileCheck %s --check-prefix=ROWS128
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-mma=wgmma decode-rows-per-cta=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-prefetch=1" | FileCheck %s --check-prefix=PREFETCH
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-mma=wgmma decode-prefetch=1" | FileCheck %s --check-prefix=PIPELINED
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_90 decode-mma=wgmma" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWGMMA
// RUN: not fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a decode-mma=tensor" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADVALUE

// The decode family's instruction (GPUConfigSelection.h,
// withDecodeMMADefault): on a chip with warp-group MMA the products of 9
// or more rows take the wgmma form with 128 K elements per iteration and
// the next group's weight words loaded one iteration ahead; M = 1..8 keep
// mma.sync. decode-mma=sync keeps mma.sync everywhere; an
// explicit decode-mma=wgmma applies at every M and keeps a given
// decode-k-unroll; an option only the mma.sync form has
// (decode-rows-per-cta other than 64, here 32) keeps mma.sync by default.
// SEL-LABEL: func.func @f
// SEL: fp4.matmul {{.*}}#fp4.gpu_config<family = decode>}
// SEL: fp4.matmul {{.*}}#fp4.gpu_config<family = decode>}
// SEL: fp4.matmul {{.*}}#fp4.gpu_config<family = decode, k_unroll = 128, prefetch = 1, mma = wgmma>}
// SEL: fp4.matmul {{.*}}#fp4.gpu_config<family = decode, k_unroll = 128, prefetch = 1, mma = wgmma>}
// SEL: fp4.matmul {{.*}}#fp4.gpu_config<family = decode, k_unroll = 128, prefetch = 1, mma = wgmma>}
// SYNC-COUNT-5: #fp4.gpu_config<family = decode>}
// ALL-COUNT-5: #fp4.gpu_config<family = decode, prefetch = 1, mma = wgmma>}
// ROWS-COUNT-5: #fp4.gpu_config<family = decode, rows_per_cta = 32>}
// SM90-COUNT-5: #fp4.gpu_config<family = decode>}

// The kernels: the wgmma form for bf16 and MXFP4 activations from 9 rows
// (W4A4 dequantizes the activation codes into the staged operand); 64
// weight rows per CTA (N = 256: 4 CTAs), two K warp groups.
// CONV: variant = "decode_w4a16", grid = [{{[0-9]+}}, 1, 1]
// CONV: variant = "decode_w4a16", grid = [{{[0-9]+}}, 1, 1]
// CONV: variant = "decode_w4a16_wgmma", grid = [4, 1, 1], block = [256, 1, 1]
// CONV: variant = "decode_w4a16_wgmma", grid = [4, 1, 1], block = [256, 1, 1]
// CONV: variant = "decode_w4a4_wgmma", grid = [4, 1, 1], block = [256, 1, 1]

// An explicit decode-mma=wgmma with a CTA shape of the mma.sync form: the
// decode kernel declines and says why (the reference kernel runs).
// FALLBACK: remark: runs on the reference matmul kernel (bit-exact, untuned, far slower): decode mma = wgmma: a K warp's rows are one or two 64-row warp groups (decode-rows-per-cta = 64 or 128, not 32)

// decode-rows-per-cta=128: two 64-row warp groups share each K warp's
// activation slot on the wgmma form (8 warps: one K warp of two groups;
// N = 256: 2 CTAs); M <= 8 keeps mma.sync (128 rows: 8 row warps).
// ROWS128: variant = "decode_w4a16", grid = [2, 1, 1], block = [256, 1, 1]
// ROWS128: variant = "decode_w4a16", grid = [2, 1, 1]
// ROWS128-COUNT-2: variant = "decode_w4a16_wgmma", grid = [2, 1, 1], block = [256, 1, 1]
// ROWS128: variant = "decode_w4a4_wgmma", grid = [2, 1, 1], block = [256, 1, 1]
// With decode-mma=wgmma at 1 and 8 rows (one 8-row piece: the two groups
// cannot split it) the decode kernel declines and says why.
// ODD: remark: runs on the reference matmul kernel (bit-exact, untuned, far slower): decode mma = wgmma: two warp groups share the staged activations in whole 16-row pieces (decode-rows-per-cta = 128 needs M in 9..16 or 25..32, not 1)

// SPLITK: remark: runs on the reference matmul kernel (bit-exact, untuned, far slower): decode mma = wgmma has no decode-split-k

// decode-prefetch alone keeps mma.sync (its pipelined loop was measured
// there); with decode-mma=wgmma it pipelines the warp-group form.
// PREFETCH-COUNT-4: variant = "decode_w4a16"
// PREFETCH: variant = "decode_w4a4", grid
// PIPELINED-COUNT-4: variant = "decode_w4a16_wgmma"
// PIPELINED: variant = "decode_w4a4_wgmma"

// NOWGMMA: mma = wgmma needs a chip with warp-group MMA (sm_90a); sm_90 has none
// BADVALUE: 'tensor' is not a valid value; valid: sync, wgmma

!w = !fp4.tensor<256x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
!q = !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @f(%a1: tensor<1x4096xbf16>, %a8: tensor<8x4096xbf16>,
             %a9: tensor<9x4096xbf16>, %a16: tensor<16x4096xbf16>, %q: !q, %w: !w)
    -> (tensor<1x256xf32>, tensor<8x256xf32>, tensor<9x256xf32>, tensor<16x256xf32>, tensor<16x256xf32>) {
  %r0 = fp4.matmul %a1, %w : tensor<1x4096xbf16>, !w -> tensor<1x256xf32>
  %r1 = fp4.matmul %a8, %w : tensor<8x4096xbf16>, !w -> tensor<8x256xf32>
  %r2 = fp4.matmul %a9, %w : tensor<9x4096xbf16>, !w -> tensor<9x256xf32>
  %r3 = fp4.matmul %a16, %w : tensor<16x4096xbf16>, !w -> tensor<16x256xf32>
  %r4 = fp4.matmul %q, %w : !q, !w -> tensor<16x256xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<1x256xf32>, tensor<8x256xf32>, tensor<9x256xf32>, tensor<16x256xf32>, tensor<16x256xf32>
}
