// The `scheme` and `operands` options. K = 256 suits every scheme's block
// structure (32, 16, 64 and the 256 macro block).
//
// RUN: fp4-opt %s -split-input-file -fp4-quantize | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s -split-input-file -fp4-quantize=scheme=mxfp4 | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s -split-input-file -fp4-quantize=scheme=nvfp4 | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s -split-input-file -fp4-quantize=scheme=hif4 | FileCheck %s --check-prefix=HIF4
// RUN: fp4-opt %s -split-input-file -fp4-quantize=scheme=mxfp4_macro | FileCheck %s --check-prefix=MACRO
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme='#fp4.mxfp4<block_size = 16, scale_rounding = even>'" | FileCheck %s --check-prefix=PARAMS
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme='nvfp4<four_over_six = true>'" | FileCheck %s --check-prefix=SHORTPARAMS
// RUN: fp4-opt %s -split-input-file -fp4-quantize="operands=both" | FileCheck %s --check-prefix=MXFP4
// RUN: fp4-opt %s -split-input-file -fp4-quantize="operands=activations" | FileCheck %s --check-prefix=ACT
// RUN: fp4-opt %s -split-input-file -fp4-quantize="operands=weights scheme=nvfp4" | FileCheck %s --check-prefix=WEIGHTS

// MXFP4-LABEL: func @linear
// MXFP4-SAME: (%[[X:.*]]: tensor<8x256xbf16>, %[[W:.*]]: tensor<32x256xbf16>)
// MXFP4: %[[QX:.*]] = fp4.quantize %[[X]] : tensor<8x256xbf16> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// MXFP4: %[[QW:.*]] = fp4.quantize %[[W]] : tensor<32x256xbf16> -> !fp4.tensor<32x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// MXFP4: fp4.matmul %[[QX]], %[[QW]] : !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<32x256xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<8x32xf32>

// NVFP4-LABEL: func @linear
// NVFP4: %[[QX:.*]] = fp4.quantize %{{.*}} : tensor<8x256xbf16> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
// NVFP4: %[[QW:.*]] = fp4.quantize %{{.*}} : tensor<32x256xbf16> -> !fp4.tensor<32x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
// NVFP4: fp4.matmul %[[QX]], %[[QW]]

// HiF4 elements are sign + 3-bit magnitude, not E2M1.
// HIF4-LABEL: func @linear
// HIF4: %[[QX:.*]] = fp4.quantize %{{.*}} : tensor<8x256xbf16> -> !fp4.tensor<8x256x!fp4.s1p2, #fp4.hif4, axis = 1>
// HIF4: %[[QW:.*]] = fp4.quantize %{{.*}} : tensor<32x256xbf16> -> !fp4.tensor<32x256x!fp4.s1p2, #fp4.hif4, axis = 1>
// HIF4: fp4.matmul %[[QX]], %[[QW]]

// MACRO-LABEL: func @linear
// MACRO: fp4.quantize %{{.*}} : tensor<8x256xbf16> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
// MACRO: fp4.quantize %{{.*}} : tensor<32x256xbf16> -> !fp4.tensor<32x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>

// PARAMS-LABEL: func @linear
// PARAMS-COUNT-2: -> !fp4.tensor<{{.*}}xf4E2M1FN, #fp4.mxfp4<block_size = 16, scale_rounding = even>, axis = 1>

// SHORTPARAMS-LABEL: func @linear
// SHORTPARAMS-COUNT-2: -> !fp4.tensor<{{.*}}xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>

// Activations only: the weight stays bf16 (W4A16 is the other way round).
// ACT-LABEL: func @linear
// ACT-SAME: (%[[X:.*]]: tensor<8x256xbf16>, %[[W:.*]]: tensor<32x256xbf16>)
// ACT: %[[QX:.*]] = fp4.quantize %[[X]] : tensor<8x256xbf16> -> !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// ACT-NOT: fp4.quantize
// ACT: fp4.matmul %[[QX]], %[[W]] : !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<32x256xbf16> -> tensor<8x32xf32>

// Weights only (W4A16): the activation stays bf16.
// WEIGHTS-LABEL: func @linear
// WEIGHTS-SAME: (%[[X:.*]]: tensor<8x256xbf16>, %[[W:.*]]: tensor<32x256xbf16>)
// WEIGHTS-NOT: fp4.quantize %[[X]]
// WEIGHTS: %[[QW:.*]] = fp4.quantize %[[W]] : tensor<32x256xbf16> -> !fp4.tensor<32x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
// WEIGHTS: fp4.matmul %[[X]], %[[QW]] : tensor<8x256xbf16>, !fp4.tensor<32x256xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<8x32xf32>
func.func @linear(%x: tensor<8x256xbf16>, %w: tensor<32x256xbf16>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x256xbf16>, tensor<32x256xbf16>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// With activations only, a [K, N] weight is still brought to [N, K] (fp4.matmul
// is K-major on both sides) but not quantized.
// ACT-LABEL: func @matmul_kn_weight
// ACT-SAME: (%[[X:.*]]: tensor<8x256xf32>, %[[W:.*]]: tensor<256x32xf32>)
// ACT: %[[QX:.*]] = fp4.quantize %[[X]]
// ACT: %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<256x32xf32>) outs(%{{.*}} : tensor<32x256xf32>) permutation = [1, 0]
// ACT-NOT: fp4.quantize
// ACT: fp4.matmul %[[QX]], %[[WT]] : !fp4.tensor<8x256xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<32x256xf32> -> tensor<8x32xf32>

// WEIGHTS-LABEL: func @matmul_kn_weight
// WEIGHTS-SAME: (%[[X:.*]]: tensor<8x256xf32>, %[[W:.*]]: tensor<256x32xf32>)
// WEIGHTS: %[[WT:.*]] = linalg.transpose ins(%[[W]]
// WEIGHTS: %[[QW:.*]] = fp4.quantize %[[WT]] : tensor<32x256xf32>
// WEIGHTS: fp4.matmul %[[X]], %[[QW]] : tensor<8x256xf32>, !fp4.tensor<32x256xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<8x32xf32>
func.func @matmul_kn_weight(%x: tensor<8x256xf32>, %w: tensor<256x32xf32>) -> tensor<8x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%cst : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%x, %w : tensor<8x256xf32>, tensor<256x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
