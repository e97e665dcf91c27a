// Invalid options are errors on the module, and the pass fails.
//
// RUN: not fp4-opt %s -fp4-outlier-fallback=k=3 2>&1 | FileCheck %s --check-prefix=K
// K: outlier-fallback-options.mlir:0:0: error: fp4-outlier-fallback: k = 3 is not 1, 2 or 4
//
// RUN: not fp4-opt %s -fp4-outlier-fallback=block-size=256 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: error: fp4-outlier-fallback: block-size = 256 is outside [k, 128] = [1, 128] (in-block indices are i8)
//
// RUN: not fp4-opt %s -fp4-outlier-fallback="k=4 block-size=2" 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: fp4-outlier-fallback: block-size = 2 is outside [k, 128] = [4, 128] (in-block indices are i8)
//
// RUN: not fp4-opt %s -fp4-outlier-fallback=mode=largest 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: invalid options for pass 'fp4-outlier-fallback' (`mode=largest`): for the --mode option: 'largest' is not a valid value; valid: block-topk, static-channels
//
// RUN: not fp4-opt %s -fp4-outlier-fallback=mode=static-channels 2>&1 | FileCheck %s --check-prefix=NOCAL
// NOCAL: error: fp4-outlier-fallback: mode=static-channels needs calibration=<file.npz> (docs/Calibration.md)
//
// RUN: not fp4-opt %s -fp4-outlier-fallback="mode=static-channels calibration=%t.missing.npz" 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: fp4-outlier-fallback: cannot open calibration file '{{.*}}.missing.npz'
//
// RUN: not fp4-opt %s -fp4-outlier-fallback="mode=static-channels calibration=%s" 2>&1 | FileCheck %s --check-prefix=NOTNPZ
// NOTNPZ: error: fp4-outlier-fallback: calibration file '{{.*}}outlier-fallback-options.mlir': not a NumPy .npz archive
//
// RUN: not fp4-opt %s -fp4-outlier-fallback="mode=static-channels calibration=%s threshold=-1" 2>&1 | FileCheck %s --check-prefix=THRESHOLD
// THRESHOLD: error: fp4-outlier-fallback: threshold = -1.000000 must be a non-negative number
//
// RUN: not fp4-opt %s -fp4-outlier-fallback="calibration=%s" 2>&1 | FileCheck %s --check-prefix=CALTOPK
// CALTOPK: error: fp4-outlier-fallback: calibration applies to mode=static-channels
//
// RUN: not fp4-opt %s -fp4-outlier-fallback=operands=all 2>&1 | FileCheck %s --check-prefix=OPERANDS
// OPERANDS: invalid options for pass 'fp4-outlier-fallback' (`operands=all`): for the --operands option: 'all' is not a valid value; valid: activations, weights, both
//
// An explicit block size must divide the K of every operand it applies to:
// an error on the product.
// RUN: not fp4-opt %s -fp4-outlier-fallback=block-size=48 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: outlier-fallback-options.mlir:[[@LINE+10]]:8: error: fp4-outlier-fallback: block-size = 48 does not divide K = 64 of the lhs
// DIVIDE: outlier-fallback-options.mlir:[[@LINE+9]]:8: error: fp4-outlier-fallback: block-size = 48 does not divide K = 64 of the rhs
//
// Nothing is rewritten when the options are wrong.
// K-NOT: fp4.split_outliers
// DIVIDE-NOT: fp4.split_outliers

func.func @linear(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %qx = fp4.quantize %x : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qw = fp4.quantize %w : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
