// End to end on the CPU: fp4-quantize, then the CPU pipeline. The inputs are
// E2M1 grid values and the first element of every 32-block along K is +-6, so
// every MXFP4 block scale is 2^0, quantization is exact, and the quantized
// program must print exactly what the float program prints (the second RUN
// line, the oracle). Checked: operand transposes, a live accumulator, an
// operand shared over the batch (swapped operands), a permuted generic with
// bf16 inputs, and the result permutations.
//
// RUN: fp4-opt %s -fp4-quantize -fp4-pipeline-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s
// RUN: fp4-opt %s -fp4-pipeline-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s
// The rewrite did happen.
// RUN: fp4-opt %s -fp4-quantize | FileCheck %s --check-prefix=IR
// IR-COUNT-3: fp4.matmul

// y = acc + x * w^T (a linear layer with a [N, K] weight).
func.func @linear(%x: tensor<2x32xf32>, %w: tensor<3x32xf32>, %acc: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x32xf32>, tensor<3x32xf32>) outs(%acc : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// A [M, K] operand shared by every batch of a [B, K, N] one.
func.func @shared_lhs(%a: tensor<2x32xf32>, %b: tensor<2x32x3xf32>) -> tensor<2x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x3xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (m, k)>,
                       affine_map<(b, m, n, k) -> (b, k, n)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<2x32xf32>, tensor<2x32x3xf32>) outs(%c : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  return %r : tensor<2x2x3xf32>
}

