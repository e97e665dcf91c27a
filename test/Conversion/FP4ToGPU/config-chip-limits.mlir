// RUN: fp4-opt %s -split-input-file -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90"
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -fp4-gpu-select-config="chip=sm_90"

// A config on an op is honoured, but must fit the chip: both passes check
// it against the chip description before anything is lowered.

func.func @threads(%a: tensor<128x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<128x8xf32> {
  // expected-error @below {{'fp4.matmul' op gpu_config #fp4.gpu_config<family = prefill, warps_m = 8, warps_n = 8> needs 2048 threads per block; sm_90 has at most 1024}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, warps_m = 8, warps_n = 8>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  return %r : tensor<128x8xf32>
}

// -----

func.func @registers(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{'fp4.matmul' op gpu_config #fp4.gpu_config<family = decode, warps = 16, max_registers = 200>: 512 threads x 200 registers exceed sm_90's register file of 65536 per SM}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = decode, warps = 16, max_registers = 200>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @wgmma_on_sm90(%a: tensor<128x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<128x8xf32> {
  // expected-error @below {{'fp4.matmul' op gpu_config #fp4.gpu_config<family = prefill, mma = wgmma>: mma = wgmma needs a chip with warp-group MMA (sm_90a); sm_90 has none}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, mma = wgmma>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  return %r : tensor<128x8xf32>
}
