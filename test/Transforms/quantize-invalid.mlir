// RUN: fp4-opt %s -split-input-file -fp4-quantize="remarks=true" -verify-diagnostics | FileCheck %s
// Without remarks=true the same ops are left alone with one summary warning (LLVM 22 echoes
// unmet expected-remark lines even without -verify-diagnostics, hence the
// exact "remark: " spelling.)
// RUN: fp4-opt %s -split-input-file -fp4-quantize 2>&1 | FileCheck %s --check-prefix=QUIET
// QUIET-NOT: remark: not quantized
// QUIET-NOT: = fp4.matmul
// ... but not silently: one summary warning per module.
// QUIET: warning: fp4-quantize: quantized 0 of 1 contractions; 1 left unchanged (1 shape), first here: K = 100 is not a multiple of 32 required by #fp4.mxfp4; remarks=true gives each
// QUIET: warning: fp4-quantize: quantized 0 of 1 contractions; 1 left unchanged (1 element type), first here: lhs has element type i8

// Every contraction fp4-quantize leaves intact, each with the remark it gets;
// ops that are no contraction at all get none.

// CHECK-LABEL: func @k_not_multiple
// CHECK: linalg.matmul
func.func @k_not_multiple(%a: tensor<16x100xf32>, %b: tensor<100x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: K = 100 is not a multiple of 32 required by #fp4.mxfp4}}
  %r = linalg.matmul ins(%a, %b : tensor<16x100xf32>, tensor<100x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// CHECK-LABEL: func @dynamic_k
// CHECK: linalg.matmul
func.func @dynamic_k(%a: tensor<16x?xf32>, %b: tensor<?x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: K is dynamic; the blocks of #fp4.mxfp4 need a static K}}
  %r = linalg.matmul ins(%a, %b : tensor<16x?xf32>, tensor<?x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// CHECK-LABEL: func @integer
// CHECK: linalg.matmul
func.func @integer(%a: tensor<16x64xi8>, %b: tensor<64x32xi8>, %c: tensor<16x32xi32>) -> tensor<16x32xi32> {
  // expected-remark @below {{not quantized: lhs has element type i8; fp4 quantizes f32, bf16 and f16}}
  %r = linalg.matmul ins(%a, %b : tensor<16x64xi8>, tensor<64x32xi8>) outs(%c : tensor<16x32xi32>) -> tensor<16x32xi32>
  return %r : tensor<16x32xi32>
}

// -----

// CHECK-LABEL: func @f64_output
// CHECK: linalg.matmul
func.func @f64_output(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %c: tensor<16x32xf64>) -> tensor<16x32xf64> {
  // expected-remark @below {{not quantized: output has element type f64; fp4 quantizes f32, bf16 and f16}}
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf64>) -> tensor<16x32xf64>
  return %r : tensor<16x32xf64>
}

// -----

// CHECK-LABEL: func @complex
// CHECK: linalg.matmul
func.func @complex(%a: tensor<16x64xcomplex<f32>>, %b: tensor<64x32xcomplex<f32>>, %c: tensor<16x32xcomplex<f32>>) -> tensor<16x32xcomplex<f32>> {
  // expected-remark @below {{not quantized: lhs has element type complex<f32>; fp4 quantizes f32, bf16 and f16}}
  %r = linalg.matmul ins(%a, %b : tensor<16x64xcomplex<f32>>, tensor<64x32xcomplex<f32>>) outs(%c : tensor<16x32xcomplex<f32>>) -> tensor<16x32xcomplex<f32>>
  return %r : tensor<16x32xcomplex<f32>>
}

// -----

// A max-plus "matmul": reduction with arith.maximumf.
// CHECK-LABEL: func @not_add
// CHECK: linalg.generic
func.func @not_add(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: the body yields 'arith.maximumf', not an 'arith.addf' into the accumulator (not a multiply-add)}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %s = arith.addf %x, %w : f32
    %m = arith.maximumf %acc, %s : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// A sum of lhs + rhs, not a product.
// CHECK-LABEL: func @not_mul
// CHECK: linalg.generic
func.func @not_mul(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: the body accumulates 'arith.subf', not an 'arith.mulf' (not a multiply-add)}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %d = arith.subf %x, %w : f32
    %s = arith.addf %acc, %d : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// An operand changed by more than a conversion before the multiply.
// CHECK-LABEL: func @negated_operand
// CHECK: linalg.generic
func.func @negated_operand(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: the body's 'arith.mulf' does not multiply lhs by rhs (only 'arith.extf' / 'arith.truncf' may convert them first)}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %n = arith.negf %w : f32
    %p = arith.mulf %x, %n : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// The product is added to something else than the accumulator.
// CHECK-LABEL: func @not_accumulating
// CHECK: linalg.generic
func.func @not_accumulating(%a: tensor<16x64xf32>, %b: tensor<32x64xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: the body's 'arith.addf' does not add to the accumulator (not a multiply-add)}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %p, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// CHECK-LABEL: func @matvec
// CHECK: linalg.matvec
func.func @matvec(%a: tensor<16x64xf32>, %x: tensor<64xf32>, %c: tensor<16xf32>) -> tensor<16xf32> {
  // expected-remark @below {{not quantized: no N dimension (a matrix-vector product); fp4.matmul needs M, N and K: express it as a matmul with N = 1}}
  %r = linalg.matvec ins(%a, %x : tensor<16x64xf32>, tensor<64xf32>) outs(%c : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// CHECK-LABEL: func @vecmat
// CHECK: linalg.vecmat
func.func @vecmat(%x: tensor<64xf32>, %b: tensor<64x32xf32>, %c: tensor<32xf32>) -> tensor<32xf32> {
  // expected-remark @below {{not quantized: no M dimension (a vector-matrix product); fp4.matmul needs M, N and K: express it as a matmul with M = 1}}
  %r = linalg.vecmat ins(%x, %b : tensor<64xf32>, tensor<64x32xf32>) outs(%c : tensor<32xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// CHECK-LABEL: func @dot
// CHECK: linalg.dot
func.func @dot(%x: tensor<64xf32>, %y: tensor<64xf32>, %c: tensor<f32>) -> tensor<f32> {
  // expected-remark @below {{not quantized: no N dimension (a matrix-vector product); fp4.matmul needs M, N and K: express it as a matmul with N = 1}}
  %r = linalg.dot ins(%x, %y : tensor<64xf32>, tensor<64xf32>) outs(%c : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A lhs broadcast along M: no dimension of lhs is M.
// CHECK-LABEL: func @broadcast_lhs
// CHECK: linalg.matmul
func.func @broadcast_lhs(%a: tensor<64xf32>, %b: tensor<64x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: the output dimension d0 indexes neither lhs nor rhs (a broadcast); fp4.matmul needs M in lhs and N in rhs}}
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// The reduction runs over lhs only (a row sum scaled by rhs).
// CHECK-LABEL: func @reduction_not_in_rhs
// CHECK: linalg.generic
func.func @reduction_not_in_rhs(%a: tensor<16x64xf32>, %b: tensor<32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @below {{not quantized: the reduction dimension d2 must index lhs and rhs and not the output (not a matrix product)}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x64xf32>, tensor<32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// A convolution has reductions but no projected-permutation input map.
// CHECK-LABEL: func @conv
// CHECK: linalg.conv_1d
func.func @conv(%x: tensor<66xf32>, %w: tensor<3xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  // expected-remark @below {{not quantized: the indexing map of lhs ((d0, d1) -> (d0 + d1)) is not a projected permutation}}
  %r = linalg.conv_1d ins(%x, %w : tensor<66xf32>, tensor<3xf32>) outs(%c : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// Buffers: the pass runs before bufferization.
// CHECK-LABEL: func @memref
// CHECK: linalg.matmul
func.func @memref(%a: memref<16x64xf32>, %b: memref<64x32xf32>, %c: memref<16x32xf32>) {
  // expected-remark @below {{not quantized: it operates on buffers; fp4-quantize rewrites ops on tensors (run it before bufferization)}}
  linalg.matmul ins(%a, %b : memref<16x64xf32>, memref<64x32xf32>) outs(%c : memref<16x32xf32>)
  return
}

// -----

// A scalar operand (linalg.generic accepts them).
// CHECK-LABEL: func @scalar_operand
// CHECK: linalg.generic
func.func @scalar_operand(%a: tensor<16x64xf32>, %s: f32, %c: tensor<16xf32>) -> tensor<16xf32> {
  // expected-remark @below {{not quantized: rhs is a scalar, not a tensor}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(m, k) -> (m, k)>,
                       affine_map<(m, k) -> ()>,
                       affine_map<(m, k) -> (m)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%a, %s : tensor<16x64xf32>, f32) outs(%c : tensor<16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Fills, transposes, elementwise ops and reductions of one input are no
// contractions: no remark.
// CHECK-LABEL: func @not_contractions
func.func @not_contractions(%a: tensor<16x64xf32>, %c: tensor<16xf32>) -> (tensor<64x16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %t = linalg.transpose ins(%a : tensor<16x64xf32>) outs(%f : tensor<64x16xf32>) permutation = [1, 0]
  %s = linalg.reduce ins(%a : tensor<16x64xf32>) outs(%c : tensor<16xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  %e2 = tensor.empty() : tensor<16x64xf32>
  %m = linalg.mul ins(%a, %a : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %t, %s, %m : tensor<64x16xf32>, tensor<16xf32>, tensor<16x64xf32>
}

// -----

// Several dimensions that would have to merge into one fp4.matmul dimension,
// one of them dynamic: no static reshape.
// CHECK-LABEL: func @merge_dynamic
// CHECK: linalg.generic
func.func @merge_dynamic(%a: tensor<?x4x16x64xf32>, %b: tensor<?x4x32x64xf32>, %c: tensor<?x4x16x32xf32>) -> tensor<?x4x16x32xf32> {
  // expected-remark @below {{not quantized: dimension d0 is dynamic and would have to be merged with others into one fp4.matmul dimension}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                       affine_map<(b0, b1, m, n, k) -> (b0, b1, n, k)>,
                       affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x4x16x64xf32>, tensor<?x4x32x64xf32>) outs(%c : tensor<?x4x16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4x16x32xf32>
  return %r : tensor<?x4x16x32xf32>
}
