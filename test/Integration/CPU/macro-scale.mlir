// End to end: fp4-quantize, fp4-macro-scale, then the CPU pipeline (and
// with fp4-fold-constants in between: the folded weights must give the same
// numbers). K = 64, macro-block = 64. The values are chosen so that the
// macro-scaled quantization is exact and plain MXFP4 is not:
//   x  = [5.25, 3.5, 1.75, -0.875, 0.4375, 0.. | 1.75, 0.875, 0..]
//        amax 5.25 = 6 * 0.875: m = 1.75, y = x / m = [3, 2, 1, -0.5, 0.25 |
//        1, 0.5] on the grid of its block exponents -> x' = x.
//   w0 = [7.5, 5, 2.5, 1.25, 0.. | 0.625, 0..]: m = 1.25, y = [6, 4, 2, 1 |
//        0.5] -> w' = w0.       w1 = -x: w' = w1.
// Exact products: y0 = 5.25*7.5 + 3.5*5 + 1.75*2.5 - 0.875*1.25 + 1.75*0.625
//                    = 61.25,   y1 = -||x||^2 = -47.66015625.
// Plain MXFP4 floor (third RUN line, the rewrite matters): x' = [6, 4, 2, -1,
// 0.5 | 1.5, 1], w0' = [6, 4, 2, 1 | 0.5], w1' = -x': y0 = 55.75,
// y1 = -(36 + 16 + 4 + 1 + 0.25 + 2.25 + 1) = -60.5.
//
// RUN: fp4-opt %s -fp4-quantize -fp4-macro-scale="macro-block=64" -fp4-pipeline-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s --check-prefix=MACRO
// RUN: fp4-opt %s -fp4-quantize -fp4-macro-scale="macro-block=64" -fp4-fold-constants -fp4-pipeline-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s --check-prefix=MACRO
// RUN: fp4-opt %s -fp4-quantize -fp4-pipeline-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s -fp4-quantize -fp4-macro-scale="macro-block=64" | FileCheck %s --check-prefix=IR
// IR-COUNT-2: fp4.quantize {{.*}} #fp4.mxfp4_macro<macro_block = 64>
// IR: fp4.matmul

// MACRO: {{\[\[}}61.25, -47.6602]]
// MXFP4: {{\[\[}}55.75, -60.5]]

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[5.25, 3.5, 1.75, -0.875, 0.4375, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.75, 0.875, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x64xf32>
  %w = arith.constant dense<[[7.5, 5.0, 2.5, 1.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.625, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
      [-5.25, -3.5, -1.75, 0.875, -0.4375, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -1.75, -0.875, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<1x64xf32>, tensor<2x64xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
  %m = bufferization.to_buffer %y : tensor<1x2xf32> to memref<1x2xf32>
  %u = memref.cast %m : memref<1x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
