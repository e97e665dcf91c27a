// From linalg.matmul to CPU code: fp4-quantize, fp4-outlier-fallback,
// fp4-fold-constants (the weights' split and quantization at compile time),
// fp4-pipeline-cpu. The plain MXFP4 product is run as a control.
// RUN: fp4-opt %s -fp4-quantize -fp4-outlier-fallback -fp4-fold-constants -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=OUTLIER
// RUN: fp4-opt %s -fp4-quantize -fp4-fold-constants -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=PLAIN
// The constant weights are folded completely: no float weight, no split or
// quantize of it is left (the activations' split and quantize remain).
// RUN: fp4-opt %s -fp4-quantize -fp4-outlier-fallback -fp4-fold-constants | FileCheck %s --check-prefix=FOLDED
// FOLDED-NOT: tensor<2x64xf32>
// FOLDED: fp4.split_outliers %{{.*}} : tensor<1x64xf32>
// FOLDED-NOT: tensor<2x64xf32>

// x (one row, K = 64): block 0 = [100, 1 x 31], block 1 = [-3, 0.25 x 31].
// w0 = 1 everywhere; w1 = 2 at k = 0 and k = 63, 0.5 elsewhere.
// Exact: x.w0 = 131 - 3 + 7.75 = 135.75;
//        x.w1 = 200 + 15.5 - 1.5 + 3.75 + 0.5 = 218.25.
//
// Plain MXFP4 (floor): block 0 has amax 100, X = 2^(6-2) = 16, and every 1
// falls into the deadzone (1/16 < 0.25): 96 (100/16 = 6.25 -> 6); block 1
// has amax 3, X = 0.5, 0.25/0.5 = 0.5 exact, -3 exact. So x' = [96, 0 x 31 |
// -3, 0.25 x 31] and the weights are exact on the grid except w1's 2 among
// 0.5s (amax 2, X = 0.5: all exact): y = [96 - 3 + 7.75, 192 - 1.5 + 3.75
// + 0.5] = [100.75, 194.75].
// PLAIN: {{\[}}[100.75,   194.75]]
//
// Outlier fallback, k = 1 per 32-block: x's outliers 100 and -3 go to bf16
// (exact) and the rests [0, 1 x 31], [0, 0.25 x 31] quantize exactly; the
// weights' outliers (w0: the first 1 of each block, w1: the 2s) are exact
// too, so the corrected product is the exact one.
// OUTLIER: {{\[}}[135.75,   218.25]]

func.func private @printMemrefF32(memref<*xf32>)

func.func @linear(%x: tensor<1x64xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
      [2.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2.0]]> : tensor<2x64xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<1x64xf32>, tensor<2x64xf32>) outs(%f : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

func.func @main() {
  %e = tensor.empty() : tensor<1x64xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<1x64xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %big = arith.constant 100.0 : f32
    %one = arith.constant 1.0 : f32
    %neg = arith.constant -3.0 : f32
    %quarter = arith.constant 0.25 : f32
    %k0 = arith.cmpi eq, %k, %c0 : index
    %k32 = arith.cmpi eq, %k, %c32 : index
    %first = arith.cmpi ult, %k, %c32 : index
    %a = arith.select %k0, %big, %one : f32
    %b = arith.select %k32, %neg, %quarter : f32
    %v = arith.select %first, %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<1x64xf32>
  %y = call @linear(%x) : (tensor<1x64xf32>) -> tensor<1x2xf32>
  %m = bufferization.to_buffer %y : tensor<1x2xf32> to memref<1x2xf32>
  %u = memref.cast %m : memref<1x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
