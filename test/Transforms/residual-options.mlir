// Invalid options are errors on the module, and the pass fails.
//
// RUN: not fp4-opt %s -fp4-residual=sparsity=1:4 2>&1 | FileCheck %s --check-prefix=SPARSITY
// SPARSITY: invalid options for pass 'fp4-residual' (`sparsity=1:4`): for the --sparsity option: '1:4' is not a valid value; valid: 2:4, topk
//
// RUN: not fp4-opt %s -fp4-residual=k=3 2>&1 | FileCheck %s --check-prefix=TWOFOUR
// RUN: not fp4-opt %s -fp4-residual=block-size=8 2>&1 | FileCheck %s --check-prefix=TWOFOUR
// TWOFOUR: error: fp4-residual: k and block-size apply to sparsity=topk only (2:4 keeps 2 of every 4)
//
// RUN: not fp4-opt %s -fp4-residual="sparsity=topk k=40" 2>&1 | FileCheck %s --check-prefix=K
// K: error: fp4-residual: k = 40 is outside [1, block-size] = [1, 32]
//
// RUN: not fp4-opt %s -fp4-residual="sparsity=topk block-size=256" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: fp4-residual: block-size = 256 is outside [1, 128] (in-block indices are i8)
//
// RUN: not fp4-opt %s -fp4-residual=operands=all 2>&1 | FileCheck %s --check-prefix=OPERANDS
// OPERANDS: invalid options for pass 'fp4-residual' (`operands=all`): for the --operands option: 'all' is not a valid value; valid: activations, weights, both
//
// Nothing is rewritten when the options are wrong.
// SPARSITY-NOT: fp4.residual
// OPERANDS-NOT: fp4.residual

func.func @linear(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %qx = fp4.quantize %x : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %w : !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<32x64xf32> -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
