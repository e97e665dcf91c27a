// The static-channel outlier fallback from linalg.matmul to CPU code, with
// calibration data: channel c of the calibration samples holds 0.1 c, so
// channels 61, 62 and 63 exceed the default threshold 6.0.
// RUN: %python %S/../../Transforms/Inputs/write_npz.py %t.npz @linear/arg0=1x64:0.1
// RUN: fp4-opt %s -fp4-quantize -fp4-outlier-fallback="mode=static-channels calibration=%t.npz" -fp4-fold-constants -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=STATIC
// RUN: fp4-opt %s -fp4-quantize -fp4-fold-constants -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=PLAIN
// The weights' channel split and quantization fold at compile time.
// RUN: fp4-opt %s -fp4-quantize -fp4-outlier-fallback="mode=static-channels calibration=%t.npz" -fp4-fold-constants | FileCheck %s --check-prefix=FOLDED
// FOLDED-NOT: tensor<2x64xf32>
// FOLDED: fp4.split_channels %{{.*}} channels [61, 62, 63] : tensor<1x64xf32>
// FOLDED-NOT: tensor<2x64xf32>

// x = [1 x 63, 100] (channel 63 an outlier); w0 = 1 everywhere, w1 = 0.5
// except 2 at k = 63. Exact: x.w0 = 63 + 100 = 163, x.w1 = 31.5 + 200 = 231.5.
// Plain MXFP4: x's second block has amax 100, X = 16, its 1s vanish in the
// deadzone: x' = [1 x 32, 0 x 31, 96]; the weights are exact (w1's blocks:
// amax 2, X = 0.5): y = [32 + 96, 16 + 192] = [128, 208].
// PLAIN: {{\[}}[128,   208]]
// Static channels: x_in = [1 x 61, 0, 0, 0] and W_in (zeroed likewise)
// quantize exactly, x_out = [1, 1, 100] and the gathered weight columns are
// exact in bf16: the exact product.
// STATIC: {{\[}}[163,   231.5]]

func.func private @printMemrefF32(memref<*xf32>)

func.func @linear(%x: tensor<1x64xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                              1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                              1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                              1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                             [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                              0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                              0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                              0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2.0]]> : tensor<2x64xf32>
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
    %c63 = arith.constant 63 : index
    %big = arith.constant 100.0 : f32
    %one = arith.constant 1.0 : f32
    %last = arith.cmpi eq, %k, %c63 : index
    %v = arith.select %last, %big, %one : f32
    linalg.yield %v : f32
  } -> tensor<1x64xf32>
  %y = call @linear(%x) : (tensor<1x64xf32>) -> tensor<1x2xf32>
  %m = bufferization.to_buffer %y : tensor<1x2xf32> to memref<1x2xf32>
  %u = memref.cast %m : memref<1x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
