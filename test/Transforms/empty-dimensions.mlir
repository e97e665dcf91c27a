// RUN: fp4-opt %s -split-input-file -fp4-quantize=remarks=true -verify-diagnostics
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-outlier-fallback -fp4-residual -fp4-fold-constants | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-outlier-fallback -fp4-fold-constants -fp4-pipeline-cpu -o /dev/null
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-fold-constants -fp4-pipeline-nvvm="chip=sm_90 format=isa" -o /dev/null
// RUN: fp4-opt %s -split-input-file -fp4-fold-constants | FileCheck %s --check-prefix=FOLD

// Regression (fuzzing): a contraction with K = 0 made fp4-fold-constants
// divide by zero (SIGFPE) after -fp4-quantize -fp4-outlier-fallback, and
// fp4-pipeline-nvvm end in "failed to legalize operation 'gpu.func'". An
// empty product has nothing to quantize: it stays a linalg op.
// CHECK-LABEL: func @k0
// CHECK:       linalg.matmul
// CHECK-NOT:   fp4.
func.func @k0(%x: tensor<4x0xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<1.0> : tensor<0x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{not quantized: an operand has an empty dimension (K = 0); there is nothing to quantize}}
  %y = linalg.matmul ins(%x, %w : tensor<4x0xf32>, tensor<0x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// M = 0 and N = 0 too.
// CHECK-LABEL: func @m0
// CHECK:       linalg.matmul
// CHECK-NOT:   fp4.
func.func @m0(%x: tensor<0x64xf32>, %w: tensor<64x0xf32>) -> tensor<0x0xf32> {
  %e = tensor.empty() : tensor<0x0xf32>
  // expected-remark @below {{not quantized: an operand has an empty dimension (size 0); there is nothing to quantize}}
  %y = linalg.matmul ins(%x, %w : tensor<0x64xf32>, tensor<64x0xf32>) outs(%e : tensor<0x0xf32>) -> tensor<0x0xf32>
  return %y : tensor<0x0xf32>
}

// -----

// A hand-written split of an empty constant folds to empty constants (the
// folder used to compute rows = elements / K).
// FOLD-LABEL: func @split_empty
// FOLD-DAG:   arith.constant dense<> : tensor<2x0xf32>
// FOLD-DAG:   arith.constant dense<> : tensor<2x0x1xbf16>
// FOLD-DAG:   arith.constant dense<> : tensor<2x0x1xi8>
// FOLD-NOT:   fp4.split_outliers
func.func @split_empty() -> (tensor<2x0xf32>, tensor<2x0x1xbf16>, tensor<2x0x1xi8>) {
  %w = arith.constant dense<1.0> : tensor<2x0xf32>
  %r, %v, %i = fp4.split_outliers %w block 32 top 1 : tensor<2x0xf32> -> tensor<2x0x1xbf16>, tensor<2x0x1xi8>
  return %r, %v, %i : tensor<2x0xf32>, tensor<2x0x1xbf16>, tensor<2x0x1xi8>
}
