// RUN: fp4-opt %s -fp4-quantize -canonicalize | FileCheck %s

// The rewrite composes with upstream cleanups: dead zero fills disappear, a
// truncation of a constant weight folds into the constant, and the transpose
// of a [N, M] product cancels against the transpose the next matmul needs.

// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xbf16>)
// CHECK-DAG:   %[[W2:.*]] = arith.constant dense<1.000000e+00> : tensor<32x64xbf16>
// CHECK-DAG:   %[[W3:.*]] = arith.constant dense<2.000000e+00> : tensor<32x64xbf16>
// CHECK-DAG:   %[[W1:.*]] = arith.constant dense<5.000000e-01> : tensor<64x32xbf16>
// CHECK-NOT:   linalg.fill
// CHECK-NOT:   linalg.matmul
// CHECK:       %[[QX:.*]] = fp4.quantize %[[X]] : tensor<?x64xbf16> -> !fp4.tensor<?x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[W1T:.*]] = linalg.transpose ins(%[[W1]] : tensor<64x32xbf16>)
// CHECK:       %[[QW1:.*]] = fp4.quantize %[[W1T]] : tensor<32x64xbf16>
// CHECK:       %[[H:.*]] = fp4.matmul %[[QX]], %[[QW1]] {{.*}} -> tensor<?x32xbf16>
// CHECK:       %[[QH:.*]] = fp4.quantize %[[H]] : tensor<?x32xbf16>
// CHECK:       %[[W2T:.*]] = linalg.transpose ins(%[[W2]] : tensor<32x64xbf16>)
// CHECK:       %[[QW2:.*]] = fp4.quantize %[[W2T]] : tensor<64x32xbf16>
// CHECK:       %[[G:.*]] = fp4.matmul %[[QH]], %[[QW2]] {{.*}} -> tensor<?x64xbf16>
// CHECK-NOT:   linalg.transpose
// CHECK:       %[[QG:.*]] = fp4.quantize %[[G]] : tensor<?x64xbf16>
// CHECK:       %[[QW3:.*]] = fp4.quantize %[[W3]] : tensor<32x64xbf16>
// CHECK:       %[[P:.*]] = fp4.matmul %[[QG]], %[[QW3]] {{.*}} -> tensor<?x32xf32>
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<?x32xf32>) outs(%[[H]] : tensor<?x32xbf16>)
// CHECK:       return %[[Y]]
func.func @chain(%x: tensor<?x64xbf16>) -> tensor<?x32xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %zero = arith.constant 0.0 : bf16
  // h = x * w1, w1 given as [K, N].
  %w1 = arith.constant dense<0.5> : tensor<64x32xbf16>
  %e1 = tensor.empty(%m) : tensor<?x32xbf16>
  %c1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<?x32xbf16>) -> tensor<?x32xbf16>
  %h = linalg.matmul ins(%x, %w1 : tensor<?x64xbf16>, tensor<64x32xbf16>) outs(%c1 : tensor<?x32xbf16>) -> tensor<?x32xbf16>
  // g^T = (h * w2)^T with an f32 weight truncated to bf16 by the body.
  %w2 = arith.constant dense<1.0> : tensor<32x64xf32>
  %e2 = tensor.empty(%m) : tensor<64x?xbf16>
  %c2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<64x?xbf16>) -> tensor<64x?xbf16>
  %gt = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (n, m)>]
      ins(%h, %w2 : tensor<?x32xbf16>, tensor<32x64xf32>) outs(%c2 : tensor<64x?xbf16>) -> tensor<64x?xbf16>
  // y = h + g * w3^T, reading g through its transpose.
  %w3 = arith.constant dense<2.0> : tensor<32x64xbf16>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%gt, %w3 : tensor<64x?xbf16>, tensor<32x64xbf16>) outs(%h : tensor<?x32xbf16>) -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}
