// RUN: fp4-opt %s -split-input-file -fp4-quantize | FileCheck %s

// The forms frontends emit, quantized with the default #fp4.mxfp4 on both
// operands. Schemes and operand selection: quantize-schemes.mlir; what is
// left alone and why: quantize-invalid.mlir.

// linalg.matmul with the default maps: B is [K, N], fp4.matmul wants [N, K].
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<64x32xf32>)
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<16x64xf32> -> !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<32x64xf32>
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<64x32xf32>) outs(%[[E]] : tensor<32x64xf32>) permutation = [1, 0]
// CHECK:       %[[QB:.*]] = fp4.quantize %[[BT]] : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] : !fp4.tensor<16x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<16x32xf32>
// CHECK-NOT:   linalg.matmul
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// B already [N, K] (a PyTorch linear weight): no transpose at all.
// CHECK-LABEL: func @matmul_transpose_b
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<32x64xf32>)
// CHECK-NOT:   linalg.transpose
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<16x64xf32>
// CHECK-NOT:   linalg.transpose
// CHECK:       %[[QB:.*]] = fp4.quantize %[[B]] : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] {{.*}} -> tensor<16x32xf32>
// CHECK:       return %[[R]]
func.func @matmul_transpose_b(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// A given as [K, M]: A is transposed, B is already [N, K].
// CHECK-LABEL: func @matmul_transpose_a
// CHECK-SAME: (%[[A:.*]]: tensor<64x16xf32>, %[[B:.*]]: tensor<32x64xf32>)
// CHECK:       %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<64x16xf32>) outs(%{{.*}} : tensor<16x64xf32>) permutation = [1, 0]
// CHECK:       %[[QA:.*]] = fp4.quantize %[[AT]] : tensor<16x64xf32>
// CHECK-NOT:   linalg.transpose
// CHECK:       %[[QB:.*]] = fp4.quantize %[[B]] : tensor<32x64xf32>
// CHECK:       fp4.matmul %[[QA]], %[[QB]]
func.func @matmul_transpose_a(%a: tensor<64x16xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<64x16xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Both operands transposed.
// CHECK-LABEL: func @matmul_transpose_both
// CHECK-SAME: (%[[A:.*]]: tensor<64x16xbf16>, %[[B:.*]]: tensor<64x32xbf16>)
// CHECK:       %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<64x16xbf16>) outs(%{{.*}} : tensor<16x64xbf16>) permutation = [1, 0]
// CHECK:       %[[QA:.*]] = fp4.quantize %[[AT]] : tensor<16x64xbf16>
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<64x32xbf16>) outs(%{{.*}} : tensor<32x64xbf16>) permutation = [1, 0]
// CHECK:       %[[QB:.*]] = fp4.quantize %[[BT]] : tensor<32x64xbf16>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] {{.*}} -> tensor<16x32xbf16>
// CHECK:       return %[[R]]
func.func @matmul_transpose_both(%a: tensor<64x16xbf16>, %b: tensor<64x32xbf16>) -> tensor<16x32xbf16> {
  %cst = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x32xbf16>
  %c = linalg.fill ins(%cst : bf16) outs(%e : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<64x16xbf16>, tensor<64x32xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %r : tensor<16x32xbf16>
}

// -----

// A zero splat constant is a zero accumulator too.
// CHECK-LABEL: func @matmul_zero_constant_acc
// CHECK:       %[[R:.*]] = fp4.matmul {{.*}} -> tensor<16x32xf32>
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]
func.func @matmul_zero_constant_acc(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %c = arith.constant dense<0.0> : tensor<16x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// C += A * B with a live accumulator: fp4.matmul gives f32 and C is added
// elementwise.
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @matmul_accumulate
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<32x64xf32>, %[[C:.*]]: tensor<16x32xf32>)
// CHECK:       %[[P:.*]] = fp4.matmul {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]] : tensor<16x32xf32>) outs(%[[C]] : tensor<16x32xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT:    linalg.yield %[[S]] : f32
// CHECK:       return %[[R]]
func.func @matmul_accumulate(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// A non-zero fill is a live accumulator.
// CHECK-LABEL: func @matmul_nonzero_fill
// CHECK:       %[[FILL:.*]] = linalg.fill
// CHECK:       %[[P:.*]] = fp4.matmul {{.*}} -> tensor<16x32xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[P]] : tensor<16x32xf32>) outs(%[[FILL]] : tensor<16x32xf32>)
// CHECK:         arith.addf
func.func @matmul_nonzero_fill(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %cst = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// bf16 operands, f32 output (the body extends exactly): the bf16 tensors are
// quantized as they are.
// CHECK-LABEL: func @matmul_bf16_in_f32_out
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xbf16>, %[[B:.*]]: tensor<32x64xbf16>)
// CHECK-NOT:   arith.extf
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<16x64xbf16>
// CHECK:       %[[QB:.*]] = fp4.quantize %[[B]] : tensor<32x64xbf16>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] {{.*}} -> tensor<16x32xf32>
// CHECK:       return %[[R]]
func.func @matmul_bf16_in_f32_out(%a: tensor<16x64xbf16>, %b: tensor<32x64xbf16>) -> tensor<16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// bf16 in and out with a zero accumulator: fp4.matmul sums in f32 and rounds
// once to bf16.
// CHECK-LABEL: func @matmul_bf16
// CHECK:       %[[R:.*]] = fp4.matmul {{.*}} -> tensor<16x32xbf16>
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]
func.func @matmul_bf16(%a: tensor<16x64xbf16>, %b: tensor<32x64xbf16>) -> tensor<16x32xbf16> {
  %cst = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x32xbf16>
  %c = linalg.fill ins(%cst : bf16) outs(%e : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %r : tensor<16x32xbf16>
}

// -----

// bf16 output with a live accumulator: the product stays f32, C is extended,
// added in f32 and the sum rounded once to bf16.
// CHECK-LABEL: func @matmul_bf16_accumulate
// CHECK-SAME: %[[C:[a-zA-Z0-9_]*]]: tensor<16x32xbf16>)
// CHECK:       %[[P:.*]] = fp4.matmul {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<16x32xf32>) outs(%[[C]] : tensor<16x32xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: bf16):
// CHECK-NEXT:    %[[OUT32:.*]] = arith.extf %[[OUT]] : bf16 to f32
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[OUT32]], %[[IN]] : f32
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[T]] : bf16
// CHECK:       return %[[R]]
func.func @matmul_bf16_accumulate(%a: tensor<16x64xbf16>, %b: tensor<32x64xbf16>, %c: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %r : tensor<16x32xbf16>
}

