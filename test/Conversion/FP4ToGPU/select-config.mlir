// RUN: fp4-opt %s -fp4-gpu-select-config | FileCheck %s
// RUN: fp4-opt %s -fp4-gpu-select-config="decode-max-m=0 prefill-stages=4 prefill-dequant=registers elementwise-threads=128 decode-k-unroll=512" | FileCheck %s --check-prefix=OVR
// RUN: fp4-opt %s -convert-fp4-to-gpu | FileCheck %s --check-prefix=CONV
// RUN: fp4-opt %s -fp4-gpu-select-config="decode-max-m=0 prefill-stages=4 prefill-dequant=registers elementwise-threads=128" | fp4-opt -convert-fp4-to-gpu | FileCheck %s --check-prefix=HONOUR
// RUN: fp4-opt %s -convert-fp4-to-gpu="decode-max-m=0 prefill-stages=4 prefill-dequant=registers elementwise-threads=128" | FileCheck %s --check-prefix=HONOUR
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90a" | FileCheck %s --check-prefix=SM90A
// RUN: fp4-opt %s -fp4-gpu-select-config="chip=sm_90a prefill-mma=sync" | FileCheck %s --check-prefix=SYNC
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=CONV90A

// The selection step (GPUConfigSelection.h): M <= decode-max-m (the chip's
// 16) gets the decode family, larger M prefill, quantize / dequantize the
// elementwise family, all at #fp4.gpu_config's defaults (printed as the
// bare family: the defaults of GPUConfig.h and of the attribute agree)
// except the 128-row product's K step of 128 (the medium class,
// select-config-medium.mlir); a config already on the op (here:
// reference) is kept.
// CHECK-LABEL: func.func @f
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = decode>}
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_k = 128>}
// CHECK: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = reference>}
// CHECK: fp4.quantize {{.*}}fp4.gpu_config = #fp4.gpu_config<family = elementwise>}
// CHECK: fp4.dequantize {{.*}}fp4.gpu_config = #fp4.gpu_config<family = elementwise>}

// Options override the chip's choices, each in its own family only (the
// decode k_unroll is not applied to a prefill config). With decode-max-m=0
// the M = 1 product is a prefill one of the medium class (M <= the chip's
// 64: a 16-row tile, 64 columns, K steps of 128; select-config-medium.mlir).
// OVR: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 16, tile_n = 64, tile_k = 128, warps_m = 1, stages = 4, dequant = registers>}
// OVR: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_k = 128, stages = 4, dequant = registers>}
// OVR: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = reference>}
// OVR: fp4.quantize {{.*}}fp4.gpu_config = #fp4.gpu_config<family = elementwise, threads = 128>}
// OVR: fp4.dequantize {{.*}}fp4.gpu_config = #fp4.gpu_config<family = elementwise, threads = 128>}

// convert-fp4-to-gpu selects the same configs (and honours the op's own:
// the M = 1 matmul with the reference config gets the reference kernel).
// CONV: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_0, variant = "decode_w4a16", {{[^>]*}}shared_bytes = 0,
// CONV: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_1, variant = "prefill_w4a16_smem", {{[^>]*}}shared_bytes = {{[0-9]+}},
// CONV: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_2, variant = "reference", {{[^>]*}}shared_bytes = 0,
// CONV: <@fp4_kernels::@fp4_dequantize_4, variant = {{"[a-z0-9_]*"}}, grid = [1, 1, 1], block = [256, 1, 1]

// The kernels follow the attached configs (four stages of registers
// dequantization, 128-thread dequantizer) exactly as they follow the same
// options given to convert-fp4-to-gpu.
// HONOUR: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_0, variant = "prefill_w4a16", grid = [4, 1, 1], block = [128, 1, 1], shared_bytes = 32768,
// HONOUR: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_1, variant = "prefill_w4a16", grid = [2, 1, 1], block = [256, 1, 1], shared_bytes = 163840,
// HONOUR: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_2, variant = "reference", {{[^>]*}}shared_bytes = 0,
// HONOUR: <@fp4_kernels::@fp4_dequantize_4, variant = {{"[a-z0-9_]*"}}, grid = [1, 1, 1], block = [128, 1, 1]
// On a chip with warp-group MMA (sm_90a) the prefill configs say mma =
// wgmma (decode ones have no such parameter); prefill-mma=sync keeps
// mma.sync; the 128-row product's kernel is the wgmma form.
// SM90A: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = decode>}
// SM90A: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_k = 128, mma = wgmma>}
// SYNC: fp4.matmul {{.*}}fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_k = 128>}
// CONV90A: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_1, variant = "prefill_w4a16_smem_wgmma", {{[^>]*}}block = [256, 1, 1], shared_bytes = 188416,
func.func @f(%a: tensor<1x4096xbf16>, %b: tensor<128x4096xbf16>, %w: !fp4.tensor<256x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>, %x: tensor<4x64xf32>) -> (tensor<1x256xf32>, tensor<128x256xf32>, tensor<1x256xf32>, tensor<4x64xf32>) {
  %r0 = fp4.matmul %a, %w : tensor<1x4096xbf16>, !fp4.tensor<256x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x256xf32>
  %r1 = fp4.matmul %b, %w : tensor<128x4096xbf16>, !fp4.tensor<256x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x256xf32>
  %r2 = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = reference>} : tensor<1x4096xbf16>, !fp4.tensor<256x4096xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x256xf32>
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x64xf32>
  return %r0, %r1, %r2, %d : tensor<1x256xf32>, tensor<128x256xf32>, tensor<1x256xf32>, tensor<4x64xf32>
}
