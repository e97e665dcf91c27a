// The block structure a scheme needs decides what is quantized: K = 96 fits
// MXFP4 (32) and NVFP4 (16) but not HiF4 (64) or a 256 macro block; the
// scheme's own shape rules (NVFP4 2D tiles) are checked too.
//
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme=hif4 remarks=true" 2>&1 | FileCheck %s --check-prefix=HIF4
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme=mxfp4_macro remarks=true" 2>&1 | FileCheck %s --check-prefix=MACRO
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme='#fp4.mxfp4_macro<macro_block = 0>' remarks=true" 2>&1 | FileCheck %s --check-prefix=ROW
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme=nvfp4 remarks=true" 2>&1 | FileCheck %s --check-prefix=NVFP4
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme='nvfp4<tile2d = true>' remarks=true" 2>&1 | FileCheck %s --check-prefix=TILE2D
// RUN: fp4-opt %s -split-input-file -fp4-quantize="scheme='nvfp4<tile2d = true>' operands=weights remarks=true" 2>&1 | FileCheck %s --check-prefix=TILE2DW

// HIF4: quantize-scheme-remarks.mlir:[[# @LINE + 6]]:8: remark: not quantized: K = 96 is not a multiple of 64 required by #fp4.hif4
// MACRO: quantize-scheme-remarks.mlir:[[# @LINE + 5]]:8: remark: not quantized: K = 96 is not a multiple of 256 required by #fp4.mxfp4_macro
// A whole-row macro block only needs whole MXFP4 blocks.
// ROW-NOT: remark
// ROW: fp4.matmul {{.*}}#fp4.mxfp4_macro<macro_block = 0>
func.func @k96(%x: tensor<8x96xf32>, %w: tensor<32x96xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<8x96xf32>, tensor<32x96xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// 16x16 NVFP4 tiles need the non-K dimension to be a static multiple of 16:
// a dynamic token count cannot be tiled, a weight with N = 32 can.
// NVFP4-NOT: remark
// NVFP4: fp4.matmul {{.*}} : !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4, axis = 1>
// TILE2D: quantize-scheme-remarks.mlir:[[# @LINE + 4]]:8: remark: not quantized: lhs: #fp4.nvfp4<tile2d = true> needs dimension 0 to be a static multiple of 16
// TILE2DW-NOT: remark
// TILE2DW: fp4.matmul {{.*}} : tensor<?x64xf32>, !fp4.tensor<32x64xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
func.func @tile2d(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>, %c: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %r = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x64xf32>, tensor<32x64xf32>) outs(%c : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
