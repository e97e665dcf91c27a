// The weight outliers of a prefill chain join the weight tile only in the
// shared-dequantization form of the prefill kernel. Under
// prefill-dequant=registers the analysis asks the prefill builder before
// anything is lowered (checkPrefillMatmulKernel), so the chain runs term by
// term, whole, with a remark at its first correction product, and no
// weight-entries kernel is built.
// RUN: fp4-opt %s -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90 prefill-dequant=registers" | FileCheck %s

// CHECK-NOT: _entries
// CHECK: variant = "densify"
// CHECK-LABEL: func.func @split_at_run_time
// CHECK-NOT: fp4.correction_matmul
// CHECK-NOT: fp4.split_outliers
func.func @split_at_run_time(%x: tensor<64x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<64x8xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<64x64xbf16> -> tensor<64x2x2xbf16>, tensor<64x2x2xi8>
  %qx = fp4.quantize %rest : tensor<64x64xbf16> -> !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<8x64xbf16> -> tensor<8x2x2xbf16>, tensor<8x2x2xi8>
  %qw = fp4.quantize %wrest : tensor<8x64xbf16> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x8xf32>
  // expected-remark @below {{the weight's block-sparse part at prefill sizes is not taken by the prefill kernel (prefill: weight entries are written into the shared bf16 weight tile: they need prefill-dequant=shared, prefill-stages >= 3 and warp tiles of multiples of 16): the terms run one by one}}
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<64x2x2xbf16>, tensor<64x2x2xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<64x2x2xbf16>, tensor<64x2x2xi8>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y3 : tensor<64x8xf32>
}
