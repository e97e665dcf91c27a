// RUN: fp4-opt %s -fp4-pipeline-cpu="c-wrappers=true" | FileCheck %s
// RUN: fp4-opt %s -fp4-pipeline-cpu="c-wrappers=true fast=true" | FileCheck %s
// RUN: fp4-opt %s -fp4-pipeline-cpu="c-wrappers=true fast=true" | FileCheck %s --check-prefix=FAST
// RUN: fp4-opt %s -fp4-pipeline-cpu="c-wrappers=true fast=true" | FileCheck %s --check-prefix=NOT
// RUN: fp4-opt %s -fp4-pipeline-cpu | FileCheck %s --check-prefix=NOWRAP

// What torch-mlir's linalg-on-tensors output of a transformer block needs
// from the CPU pipeline: exact GELU's math.erf as a libm call, LayerNorm's
// rsqrt expanded to 1 / sqrt (libm has no rsqrtf), tanh and exp as LLVM
// intrinsics (LLVM's backend calls tanhf where the target lacks one), and with c-wrappers a C interface for the function but
// not for the libm declarations (there is no _mlir_ciface_erff).

// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @block(
// CHECK-DAG: llvm.func @_mlir_ciface_block(
// CHECK-DAG: llvm.intr.sqrt
// CHECK-DAG: llvm.intr.exp
// CHECK-DAG: llvm.intr.tanh
// CHECK-DAG: llvm.call @erff
// NOT-NOT: rsqrt
// NOT-NOT: _mlir_ciface_erff
// NOT-NOT: _mlir_ciface_parallel_compute_fn
// fast: the parallel loops run as async tasks.
// FAST: llvm.call @mlirAsyncRuntime
// NOWRAP-NOT: _mlir_ciface_block
// NOWRAP: llvm.call @erff
func.func @block(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.erf %in : f32
    %b = math.rsqrt %in : f32
    %c = math.tanh %a : f32
    %d = math.exp %b : f32
    %s = arith.addf %c, %d : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
