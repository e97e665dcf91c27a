// RUN: %python %S/Inputs/rotate_calibration.py %t.npz
// RUN: fp4-opt %s -split-input-file -fp4-rotate="mode=two-level calibration=%t.npz" -verify-diagnostics
//
// Option errors are errors on the module, and the pass fails.
// RUN: not fp4-opt %s -fp4-rotate=mode=two-level 2>&1 | FileCheck %s --check-prefix=NOCAL
// NOCAL: error: fp4-rotate: two-level mode needs calibration data (calibration=<file.npz>, docs/Calibration.md)
// RUN: not fp4-opt %s -fp4-rotate="mode=two-level calibration=%t.missing.npz" 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: fp4-rotate: cannot open calibration file '{{.*}}missing.npz': No such file or directory

// Every matmul two-level mode rotates needs samples of its activation; the
// error names the key looked for. Nothing is rewritten.
func.func @missing(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  // expected-error-re @below {{no calibration data for key '@missing/arg0' in '{{.*}}.npz'}}
  %xq = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %xq, %wq : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @channels(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{calibration data 'short' has 32 channels (its last axis), but the quantized axis has 64 elements}}
  %xq = fp4.quantize %x {fp4.calibration = "short"} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %xq, %wq : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// NVFP4 16x16 tiles cannot quantize the 4 sample rows of '@ramp/arg0'.
func.func @ramp(%x: tensor<16x64xf32>, %w: tensor<16x64xf32>) -> tensor<16x16xf32> {
  %xq = fp4.quantize %x : tensor<16x64xf32> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  %wq = fp4.quantize %w : tensor<16x64xf32> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  // expected-error @below {{'fp4.matmul' op fp4-rotate: the calibration samples of the activation (4 rows of key '@ramp/arg0') cannot be quantized with #fp4.nvfp4<tile2d = true>}}
  %y = fp4.matmul %xq, %wq : !fp4.tensor<16x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>, !fp4.tensor<16x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// An unquantized activation is not balanced: the matmul is left alone (a
// remark with remarks=true, the pass's summary warning without), without an
// error.
func.func @float_activation(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  %wq = fp4.quantize %w : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-warning @below {{fp4-rotate: nothing rotated: 1 candidate(s) left unchanged, first here: two-level mode balances the quantized activation (lhs), and the lhs is not quantized; remarks=true gives each}}
  %y = fp4.matmul %x, %wq : tensor<4x64xf32>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
