// fp4-outlier-fallback and fp4-residual compose in either order, after
// fp4-quantize, and the result survives canonicalization.
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-outlier-fallback=operands=activations -fp4-residual -canonicalize | FileCheck %s --check-prefix=OR
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-residual -fp4-outlier-fallback=operands=activations -canonicalize | FileCheck %s --check-prefix=RO
// RUN: fp4-opt %s -split-input-file -fp4-quantize -fp4-residual -fp4-outlier-fallback -canonicalize | FileCheck %s --check-prefix=BOTH

// Outliers first: the residual is that of the rest against its quantization.
// OR-LABEL: func @linear
// OR-SAME: (%[[X:.*]]: tensor<?x64xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
// OR:       %[[R:.*]], %[[V:.*]], %[[I:.*]] = fp4.split_outliers %[[X]] block 32 top 1
// OR:       %[[Q:.*]] = fp4.quantize %[[R]]
// OR:       %[[RV:.*]], %[[RI:.*]] = fp4.residual %[[R]], %[[Q]] block 4 top 2
// OR:       %[[QW:.*]] = fp4.quantize %[[W]]
// OR:       %[[P0:.*]] = fp4.matmul %[[Q]], %[[QW]] {{.*}} -> tensor<?x32xf32>
// OR:       %[[P1:.*]] = fp4.correction_matmul (%[[V]], %[[I]] block 32), (%[[QW]]) acc %[[P0]] {{.*}} -> tensor<?x32xf32>
// OR:       %[[P2:.*]] = fp4.correction_matmul (%[[RV]], %[[RI]] block 4), (%[[QW]]) acc %[[P1]] {{.*}} -> tensor<?x32xbf16>
// OR:       return %[[P2]]
// Residual first: the residual is recomputed against the new quantize, in
// place in the chain; the stale quantize and residual are gone.
// RO-LABEL: func @linear
// RO-SAME: (%[[X:.*]]: tensor<?x64xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
// RO:       %[[R:.*]], %[[V:.*]], %[[I:.*]] = fp4.split_outliers %[[X]] block 32 top 1
// RO:       %[[Q:.*]] = fp4.quantize %[[R]]
// RO:       %[[RV:.*]], %[[RI:.*]] = fp4.residual %[[R]], %[[Q]] block 4 top 2
// RO:       %[[QW:.*]] = fp4.quantize %[[W]]
// RO:       %[[P0:.*]] = fp4.matmul %[[Q]], %[[QW]] {{.*}} -> tensor<?x32xf32>
// RO:       %[[P1:.*]] = fp4.correction_matmul (%[[RV]], %[[RI]] block 4), (%[[QW]]) acc %[[P0]] {{.*}} -> tensor<?x32xf32>
// RO:       %[[P2:.*]] = fp4.correction_matmul (%[[V]], %[[I]] block 32), (%[[QW]]) acc %[[P1]] {{.*}} -> tensor<?x32xbf16>
// RO:       return %[[P2]]
// RO-NOT:   fp4.residual
// RO-NOT:   fp4.quantize %[[X]]
// With the weights split too, every activation part meets every weight
// part: 2 x 3 minus the quantized product = 5 correction terms.
// BOTH-LABEL: func @linear
// BOTH:       fp4.matmul
// BOTH-COUNT-5: fp4.correction_matmul
// BOTH-NOT:   fp4.correction_matmul
func.func @linear(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x32xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%m) : tensor<?x32xbf16>
  %z = arith.constant 0.0 : bf16
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<?x32xbf16>) -> tensor<?x32xbf16>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x64xbf16>, tensor<32x64xbf16>) outs(%f : tensor<?x32xbf16>) -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}
