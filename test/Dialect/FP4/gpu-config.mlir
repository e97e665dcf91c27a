// RUN: fp4-opt %s -split-input-file | FileCheck %s
// RUN: fp4-opt %s -split-input-file | fp4-opt -split-input-file | FileCheck %s

// #fp4.gpu_config round-trips; parameters at their default are not printed,
// any order parses.

// CHECK-LABEL: func.func @decode
// CHECK: fp4.matmul
// CHECK-SAME: fp4.gpu_config = #fp4.gpu_config<family = decode, warps = 4, k_unroll = 512, rows_per_cta = 32, split_k = 2, prefetch = 1, max_registers = 64>
func.func @decode(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<k_unroll = 512, family = decode, warps = 4, rows_per_cta = 32, split_k = 2, prefetch = 1, max_registers = 64>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

// CHECK-LABEL: func.func @prefill
// CHECK: #fp4.gpu_config<family = prefill, tile_m = 64, tile_n = 64, tile_k = 128, warps_m = 1, warps_n = 2, stages = 4, dequant = registers>
// CHECK: #fp4.gpu_config<family = prefill>}
// CHECK: #fp4.gpu_config<family = prefill, tile_k = 128, mma = wgmma>}
// CHECK: #fp4.gpu_config<family = reference>}
func.func @prefill(%a: tensor<128x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> (tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32>) {
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 64, tile_n = 64, tile_k = 128, warps_m = 1, warps_n = 2, stages = 4, dequant = registers>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  // Every parameter spelled at its default prints as the bare family.
  %s = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 2, warps_n = 4, stages = 3, dequant = shared>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  %u = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, mma = wgmma, tile_k = 128>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  %t = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = reference>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  func.return %r, %s, %u, %t : tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise
// CHECK: fp4.quantize {{.*}}fp4.gpu_config = #fp4.gpu_config<family = elementwise, threads = 128>
// CHECK: fp4.dequantize {{.*}}fp4.gpu_config = #fp4.gpu_config<family = elementwise>
func.func @elementwise(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %q = fp4.quantize %x {fp4.gpu_config = #fp4.gpu_config<family = elementwise, threads = 128>} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %q {fp4.gpu_config = #fp4.gpu_config<family = elementwise, threads = 256>} : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}
