// Errors of fp4-error-report. Problems with the files fail the pass with an
// error naming the file and the reason:
// RUN: not fp4-opt %s -fp4-error-report="calibration=%t.missing.npz" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not fp4-opt %s -fp4-error-report="calibration=%s" 2>&1 | FileCheck %s --check-prefix=NOTNPZ
// RUN: %python %S/Inputs/write_npz.py %t.z.npz x=2x32 --compressed
// RUN: not fp4-opt %s -fp4-error-report="calibration=%t.z.npz" 2>&1 | FileCheck %s --check-prefix=COMPRESSED
// RUN: %python %S/Inputs/write_npz.py %t.f8.npz x=2x32:1:'<f8'
// RUN: not fp4-opt %s -fp4-error-report="calibration=%t.f8.npz" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: %python %S/Inputs/write_npz.py %t.scalar.npz x=
// RUN: not fp4-opt %s -fp4-error-report="calibration=%t.scalar.npz" 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not fp4-opt %s -fp4-error-report="output=%t.no/such/dir/r.json" 2>&1 | FileCheck %s --check-prefix=OUTPUT
// Problems with the data of one op are errors on that op:
// RUN: %python %S/Inputs/write_npz.py %t.npz @channels/arg0=4x16 @tiles/arg0=3x32 @ok/arg0=2x32
// RUN: fp4-opt %s -split-input-file -fp4-error-report="calibration=%t.npz" -verify-diagnostics

// MISSING: error: fp4-error-report: cannot open calibration file '{{.*}}missing.npz': {{.*}}
// NOTNPZ: error: fp4-error-report: calibration file '{{.*}}error-report-invalid.mlir': not a NumPy .npz archive (no zip end record); write it with np.savez
// COMPRESSED: error: fp4-error-report: calibration file '{{.*}}': member 'x.npy' is compressed (method 8); write the file with np.savez, not np.savez_compressed
// DTYPE: error: fp4-error-report: calibration file '{{.*}}': member 'x.npy': dtype '<f8' is not little-endian float32 ('<f4'); save x.astype(np.float32)
// SCALAR: error: fp4-error-report: calibration file '{{.*}}': member 'x.npy': is a scalar (rank 0); calibration arrays need a channel axis (the last one)
// OUTPUT: error: fp4-error-report: cannot open output file '{{.*}}r.json': {{.*}}

// The samples' last axis must be the quantized axis.
func.func @channels(%x: tensor<4x32xf32>) -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-error @below {{calibration data '@channels/arg0' has 16 channels (its last axis), but the quantized axis has 32 elements}}
  %q = fp4.quantize %x : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// The samples form one [rows, K] tensor, which the scheme must accept:
// NVFP4 16x16 tiles need a multiple of 16 rows.
func.func @tiles(%x: tensor<16x32xf32>) -> !fp4.tensor<16x32xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> {
  // expected-error @below {{calibration data '@tiles/arg0' (3 x 32) cannot be quantized with the op's scheme: }}
  %q = fp4.quantize %x : tensor<16x32xf32> -> !fp4.tensor<16x32xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  return %q : !fp4.tensor<16x32xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
}

// -----

// Values without data are skipped with a remark naming the key looked for;
// a value with no key at all says so.
func.func @missing(%x: tensor<2x32xf32>) -> (!fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-remark @below {{.npz' has no data for key '@missing/arg0'}}
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = arith.negf %x : tensor<2x32xf32>
  // expected-remark @below {{not analyzed: input is not a constant (behind linalg.transpose, arith.extf, arith.truncf), and the input has no calibration key}}
  %r = fp4.quantize %y : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q, %r : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// A value with data is analysed (samples 0, 1/8, ..., 63/8 as one 2x32 tensor).
func.func @ok(%x: tensor<2x32xf32>) -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  // expected-remark @below {{(calibration, key '@ok/arg0')}}
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}