// -----

// f32 operands into a bf16 output: linalg.matmul truncates the operands to
// bf16 before multiplying, so the quantized tensors are the truncated ones.
// CHECK-LABEL: func @matmul_f32_in_bf16_out
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<32x64xf32>)
// CHECK:       %[[TA:.*]] = arith.truncf %[[A]] : tensor<16x64xf32> to tensor<16x64xbf16>
// CHECK:       %[[QA:.*]] = fp4.quantize %[[TA]] : tensor<16x64xbf16>
// CHECK:       %[[TB:.*]] = arith.truncf %[[B]] : tensor<32x64xf32> to tensor<32x64xbf16>
// CHECK:       %[[QB:.*]] = fp4.quantize %[[TB]] : tensor<32x64xbf16>
// CHECK:       fp4.matmul %[[QA]], %[[QB]] {{.*}} -> tensor<16x32xbf16>
func.func @matmul_f32_in_bf16_out(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xbf16> {
  %cst = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x32xbf16>
  %c = linalg.fill ins(%cst : bf16) outs(%e : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %r : tensor<16x32xbf16>
}

// -----

// A body that rounds rhs through f8E4M3FN before multiplying (fake
// quantization): the whole conversion chain is applied to the tensor, and the
// result of the chain is what gets quantized.
// CHECK-LABEL: func @conversion_chain
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<32x64xf32>
// CHECK:       fp4.quantize %[[A]] : tensor<16x64xf32>
// CHECK:       %[[B8:.*]] = arith.truncf %[[B]] : tensor<32x64xf32> to tensor<32x64xf8E4M3FN>
// CHECK:       %[[B32:.*]] = arith.extf %[[B8]] : tensor<32x64xf8E4M3FN> to tensor<32x64xf32>
// CHECK:       fp4.quantize %[[B32]] : tensor<32x64xf32>
// CHECK:       fp4.matmul
func.func @conversion_chain(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %w8 = arith.truncf %w : f32 to f8E4M3FN
    %w32 = arith.extf %w8 : f8E4M3FN to f32
    %p = arith.mulf %x, %w32 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// f16 operands and output.
// CHECK-LABEL: func @matmul_f16
// CHECK:       fp4.quantize %{{.*}} : tensor<16x64xf16>
// CHECK:       fp4.matmul {{.*}} -> tensor<16x32xf16>
func.func @matmul_f16(%a: tensor<16x64xf16>, %b: tensor<32x64xf16>) -> tensor<16x32xf16> {
  %cst = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<16x32xf16>
  %c = linalg.fill ins(%cst : f16) outs(%e : tensor<16x32xf16>) -> tensor<16x32xf16>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf16>, tensor<32x64xf16>) outs(%c : tensor<16x32xf16>) -> tensor<16x32xf16>
  return %r : tensor<16x32xf16>
}

// -----

// Dynamic M (tokens): the quantized activation keeps the dynamic dimension.
// CHECK-LABEL: func @matmul_dynamic_m
// CHECK-SAME: (%[[A:.*]]: tensor<?x64xf32>, %[[B:.*]]: tensor<32x64xf32>, %[[M:.*]]: index)
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<?x64xf32> -> !fp4.tensor<?x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[QB:.*]] = fp4.quantize %[[B]]
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] : !fp4.tensor<?x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<?x32xf32>
// CHECK:       return %[[R]]
func.func @matmul_dynamic_m(%a: tensor<?x64xf32>, %b: tensor<32x64xf32>, %m: index) -> tensor<?x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<?x64xf32>, tensor<32x64xf32>) outs(%c : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// -----

// Dynamic M behind a transpose: the transposes take their sizes from the
// tensors they permute.
// CHECK-LABEL: func @matmul_dynamic_m_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<64x?xf32>, %[[B:.*]]: tensor<32x64xf32>, %[[C:.*]]: tensor<32x?xf32>)
// CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
// CHECK:       %[[DA:.*]] = tensor.dim %[[A]], %[[C1]] : tensor<64x?xf32>
// CHECK:       %[[EA:.*]] = tensor.empty(%[[DA]]) : tensor<?x64xf32>
// CHECK:       %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<64x?xf32>) outs(%[[EA]] : tensor<?x64xf32>) permutation = [1, 0]
// CHECK:       %[[QA:.*]] = fp4.quantize %[[AT]] : tensor<?x64xf32>
// CHECK:       %[[P:.*]] = fp4.matmul %[[QA]], %{{.*}} -> tensor<?x32xf32>
// CHECK:       %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[P]] : tensor<?x32xf32>) outs(%[[C]] : tensor<32x?xf32>)
// CHECK:       return %[[R]]
func.func @matmul_dynamic_m_transposed(%a: tensor<64x?xf32>, %b: tensor<32x64xf32>, %c: tensor<32x?xf32>) -> tensor<32x?xf32> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (n, m)>]
      ins(%a, %b : tensor<64x?xf32>, tensor<32x64xf32>) outs(%c : tensor<32x?xf32>) -> tensor<32x?xf32>
  return %r : tensor<32x?xf32>
}

