// RUN: fp4-opt %s -fp4-macro-scale="macro-block=64 search=8" | FileCheck %s --check-prefix=OPT
// RUN: fp4-opt %s -fp4-macro-scale="macro-block=0" | FileCheck %s --check-prefix=ROW
// RUN: fp4-opt %s -fp4-macro-scale -fp4-error-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not fp4-opt %s -fp4-macro-scale="macro-block=48" 2>&1 | FileCheck %s --check-prefix=BAD-BLOCK
// RUN: not fp4-opt %s -fp4-macro-scale="search=300" 2>&1 | FileCheck %s --check-prefix=BAD-SEARCH

// The options become the macro scheme's parameters. K = 192 is a multiple of
// 64 (and of 32 for a whole-row macro block, macro-block=0).
// OPT-LABEL: func.func @f
// OPT: fp4.quantize {{.*}} -> !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 8, scale_rounding = even>, axis = 1>
// OPT: fp4.quantize {{.*}} -> !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 8>, axis = 1>
// ROW: #fp4.mxfp4_macro<macro_block = 0, scale_rounding = even>
// ROW: #fp4.mxfp4_macro<macro_block = 0>

// With the default macro block (256) K = 192 does not fit: the quantize is
// kept (remark), so the error report after it still sees MXFP4 - and it
// reports the constant.
// REPORT: remark: not rewritten: the blocked axis has 192 elements, not a multiple of macro-block = 256
// REPORT: remark: not rewritten: the blocked axis has 192 elements, not a multiple of macro-block = 256
// REPORT: remark: E_total

// BAD-BLOCK: error: fp4-macro-scale: invalid options: #fp4.mxfp4_macro: macro_block must be 0 (whole axis) or a multiple of 32 in [32, 65536], got 48
// BAD-SEARCH: error: fp4-macro-scale: invalid options: #fp4.mxfp4_macro: search must be in [0, 256], got 300

func.func @f(%x: tensor<3x192xf32>) -> (tensor<3x192xf32>, tensor<3x3xf32>) {
  %qx = fp4.quantize %x : tensor<3x192xf32> -> !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  %w = arith.constant dense<1.5> : tensor<3x192xf32>
  %qw = fp4.quantize %w : tensor<3x192xf32> -> !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %qw : !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>, !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<3x3xf32>
  %d = fp4.dequantize %qx : !fp4.tensor<3x192xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1> -> tensor<3x192xf32>
  return %d, %y : tensor<3x192xf32>, tensor<3x3xf32>
}
