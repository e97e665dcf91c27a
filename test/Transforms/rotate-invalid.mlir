// Invalid options are errors on the module, and the pass fails.
// RUN: not fp4-opt %s -fp4-rotate=size=24 2>&1 | FileCheck %s --check-prefix=POW2
// POW2: error: fp4-rotate: size 24 is not a power of two
// RUN: not fp4-opt %s -fp4-rotate=size=8 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: fp4-rotate: size 8 is outside [16, 256]
// RUN: not fp4-opt %s -fp4-rotate=size=512 2>&1 | FileCheck %s --check-prefix=LARGE
// LARGE: error: fp4-rotate: size 512 is outside [16, 256]
// RUN: not fp4-opt %s -fp4-rotate=mode=random 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: invalid options for pass 'fp4-rotate' (`mode=random`): for the --mode option: 'random' is not a valid value; valid: randomized, deterministic, two-level
//
// A size that does not divide K of a matmul the pass would rotate is an
// error on that matmul, reported before anything is rewritten.
// RUN: fp4-opt %s -split-input-file -fp4-rotate=size=64 -verify-diagnostics

func.func @k96(%x: tensor<4x96xf32>, %w: tensor<8x96xf32>) -> tensor<4x8xf32> {
  %xq = fp4.quantize %x : tensor<4x96xf32> -> !fp4.tensor<4x96xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wq = fp4.quantize %w : tensor<8x96xf32> -> !fp4.tensor<8x96xf4E2M1FN, #fp4.mxfp4, axis = 1>
  // expected-error @below {{'fp4.matmul' op fp4-rotate: size 64 does not divide K = 96}}
  %y = fp4.matmul %xq, %wq : !fp4.tensor<4x96xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x96xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Float operands too.
func.func @float_k48(%x: tensor<4x48xf32>, %w: tensor<8x48xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{'fp4.matmul' op fp4-rotate: size 64 does not divide K = 48}}
  %y = fp4.matmul %x, %w : tensor<4x48xf32>, tensor<8x48xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