// -----

// K is dynamic in A but static in B: linalg requires them equal, so A is cast
// to the static K its blocks need.
// CHECK-LABEL: func @matmul_k_static_in_one_operand
// CHECK-SAME: (%[[A:.*]]: tensor<16x?xf32>
// CHECK:       %[[AC:.*]] = tensor.cast %[[A]] : tensor<16x?xf32> to tensor<16x64xf32>
// CHECK:       fp4.quantize %[[AC]] : tensor<16x64xf32>
// CHECK:       fp4.matmul
func.func @matmul_k_static_in_one_operand(%a: tensor<16x?xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x?xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// The output given as [N, M]: the product is transposed back.
// CHECK-LABEL: func @matmul_transposed_output
// CHECK:       %[[P:.*]] = fp4.matmul {{.*}} -> tensor<16x32xf32>
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<32x16xf32>
// CHECK:       %[[R:.*]] = linalg.transpose ins(%[[P]] : tensor<16x32xf32>) outs(%[[E]] : tensor<32x16xf32>) permutation = [1, 0]
// CHECK:       return %[[R]]
func.func @matmul_transposed_output(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<32x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (n, m)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// linalg.batch_matmul with the default maps: B is [B, K, N].
// CHECK-LABEL: func @batch_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x16x64xf32>, %[[B:.*]]: tensor<4x64x32xf32>)
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<4x16x64xf32> -> !fp4.tensor<4x16x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x64x32xf32>) outs(%{{.*}} : tensor<4x32x64xf32>) permutation = [0, 2, 1]
// CHECK:       %[[QB:.*]] = fp4.quantize %[[BT]] : tensor<4x32x64xf32> -> !fp4.tensor<4x32x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] {{.*}} -> tensor<4x16x32xf32>
// CHECK:       return %[[R]]
func.func @batch_matmul(%a: tensor<4x16x64xf32>, %b: tensor<4x64x32xf32>) -> tensor<4x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x16x64xf32>, tensor<4x64x32xf32>) outs(%c : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}

