// Weight outliers at prefill sizes (M > decode-max-m): the prefill W4A16
// kernel writes them into its dequantized bf16 weight tile
// (prefill_w4a16_smem_entries), so the stacked activation rows meet
// Q(W) + outliers in one product, when the compiler can prove Q(W) is +-0
// at every outlier position (FusedCorrectionChain.h,
// weightRestIsZeroAtEntries): the weight is quantized from the rest of the
// same fp4.split_outliers (@split_at_run_time), or both are constants whose
// codes are checked (@folded_constants, as fp4-fold-constants leaves them).
// Otherwise the terms run one by one (@code_not_zero: one code at an
// outlier position is nonzero; @weight_arguments: nothing to prove it).
// corrections-prefill-ptxas.mlir assembles these kernels.
// The 64-row products take the medium class's 64-row tile (8 warps:
// select-config-medium.mlir).
// RUN: fp4-opt %s -split-input-file -verify-diagnostics -convert-fp4-to-gpu="chip=sm_90" | FileCheck %s

// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "split_outliers"
// CHECK-SAME: variant = "activation_prep_mxfp4_top2"
// CHECK-SAME: <@fp4_kernels::@fp4_matmul_2, variant = "prefill_w4a16_smem_entries", grid = [1, 1, 1], block = [256, 1, 1], shared_bytes = {{[0-9]+}}, args = ["stacked0", "weight.codes", "weight.scales", "weights.values", "weights.indices", "product0"]>
// CHECK-SAME: variant = "quantize_mxfp4"
// CHECK-NOT: correction_gather
// CHECK-NOT: stacked_epilogue
// CHECK-LABEL: func.func @split_at_run_time
// CHECK-NOT: fp4.correction_matmul
func.func @split_at_run_time(%x: tensor<64x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<64x8xf32> {
  %rest, %xv, %xi = fp4.split_outliers %x block 32 top 2 : tensor<64x64xbf16> -> tensor<64x2x2xbf16>, tensor<64x2x2xi8>
  %qx = fp4.quantize %rest : tensor<64x64xbf16> -> !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %wrest, %wv, %wi = fp4.split_outliers %w block 32 top 2 : tensor<8x64xbf16> -> tensor<8x2x2xbf16>, tensor<8x2x2xi8>
  %qw = fp4.quantize %wrest : tensor<8x64xbf16> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x8xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<64x2x2xbf16>, tensor<64x2x2xi8>), (!fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<64x2x2xbf16>, tensor<64x2x2xi8>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y3 : tensor<64x8xf32>
}

// -----

// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-SAME: variant = "prefill_w4a16_smem_entries"
// CHECK-NOT: correction_gather
// CHECK-LABEL: func.func @folded_constants
// The codes are 0 (+0) or 8 (-0) at every outlier position.
func.func @folded_constants(%qx: !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<64x8xf32> {
  %codes = arith.constant dense<[[ -8, -62, -66, -49, -109,  26, -19,  21, -11, -48,  15,  45,  5, -99, -97,  60,  54, -20, 109,  46, -57,  82,  32, -51,  36,  7, -122, -34,  57, -110,  0, -107], [ 14,  15,  22,  10, -112, -48,  24,  24,  7,  32,  0,  85,  59, 104, -31, 110, -30, -55,  8, -97,  10,  27, -93,  10,  33,  41, -55,  67,  70, -90, -28,  40], [ 50, -77,  0, -79,  9,  63,  13, -68,  -1,  64,  94,  8,  8, -100,  25,  29, -99, -110, -66, 112, -37, -121,  32, 100, -19, 127,  72, -29, -88,  21,  73, -124], [ 16, -103, -116, 107,  80, -93,  61, 110,  47, -27,  4, -86,  97,  96,  56, -106,  74, -63,  62,  12, -18, -17, -30, -68,  14, -51,  9, -63,  73, -18, -51, -12], [ -96, 110,  68, -55,  79, 104,  1,  72,  88, -59, -22,  81, -108,  48,  0, -90, -107,  40, 126, -90,  40,  48,  59, -78,  13, -103, -121,  14,  59, -65, -17,  74], [ -63,  10,  82, -16, 115,  7,  97,  0, -71, -46, -80,  19,  76, -79,  52,  -7, 109,  94, -94, -15, -59,  5, 100,  76,  50,  -9,  6,  35,  -6,  96,  97,  80], [ 103, -63,  8,  11,  61,  45,  71,  4,  29,  90, -92, -87,  9,  13, -51, -107, -25,  18, -96,  48,  14, -64, -89, 120, 115,  81, -70,  48, 107, 123, -11, -59], [ 52, 123, 119, 121,  6, -63, -60,  7, 127,  86,  33,  65,  16, -86,  -5, -76,  39,  55,  0, -123, -95, 113, -50,  95,  94, -31, -18,  64, -103,  15,  66,  23]]> : tensor<8x32xi8>
  %scales = arith.constant dense<[[127, 125], [126, 127], [128, 124], [127, 127], [125, 126], [127, 128], [126, 126], [127, 125]]> : tensor<8x2xi8>
  %wv = arith.constant dense<[[[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]]]> : tensor<8x2x2xbf16>
  %wi = arith.constant dense<[[[18, 21], [29, 28]], [[20, 18], [ 9, 15]], [[ 9, 23], [ 6, 12]], [[21, 26], [21, 7]], [[28, 13], [23, 10]], [[11, 3], [21, 26]], [[15, 27], [ 4, 6]], [[24, 9], [ 4, 27]]]> : tensor<8x2x2xi8>
  %qw = fp4.pack %codes, %scales : tensor<8x32xi8>, tensor<8x2xi8> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x8xf32>
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y1 : tensor<64x8xf32>
}

// -----

// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-NOT: _entries
// CHECK-SAME: variant = "densify"
// CHECK-NOT: _entries
// CHECK-SAME: variant = "decode_w4a16"
// CHECK-LABEL: func.func @code_not_zero
// Row 3, column 53 (an outlier position) holds code 2: not provable.
func.func @code_not_zero(%qx: !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<64x8xf32> {
  %codes = arith.constant dense<[[ -8, -62, -66, -49, -109,  26, -19,  21, -11, -48,  15,  45,  5, -99, -97,  60,  54, -20, 109,  46, -57,  82,  32, -51,  36,  7, -122, -34,  57, -110,  0, -107], [ 14,  15,  22,  10, -112, -48,  24,  24,  7,  32,  0,  85,  59, 104, -31, 110, -30, -55,  8, -97,  10,  27, -93,  10,  33,  41, -55,  67,  70, -90, -28,  40], [ 50, -77,  0, -79,  9,  63,  13, -68,  -1,  64,  94,  8,  8, -100,  25,  29, -99, -110, -66, 112, -37, -121,  32, 100, -19, 127,  72, -29, -88,  21,  73, -124], [ 16, -103, -116, 107,  80, -93,  61, 110,  47, -27,  4, -86,  97,  96,  56, -106,  74, -63,  62,  12, -18, -17, -30, -68,  14, -51,  41, -63,  73, -18, -51, -12], [ -96, 110,  68, -55,  79, 104,  1,  72,  88, -59, -22,  81, -108,  48,  0, -90, -107,  40, 126, -90,  40,  48,  59, -78,  13, -103, -121,  14,  59, -65, -17,  74], [ -63,  10,  82, -16, 115,  7,  97,  0, -71, -46, -80,  19,  76, -79,  52,  -7, 109,  94, -94, -15, -59,  5, 100,  76,  50,  -9,  6,  35,  -6,  96,  97,  80], [ 103, -63,  8,  11,  61,  45,  71,  4,  29,  90, -92, -87,  9,  13, -51, -107, -25,  18, -96,  48,  14, -64, -89, 120, 115,  81, -70,  48, 107, 123, -11, -59], [ 52, 123, 119, 121,  6, -63, -60,  7, 127,  86,  33,  65,  16, -86,  -5, -76,  39,  55,  0, -123, -95, 113, -50,  95,  94, -31, -18,  64, -103,  15,  66,  23]]> : tensor<8x32xi8>
  %scales = arith.constant dense<[[127, 125], [126, 127], [128, 124], [127, 127], [125, 126], [127, 128], [126, 126], [127, 125]]> : tensor<8x2xi8>
  %wv = arith.constant dense<[[[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]], [[4.0e+01, -3.0e+01], [2.5e+01, 6.0e+01]]]> : tensor<8x2x2xbf16>
  %wi = arith.constant dense<[[[18, 21], [29, 28]], [[20, 18], [ 9, 15]], [[ 9, 23], [ 6, 12]], [[21, 26], [21, 7]], [[28, 13], [23, 10]], [[11, 3], [21, 26]], [[15, 27], [ 4, 6]], [[24, 9], [ 4, 27]]]> : tensor<8x2x2xi8>
  %qw = fp4.pack %codes, %scales : tensor<8x32xi8>, tensor<8x2xi8> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x8xf32>
  // expected-remark @below {{the weight's block-sparse part at prefill sizes joins the product only where the quantized weight is provably +-0 at its positions (outliers split from the same tensor, or folded constants): the terms run one by one}}
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y1 : tensor<64x8xf32>
}

// -----

// CHECK-LABEL: module attributes {fp4.gpu_manifest
// CHECK-NOT: _entries
// CHECK-SAME: variant = "densify"
// CHECK-NOT: _entries
// CHECK-SAME: variant = "decode_w4a16"
// CHECK-LABEL: func.func @weight_arguments
func.func @weight_arguments(%qx: !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, %qw: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, %wv: tensor<8x2x2xbf16>, %wi: tensor<8x2x2xi8>) -> tensor<64x8xf32> {
  %y0 = fp4.matmul %qx, %qw : !fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<64x8xf32>
  // expected-remark @below {{the weight's block-sparse part at prefill sizes joins the product only where the quantized weight is provably +-0 at its positions (outliers split from the same tensor, or folded constants): the terms run one by one}}
  %y1 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y0 : (!fp4.tensor<64x64xf4E2M1FN, #fp4.mxfp4, axis = 1>), (tensor<8x2x2xbf16>, tensor<8x2x2xi8>), tensor<64x8xf32> -> tensor<64x8xf32>
  return %y1 : tensor<64x8xf32>
}