// Loops (k, n, b, m), A as [K, B, M], output as [N, B, M], bf16 inputs.
func.func @permuted(%a: tensor<32x2x2xbf16>, %b: tensor<2x32x3xbf16>) -> tensor<3x2x2xf32> {
  %c = arith.constant dense<0.0> : tensor<3x2x2xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(k, n, b, m) -> (k, b, m)>,
                       affine_map<(k, n, b, m) -> (b, k, n)>,
                       affine_map<(k, n, b, m) -> (n, b, m)>],
      iterator_types = ["reduction", "parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<32x2x2xbf16>, tensor<2x32x3xbf16>) outs(%c : tensor<3x2x2xf32>) {
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %x32 = arith.extf %x : bf16 to f32
    %w32 = arith.extf %w : bf16 to f32
    %p = arith.mulf %x32, %w32 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x2x2xf32>
  return %r : tensor<3x2x2xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

// CHECK: Unranked Memref base@ = {{.*}} rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}19.75,   70.75,   -74],
// CHECK-NEXT:  [29.75,   -17.75,   23.5]]
// CHECK: Unranked Memref base@ = {{.*}} rank = 3 offset = 0 sizes = [2, 2, 3] strides = [6, 3, 1] data =
// CHECK-NEXT: {{\[\[}}[36.75,    -52,    21.25],
// CHECK-NEXT:   [69,    24.5,    6]],
// CHECK-NEXT:  {{\[\[}}-67,    -47.25,    56.5],
// CHECK-NEXT:   [59.5,    44,    -32.25]]]
// CHECK: Unranked Memref base@ = {{.*}} rank = 3 offset = 0 sizes = [3, 2, 2] strides = [4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}[-20,    -48.5],
// CHECK-NEXT:   [18.25,    -76.75]],
// CHECK-NEXT:  {{\[\[}}-12,    -73.5],
// CHECK-NEXT:   [-127.75,    -46.5]],
// CHECK-NEXT:  {{\[\[}}-27,    -68.5],
// CHECK-NEXT:   [71.5,    -28.25]]]
func.func @main() {
  %x = arith.constant dense<[[-6.0, 1.0, -6.0, 0.0, -2.0, 1.5, 6.0, -1.0, 1.0, -0.0, -1.0, -2.0, 2.0, 4.0, 4.0, 1.0, -0.5, 1.0, 1.5, 4.0, 4.0, 3.0, 1.5, 0.0, 1.0, -0.5, 2.0, -0.5, 6.0, 0.5, 0.5, -1.0], [6.0, 4.0, -0.5, 0.0, 3.0, -1.5, -2.0, -0.5, -0.0, 4.0, -2.0, 0.0, 3.0, 1.0, 4.0, -4.0, 2.0, 1.5, 4.0, 2.0, 0.0, -3.0, -4.0, 0.0, 6.0, 3.0, -6.0, -0.0, 3.0, 6.0, -3.0, -3.0]]> : tensor<2x32xf32>
  %w = arith.constant dense<[[6.0, 3.0, 2.0, -0.5, 1.0, 1.5, 1.5, 1.0, -0.5, 3.0, 1.5, -1.0, -3.0, 6.0, -1.5, -0.0, -3.0, 2.0, 0.5, 1.0, 2.0, 6.0, 4.0, 4.0, 0.0, -1.0, 0.0, -4.0, 0.0, 2.0, -1.5, -2.0], [-6.0, -0.0, 1.5, -0.0, -6.0, 1.0, -1.5, -4.0, 0.5, 1.0, -6.0, -3.0, -1.5, -0.5, 1.5, -1.0, 6.0, 0.0, 1.5, -4.0, 6.0, -0.0, -1.0, -0.5, 0.5, -0.0, 6.0, 1.0, 0.5, 4.0, 2.0, -2.0], [6.0, -4.0, -1.0, -4.0, -1.0, 3.0, -4.0, -4.0, 3.0, 3.0, 4.0, -0.0, 1.5, 0.5, 1.5, -1.0, 3.0, -2.0, -6.0, -4.0, -3.0, 0.0, -1.0, -4.0, -0.5, -4.0, 0.0, -0.5, 0.5, 2.0, -0.5, -1.5]]> : tensor<3x32xf32>
  %acc = arith.constant dense<[[-0.5, -3.0, -0.5], [-1.0, 6.0, 2.0]]> : tensor<2x3xf32>
  %y = call @linear(%x, %w, %acc) : (tensor<2x32xf32>, tensor<3x32xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %yu = tensor.cast %y : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%yu) : (tensor<*xf32>) -> ()

  %a = arith.constant dense<[[6.0, 3.0, 0.5, 1.5, 1.0, -6.0, -4.0, -1.0, 6.0, -6.0, 1.0, -1.5, -3.0, 2.0, -2.0, -2.0, 2.0, -4.0, 1.0, 1.5, -6.0, 4.0, 1.5, 0.0, 0.5, 0.0, -1.5, -0.5, -2.0, 1.5, -1.0, 0.0], [-6.0, 0.0, 1.0, -0.5, -0.5, 2.0, 0.0, 6.0, -0.0, 3.0, 4.0, -6.0, 1.5, -4.0, -3.0, -2.0, -4.0, 6.0, 0.5, 3.0, 2.0, 0.5, 0.5, -3.0, -2.0, -1.0, 3.0, -0.5, 1.0, 4.0, 1.0, 6.0]]> : tensor<2x32xf32>
  %b = arith.constant dense<[[[-6.0, -6.0, -6.0], [1.0, -3.0, 2.0], [-4.0, -1.0, 6.0], [1.5, 3.0, -6.0], [3.0, -0.5, -2.0], [-0.5, -1.0, 4.0], [-1.0, -4.0, -1.0], [1.5, 3.0, 0.0], [4.0, 3.0, 6.0], [-6.0, -1.5, -0.5], [-6.0, -6.0, -1.5], [0.0, 0.5, -1.0], [-6.0, -0.0, -3.0], [0.5, 0.0, 3.0], [-3.0, -0.5, 0.5], [-1.5, 1.5, 1.5], [-3.0, 0.0, -0.5], [1.0, 6.0, 0.5], [1.5, -2.0, 6.0], [4.0, 1.0, 0.0], [3.0, 6.0, -4.0], [-0.0, 2.0, 1.0], [-1.5, -1.5, 1.0], [-1.0, -1.0, 1.0], [-6.0, -0.0, 4.0], [3.0, -0.0, 1.5], [0.0, -6.0, -1.5], [0.5, -6.0, 1.0], [0.5, -0.5, 2.0], [6.0, -6.0, -2.0], [3.0, -3.0, 0.0], [-0.5, -0.5, -0.5]], [[-6.0, -6.0, 6.0], [-0.0, -3.0, 6.0], [6.0, 0.0, 2.0], [0.5, 1.0, 0.5], [3.0, 1.0, -3.0], [3.0, -6.0, 6.0], [3.0, 1.0, -6.0], [-1.0, 0.0, -0.5], [-3.0, -0.0, 6.0], [3.0, -0.0, 1.5], [0.5, -2.0, -6.0], [-1.5, -0.0, -1.0], [-0.5, -2.0, 1.5], [-3.0, -6.0, -0.5], [-0.5, -0.5, -2.0], [0.5, -4.0, 0.5], [3.0, -6.0, 2.0], [-4.0, -0.5, 6.0], [0.5, -3.0, -6.0], [3.0, -0.5, 1.5], [0.0, 1.5, -6.0], [-2.0, -3.0, -1.5], [6.0, -3.0, 4.0], [4.0, 0.0, -0.0], [-0.5, 1.0, 0.0], [-0.0, 1.5, 6.0], [0.0, -6.0, -2.0], [0.5, 2.0, -6.0], [-1.5, 6.0, 4.0], [1.0, 2.0, -6.0], [3.0, -2.0, 6.0], [3.0, -1.5, -0.0]]]> : tensor<2x32x3xf32>
  %z = call @shared_lhs(%a, %b) : (tensor<2x32xf32>, tensor<2x32x3xf32>) -> tensor<2x2x3xf32>
  %zu = tensor.cast %z : tensor<2x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%zu) : (tensor<*xf32>) -> ()

  %pa = arith.constant dense<[[[-6.0, -6.0], [-6.0, -6.0]], [[-0.0, 6.0], [-3.0, -6.0]], [[-1.5, 2.0], [-3.0, 0.5]], [[2.0, 1.5], [4.0, -3.0]], [[0.0, -0.0], [-1.5, 4.0]], [[1.0, -0.0], [-0.0, -6.0]], [[6.0, 4.0], [1.0, -1.0]], [[-1.0, 4.0], [6.0, 2.0]], [[6.0, 1.0], [-1.0, 4.0]], [[1.5, -2.0], [-3.0, -6.0]], [[2.0, 0.5], [0.5, 0.0]], [[-6.0, 2.0], [1.0, 4.0]], [[0.0, -1.5], [3.0, 4.0]], [[-0.0, 4.0], [-4.0, -6.0]], [[-1.5, -0.5], [0.0, 0.5]], [[2.0, 6.0], [-2.0, -1.0]], [[-6.0, -1.0], [1.0, -4.0]], [[1.0, -0.0], [1.0, -1.5]], [[-1.0, -1.0], [-4.0, 4.0]], [[-1.0, -2.0], [-1.0, 1.0]], [[1.0, -3.0], [-1.5, -3.0]], [[-6.0, 0.5], [-6.0, 3.0]], [[0.0, 6.0], [6.0, -6.0]], [[6.0, 1.5], [1.0, 1.0]], [[-2.0, -1.0], [0.0, -1.0]], [[-0.0, 0.5], [3.0, 0.5]], [[6.0, -1.0], [3.0, 3.0]], [[3.0, 3.0], [2.0, -1.0]], [[1.5, 1.5], [4.0, -6.0]], [[6.0, 1.0], [-0.0, 4.0]], [[-2.0, 1.5], [-4.0, 0.5]], [[-1.5, -6.0], [4.0, -3.0]]]> : tensor<32x2x2xbf16>
  %pb = arith.constant dense<[[[6.0, 6.0, 6.0], [4.0, -3.0, -6.0], [-3.0, 0.0, -0.5], [-1.0, 1.5, 4.0], [-1.5, 0.0, 6.0], [1.5, -3.0, -4.0], [-6.0, 2.0, -1.5], [-1.0, -4.0, 3.0], [0.0, 1.0, -2.0], [-4.0, 4.0, 4.0], [-0.5, 0.5, -3.0], [0.0, 6.0, 0.5], [-4.0, -3.0, -4.0], [-0.0, -1.5, -1.0], [6.0, 2.0, -6.0], [1.5, -3.0, 3.0], [-3.0, -6.0, 4.0], [1.5, -1.5, 0.5], [0.5, 1.5, -1.0], [3.0, 1.5, -0.0], [4.0, -4.0, 1.0], [2.0, -2.0, -3.0], [-1.5, 2.0, -1.0], [1.5, -1.5, -3.0], [1.0, -4.0, 2.0], [-3.0, 0.5, -6.0], [1.0, 4.0, 1.5], [6.0, 4.0, -1.0], [4.0, 1.0, 0.5], [1.0, -6.0, 6.0], [-6.0, -3.0, 0.5], [2.0, 4.0, 0.0]], [[6.0, 6.0, 6.0], [-3.0, 1.5, 1.5], [0.5, 1.0, -6.0], [4.0, 1.5, -3.0], [0.0, -1.5, -1.0], [-0.5, 4.0, 4.0], [0.5, 2.0, 1.5], [-0.5, 0.5, 3.0], [1.0, -3.0, -2.0], [-1.5, 2.0, -3.0], [-0.5, -0.5, 6.0], [0.5, -1.0, 0.0], [-2.0, 3.0, 4.0], [4.0, 2.0, -4.0], [-0.0, 1.0, -0.0], [-1.0, 3.0, 0.0], [-1.5, -1.0, 0.5], [4.0, -1.0, -3.0], [-2.0, -0.5, -1.0], [-0.0, 4.0, 6.0], [-1.0, 0.5, -4.0], [-0.0, 3.0, -3.0], [-0.0, -4.0, 6.0], [1.5, -6.0, 0.0], [-1.5, 1.0, -4.0], [4.0, -0.5, -2.0], [0.0, 0.0, -1.5], [6.0, -4.0, 4.0], [-0.5, -6.0, -2.0], [-6.0, -2.0, 1.5], [-2.0, 0.5, 0.5], [1.5, -0.0, 0.0]]]> : tensor<2x32x3xbf16>
  %p = call @permuted(%pa, %pb) : (tensor<32x2x2xbf16>, tensor<2x32x3xbf16>) -> tensor<3x2x2xf32>
  %pu = tensor.cast %p : tensor<3x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%pu) : (tensor<*xf32>) -> ()
  return
}