// -----

// linalg.batch_matmul with B given as [B, N, K]: nothing to transpose.
// CHECK-LABEL: func @batch_matmul_transpose_b
// CHECK-NOT:   linalg.transpose
// CHECK:       fp4.matmul {{.*}} -> tensor<4x16x32xf32>
func.func @batch_matmul_transpose_b(%a: tensor<4x16x64xf32>, %b: tensor<4x32x64xf32>) -> tensor<4x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (b, n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<4x16x64xf32>, tensor<4x32x64xf32>) outs(%c : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}

// -----

// linalg.batch_matmul with a [K, N] weight shared by every batch (broadcast
// B): a rank-2 fp4.matmul rhs.
// CHECK-LABEL: func @batch_matmul_shared_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<4x16x64xf32>, %[[B:.*]]: tensor<64x32xf32>)
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<4x16x64xf32>
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<64x32xf32>) outs(%{{.*}} : tensor<32x64xf32>) permutation = [1, 0]
// CHECK:       %[[QB:.*]] = fp4.quantize %[[BT]] : tensor<32x64xf32> -> !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QA]], %[[QB]] : !fp4.tensor<4x16x64xf4E2M1FN, #fp4.mxfp4, axis = 2>, !fp4.tensor<32x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x16x32xf32>
// CHECK:       return %[[R]]
func.func @batch_matmul_shared_rhs(%a: tensor<4x16x64xf32>, %b: tensor<64x32xf32>) -> tensor<4x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (k, n)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<4x16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}

// -----

// linalg.batch_matmul with A shared by every batch (broadcast A): only
// fp4.matmul's lhs may carry the extra dimension, so the operands swap places
// (B A^T = (A B^T)^T) and the [B, N, M] product is transposed to [B, M, N].
// CHECK-LABEL: func @batch_matmul_shared_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<16x64xf32>, %[[B:.*]]: tensor<4x64x32xf32>)
// CHECK:       %[[QA:.*]] = fp4.quantize %[[A]] : tensor<16x64xf32>
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x64x32xf32>) outs(%{{.*}} : tensor<4x32x64xf32>) permutation = [0, 2, 1]
// CHECK:       %[[QB:.*]] = fp4.quantize %[[BT]] : tensor<4x32x64xf32>
// CHECK:       %[[P:.*]] = fp4.matmul %[[QB]], %[[QA]] {{.*}} -> tensor<4x32x16xf32>
// CHECK:       %[[R:.*]] = linalg.transpose ins(%[[P]] : tensor<4x32x16xf32>) outs(%{{.*}} : tensor<4x16x32xf32>) permutation = [0, 2, 1]
// CHECK:       return %[[R]]
func.func @batch_matmul_shared_lhs(%a: tensor<16x64xf32>, %b: tensor<4x64x32xf32>) -> tensor<4x16x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (m, k)>,
                       affine_map<(b, m, n, k) -> (b, k, n)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<4x64x32xf32>) outs(%c : tensor<4x16x32xf32>) -> tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}

// -----

