// RUN: fp4-opt %s -split-input-file -fp4-residual="sparsity=topk remarks=true" -verify-diagnostics

// NVFP4 allows K = 48, which is no multiple of the top-k block of 32.
func.func @block_does_not_divide(%x: tensor<4x48xf32>, %w: tensor<8x48xf32>) -> tensor<4x8xf32> {
  %q = fp4.quantize %x : tensor<4x48xf32> -> !fp4.tensor<4x48xf4E2M1FN, #fp4.nvfp4, axis = 1>
  // expected-remark @below {{no residual correction: lhs has K = 48, not a multiple of the residual block size 32}}
  %y = fp4.matmul %q, %w : !fp4.tensor<4x48xf4E2M1FN, #fp4.nvfp4, axis = 1>, tensor<8x48xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
