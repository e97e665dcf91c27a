// RUN: fp4-opt %s -split-input-file -verify-diagnostics

// The verifier of #fp4.gpu_config (ranges, divisibility, parameters of
// another family) and of the fp4.gpu_config attribute on ops.

func.func @k_unroll(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: k_unroll=100 is out of range (128..1024, a multiple of 128)}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = decode, k_unroll = 100>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @rows(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: rows_per_cta=24 is out of range (0..256, a multiple of 16)}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = decode, rows_per_cta = 24>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @max_registers(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: max_registers=16 is out of range (0 or 32..255)}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = decode, max_registers = 16>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @stages(%a: tensor<128x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<128x8xf32> {
  // expected-error @below {{gpu_config: stages=9 is out of range (2..6)}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, stages = 9>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  return %r : tensor<128x8xf32>
}

// -----

func.func @tile_n(%a: tensor<128x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<128x8xf32> {
  // expected-error @below {{gpu_config: tile_n=12 is out of range (8..256, a multiple of 8)}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = prefill, tile_n = 12>} : tensor<128x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<128x8xf32>
  return %r : tensor<128x8xf32>
}

// -----

func.func @threads(%x: tensor<4x64xf32>) -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-error @below {{gpu_config: threads=100 is out of range (32..1024, a multiple of 32)}}
  %q = fp4.quantize %x {fp4.gpu_config = #fp4.gpu_config<family = elementwise, threads = 100>} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

func.func @other_family(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: tile_m is a parameter of the prefill family, not of decode}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = decode, tile_m = 64>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @other_family_dequant(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: dequant is a parameter of the prefill family, not of reference}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = reference, dequant = registers>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @other_family_mma(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: mma is a parameter of the decode and prefill families, not of reference}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = reference, mma = wgmma>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @unknown_family(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{expected ::mlir::fp4::GPUKernelFamily to be one of: decode, prefill, reference, elementwise}}
  // expected-error @below {{failed to parse FP4_GPUConfigAttr parameter 'family'}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = wgmma>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @missing_family(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{struct is missing required parameter: family}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<k_unroll = 512>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @elementwise_matmul(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{'fp4.matmul' op takes a decode, prefill or reference gpu_config, not elementwise}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = elementwise>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

func.func @decode_quantize(%x: tensor<4x64xf32>) -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-error @below {{'fp4.quantize' op takes an elementwise gpu_config, not decode}}
  %q = fp4.quantize %x {fp4.gpu_config = #fp4.gpu_config<family = decode>} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

func.func @not_a_config(%x: tensor<4x64xf32>) -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-error @below {{'fp4.quantize' op attribute 'fp4.gpu_config' must be a #fp4.gpu_config}}
  %q = fp4.quantize %x {fp4.gpu_config = 3 : i64} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

func.func @wrong_op(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @below {{'arith.addf' op 'fp4.gpu_config' applies to fp4.matmul, fp4.quantize and fp4.dequantize only}}
  %y = arith.addf %x, %x {fp4.gpu_config = #fp4.gpu_config<family = elementwise>} : tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @row_groups(%a: tensor<1x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<1x8xf32> {
  // expected-error @below {{gpu_config: warps=6 is not a multiple of the 4 row groups of rows_per_cta=64 (16 weight rows each)}}
  %r = fp4.matmul %a, %w {fp4.gpu_config = #fp4.gpu_config<family = decode, warps = 6, rows_per_cta = 64>} : tensor<1x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}