// Dynamic batch and M.
// CHECK-LABEL: func @batch_matmul_dynamic
// CHECK:       fp4.quantize %{{.*}} : tensor<?x?x64xf32> -> !fp4.tensor<?x?x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK:       fp4.quantize %{{.*}} : tensor<?x32x64xf32> -> !fp4.tensor<?x32x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK:       fp4.matmul {{.*}} -> tensor<?x?x32xf32>
func.func @batch_matmul_dynamic(%a: tensor<?x?x64xf32>, %b: tensor<?x32x64xf32>, %c: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (b, n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<?x?x64xf32>, tensor<?x32x64xf32>) outs(%c : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}

// -----

// linalg.contract (an einsum-style named op) is a contraction like any other.
// CHECK-LABEL: func @contract
// CHECK:       fp4.matmul {{.*}} -> tensor<16x32xf32>
// CHECK-NOT:   linalg.contract
func.func @contract(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %c = arith.constant dense<0.0> : tensor<16x32xf32>
  %r = linalg.contract
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// A linalg.generic contraction with the loops in an unusual order
// (d0 = K, d1 = N, d2 = B, d3 = M), operands commuted in the body, and the
// output laid out as [N, B, M] with a live accumulator: the accumulating
// generic reads the [B, M, N] product through a permuted map.
// CHECK-DAG:   #[[PERM:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @generic_permuted
// CHECK-SAME: (%[[A:.*]]: tensor<64x4x16xbf16>, %[[B:.*]]: tensor<4x64x32xbf16>, %[[C:.*]]: tensor<32x4x16xf32>)
// CHECK:       %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<64x4x16xbf16>) outs(%{{.*}} : tensor<4x16x64xbf16>) permutation = [1, 2, 0]
// CHECK:       %[[QA:.*]] = fp4.quantize %[[AT]] : tensor<4x16x64xbf16> -> !fp4.tensor<4x16x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK:       %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x64x32xbf16>) outs(%{{.*}} : tensor<4x32x64xbf16>) permutation = [0, 2, 1]
// CHECK:       %[[QB:.*]] = fp4.quantize %[[BT]] : tensor<4x32x64xbf16> -> !fp4.tensor<4x32x64xf4E2M1FN, #fp4.mxfp4, axis = 2>
// CHECK:       %[[P:.*]] = fp4.matmul %[[QA]], %[[QB]] {{.*}} -> tensor<4x16x32xf32>
// CHECK:       %[[R:.*]] = linalg.generic {indexing_maps = [#[[PERM]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<4x16x32xf32>) outs(%[[C]] : tensor<32x4x16xf32>)
// CHECK:       return %[[R]]
func.func @generic_permuted(%a: tensor<64x4x16xbf16>, %b: tensor<4x64x32xbf16>, %c: tensor<32x4x16xf32>) -> tensor<32x4x16xf32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(k, n, b, m) -> (k, b, m)>,
                       affine_map<(k, n, b, m) -> (b, k, n)>,
                       affine_map<(k, n, b, m) -> (n, b, m)>],
      iterator_types = ["reduction", "parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<64x4x16xbf16>, tensor<4x64x32xbf16>) outs(%c : tensor<32x4x16xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %x32 = arith.extf %x : bf16 to f32
    %w32 = arith.extf %w : bf16 to f32
    %p = arith.mulf %w32, %x32 : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<32x4x16xf32>
  return %r : tensor<32x4x16xf32>
}

// -----

// A linalg.generic matmul over a 3-D activation and a shared 2-D weight
// (y[b, s, n] = x[b, s, k] * w[n, k], as torch.nn.Linear emits it).
// CHECK-LABEL: func @generic_linear_3d
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x128xf32>, %[[W:.*]]: tensor<32x128xf32>)
// CHECK:       %[[QX:.*]] = fp4.quantize %[[X]] : tensor<2x8x128xf32>
// CHECK:       %[[QW:.*]] = fp4.quantize %[[W]] : tensor<32x128xf32>
// CHECK:       %[[R:.*]] = fp4.matmul %[[QX]], %[[QW]] {{.*}} -> tensor<2x8x32xf32>
// CHECK:       return %[[R]]
func.func @generic_linear_3d(%x: tensor<2x8x128xf32>, %w: tensor<32x128xf32>) -> tensor<2x8x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>,
                       affine_map<(b, s, n, k) -> (n, k)>,
                       affine_map<(b, s, n, k) -> (b, s, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x8x128xf32>, tensor<32x128xf32>) outs(%c : tensor<2x8x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}

// -----

// Several contractions in one function (an MLP block) are all rewritten.
// CHECK-LABEL: func @mlp
// CHECK-COUNT-2: fp4.matmul
// CHECK-NOT:   linalg.matmul
func.func @mlp(%x: tensor<8x64xf32>, %w1: tensor<128x64xf32>, %w2: tensor<64x128xf32>) -> tensor<8x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x128xf32>
  %c1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %h = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w1 : tensor<8x64xf32>, tensor<128x64xf32>) outs(%c1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %c2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %w2 : tensor<8x128xf32>, tensor<64x128xf32>) outs(%c2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
