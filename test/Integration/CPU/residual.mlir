// The 2:4 residual correction from linalg.matmul to CPU code (activations
// quantized, weights float), with the plain MXFP4 product as a control.
// RUN: fp4-opt %s -fp4-quantize=operands=activations -fp4-residual -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=RESIDUAL
// RUN: fp4-opt %s -fp4-quantize=operands=activations -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=PLAIN
// RUN: fp4-opt %s -fp4-quantize=operands=activations -fp4-residual="sparsity=topk k=8" -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=TOPK

// x = [4, 0.375, 0.875, 1.375, 2.75, 3.75, -0.125, 5.5, 0 x 24] (one MXFP4
// block, X = 1), w = [1, 2, ..., 32]; exact x.w = 92.25.
// Plain: deq(Q(x)) = [4, 0.5, 1, 1.5, 3, 4, -0, 6, 0...]: 101.
// PLAIN: {{\[}}[101]]
// r = [0, -0.125, -0.125, -0.125 | -0.25, -0.25, -0.125, -0.5 | 0...];
// 2:4 keeps r1, r2, r7, r4: 101 - 0.625 - 4 - 1.25 = 95.125.
// RESIDUAL: {{\[}}[95.125]]
// Top 8 of the block keeps all 7 non-zero residuals (and one zero): exact.
// TOPK: {{\[}}[92.25]]

func.func private @printMemrefF32(memref<*xf32>)

func.func @linear(%x: tensor<1x32xbf16>) -> tensor<1x1xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
      13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0,
      27.0, 28.0, 29.0, 30.0, 31.0, 32.0]]> : tensor<1x32xbf16>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<1x1xf32>) -> tensor<1x1xf32>
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<1x32xbf16>, tensor<1x32xbf16>) outs(%f : tensor<1x1xf32>) -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

func.func @main() {
  %x = arith.constant dense<[[4.0, 0.375, 0.875, 1.375, 2.75, 3.75, -0.125, 5.5,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xbf16>
  %y = call @linear(%x) : (tensor<1x32xbf16>) -> tensor<1x1xf32>
  %m = bufferization.to_buffer %y : tensor<1x1xf32> to memref<1x1xf32>
  %u = memref.cast %m : memref<1x1xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
