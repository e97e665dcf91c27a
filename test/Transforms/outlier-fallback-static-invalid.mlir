// RUN: %python %S/Inputs/write_npz.py %t.npz @narrow/arg0=2x32 @present/arg0=1x64
// RUN: fp4-opt %s -split-input-file -fp4-outlier-fallback="mode=static-channels calibration=%t.npz" -verify-diagnostics

// Calibration data the static variant needs but cannot find or use is an
// error on the quantize, naming the key.

func.func @missing(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  // expected-error-re @below {{no calibration data for key '@missing/arg0' in '{{.*}}.npz'}}
  %qx = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @narrow(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{calibration data '@narrow/arg0' has 32 channels (its last axis), but the quantized axis has 64 elements}}
  %qx = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @no_key(%w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %x = tensor.empty() : tensor<4x64xf32>
  // expected-error @below {{no calibration key for this value}}
  %qx = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<8x64xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
