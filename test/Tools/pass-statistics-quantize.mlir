// fp4-quantize's statistics through fp4-opt's record (Debian's MLIR counts
// none itself): one contraction quantized, one skipped for its shape (K = 48
// is not a multiple of MXFP4's 32-element blocks).
// RUN: fp4-opt %s -fp4-quantize -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s

// CHECK:      Pass statistics report (fp4)
// CHECK:      FP4Quantize
// CHECK-DAG:    (S) 1 skipped-shape - Contractions left unchanged: K dynamic, empty or not a multiple of the scheme's blocks
// CHECK-DAG:    (S) 1 quantized - Contractions rewritten to fp4.matmul

func.func @ok(%a: tensor<4x64xf32>, %w: tensor<64x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

func.func @odd_k(%a: tensor<4x48xf32>, %w: tensor<48x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.matmul ins(%a, %w : tensor<4x48xf32>, tensor<48x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
