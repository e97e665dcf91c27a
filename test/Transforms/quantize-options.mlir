// Invalid options are errors on the module, and the pass fails.
//
// RUN: not fp4-opt %s -fp4-quantize=scheme=mxfp5 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: quantize-options.mlir:0:0: error: fp4-quantize: invalid scheme 'mxfp5': unknown attribute `mxfp5` in dialect `fp4`; expected a scheme attribute such as '#fp4.nvfp4<four_over_six = true>' or a short name (mxfp4, nvfp4, hif4, mxfp4_macro)
//
// RUN: not fp4-opt %s -fp4-quantize="scheme='#arith.fastmath<fast>'" 2>&1 | FileCheck %s --check-prefix=NOTSCHEME
// NOTSCHEME: error: fp4-quantize: invalid scheme '#arith.fastmath<fast>': #arith.fastmath<fast> is not a quantization scheme attribute
//
// RUN: not fp4-opt %s -fp4-quantize="scheme='42 : i32'" 2>&1 | FileCheck %s --check-prefix=INTEGER
// INTEGER: error: fp4-quantize: invalid scheme '42 : i32': 42 : i32 is not a quantization scheme attribute
//
// The scheme's own verifier speaks for invalid parameters.
// RUN: not fp4-opt %s -fp4-quantize="scheme='#fp4.mxfp4<block_size = 3>'" 2>&1 | FileCheck %s --check-prefix=PARAM
// PARAM: error: fp4-quantize: invalid scheme '#fp4.mxfp4<block_size = 3>': #fp4.mxfp4: block_size must be an even number in [2, 1024], got 3
//
// RUN: not fp4-opt %s -fp4-quantize="scheme=''" 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: fp4-quantize: invalid scheme '': expected attribute value
//
// An enum option (PassOptionEnums.h) fails at option parsing, with the valid values.
// RUN: not fp4-opt %s -fp4-quantize=operands=all 2>&1 | FileCheck %s --check-prefix=OPERANDS
// OPERANDS: invalid options for pass 'fp4-quantize' (`operands=all`): for the --operands option: 'all' is not a valid value; valid: both, activations, weights
//
// Nothing is rewritten when the options are wrong.
// UNKNOWN-NOT: fp4.matmul
// OPERANDS-NOT: fp4.matmul

func.func @linear(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x64xf32>, tensor<32x64xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
