// RUN: fp4-opt %s -split-input-file -convert-fp4-to-linalg | FileCheck %s

// MXFP4 quantize: block amax (NaN-propagating max of |x| bit patterns), the
// E8M0 byte from the f32 exponent field, then codes (E2M1's nearest-even
// step count rounded by one add of 2^23, E2M1.h) packed two per byte by a
// reduction over the pair dimension.
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BLK3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BLK4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[OUT4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @mxfp4_quantize
// CHECK-SAME: (%[[X:.*]]: tensor<2x64xf32>) -> (tensor<2x32xi8>, tensor<2x2xi8>)
// CHECK: %[[XB:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[AMAX:.*]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BLK3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XB]] : tensor<2x2x32xf32>) outs(%[[ZERO]] : tensor<2x2xf32>)
// CHECK:   arith.andi %{{.*}}, %{{.*}} : i32
// CHECK:   arith.cmpi sgt
// CHECK:   arith.select
// CHECK: %[[SCALES:.*]] = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xi8>)
// CHECK:   %[[C23:.*]] = arith.constant 23 : i32
// CHECK:   arith.shrui %{{.*}}, %[[C23]] : i32
// CHECK:   %[[C129:.*]] = arith.constant 129 : i32
// CHECK:   arith.subi %{{.*}}, %[[C129]] : i32
// CHECK:   arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[XP:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2, 3]] output_shape [2, 2, 16, 2]
// CHECK: %[[CODES:.*]] = linalg.generic {indexing_maps = [#[[ID4]], #[[BLK4]], #[[OUT4]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XP]], %[[SCALES]] : tensor<2x2x16x2xf32>, tensor<2x2xi8>) outs(%{{.*}} : tensor<2x2x16xi8>)
// CHECK:   arith.mulf
// CHECK:   math.absf
// CHECK:   arith.shrui
// CHECK:   arith.mulf
// CHECK:   %[[MAGIC:.*]] = arith.constant 0x4B000000 : f32
// CHECK:   arith.addf %{{.*}}, %[[MAGIC]] : f32
// CHECK:   %[[POS:.*]] = linalg.index 3 : index
// CHECK:   arith.index_cast %[[POS]] : index to i32
// CHECK:   arith.shli
// CHECK:   arith.trunci %{{.*}} : i32 to i8
// CHECK:   arith.ori
// CHECK: %[[PACKED:.*]] = tensor.collapse_shape %[[CODES]] {{\[}}[0], [1, 2]] : tensor<2x2x16xi8> into tensor<2x32xi8>
// CHECK: return %[[PACKED]], %[[SCALES]] : tensor<2x32xi8>, tensor<2x2xi8>
func.func @mxfp4_quantize(%x: tensor<2x64xf32>) -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %q = fp4.quantize %x : tensor<2x64xf32> -> !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// A blocked axis that is not innermost is moved last and the components are
// moved back; a dynamic dimension flows through tensor.dim. bf16 input is
// extended exactly (bit shift) first.
// CHECK-LABEL: func.func @mxfp4_axis0_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<64x?xbf16>) -> (tensor<32x?xi8>, tensor<2x?xi8>)
// CHECK: %[[EXT:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<64x?xbf16>) outs(%{{.*}} : tensor<64x?xf32>)
// CHECK:   arith.bitcast %{{.*}} : bf16 to i16
// CHECK:   arith.extui %{{.*}} : i16 to i32
// CHECK:   arith.shli
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[EXT]] : tensor<64x?xf32>) outs(%{{.*}} : tensor<?x64xf32>) permutation = [1, 0]
// CHECK: %[[D:.*]] = tensor.dim %[[T]], %{{.*}} : tensor<?x64xf32>
// CHECK: tensor.expand_shape %[[T]] {{\[}}[0], [1, 2]] output_shape [%[[D]], 2, 32] : tensor<?x64xf32> into tensor<?x2x32xf32>
// CHECK: %[[SCALES:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2xi8>)
// CHECK: %[[CODES:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<?x2x16xi8> into tensor<?x32xi8>
// CHECK: %[[CT:.*]] = linalg.transpose ins(%[[CODES]] : tensor<?x32xi8>) outs(%{{.*}} : tensor<32x?xi8>) permutation = [1, 0]
// CHECK: %[[ST:.*]] = linalg.transpose ins(%[[SCALES]] : tensor<?x2xi8>) outs(%{{.*}} : tensor<2x?xi8>) permutation = [1, 0]
// CHECK: return %[[CT]], %[[ST]]
func.func @mxfp4_axis0_dynamic(%x: tensor<64x?xbf16>) -> !fp4.tensor<64x?xf4E2M1FN, #fp4.mxfp4, axis = 0> {
  %q = fp4.quantize %x : tensor<64x?xbf16> -> !fp4.tensor<64x?xf4E2M1FN, #fp4.mxfp4, axis = 0>
  return %q : !fp4.tensor<64x?xf4E2M1FN, #fp4.mxfp4, axis = 0>
}

// -----

// The scale rule is specialized at compile time: `even` compares the
// mantissa field with 0x600000 (amax / 2^floor >= 1.75).
// CHECK-LABEL: func.func @mxfp4_even
// CHECK: %[[E:.*]] = arith.constant 6291456 : i32
// CHECK: arith.cmpi sge, %{{.*}}, %[[E]] : i32
// CHECK: linalg.index 3
func.func @mxfp4_even(%x: tensor<1x32xf32>) -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1> {
  %q = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  return %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
}

// -----

// Stochastic rounding keys counterRandom with the element's logical linear
// index (row * 32 + column here), built from linalg.index inside the codes
// generic; the seed is folded into the constants.
// CHECK-LABEL: func.func @mxfp4_stochastic
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-DAG: linalg.index 0 : index
// CHECK-DAG: linalg.index 1 : index
// CHECK-DAG: linalg.index 2 : index
// CHECK-DAG: linalg.index 3 : index
// CHECK-DAG: arith.constant 2146121005 : i32
// CHECK-DAG: arith.constant -2073254261 : i32
// CHECK-DAG: arith.constant 42 : i32
// CHECK: arith.sitofp
// CHECK: arith.constant 5.96046448E-8 : f32
func.func @mxfp4_stochastic(%x: tensor<2x32xf32>) -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 42>, axis = 1> {
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 42>, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 42>, axis = 1>
}

// -----

// Dequantize: one all-parallel generic over [rows, blocks, 16, 2] reading a
// byte and a scale per element; a bf16 result is rounded to nearest even
// with the numerics bf16 rule (bias 0x7FFF + lsb).
// CHECK-DAG: #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BYTE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[BLK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @mxfp4_dequantize
// CHECK-SAME: (%[[C:.*]]: tensor<2x32xi8>, %[[S:.*]]: tensor<2x2xi8>) -> tensor<2x64xbf16>
// CHECK: %[[CB:.*]] = tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [2, 2, 16] : tensor<2x32xi8> into tensor<2x2x16xi8>
// CHECK: %[[V:.*]] = linalg.generic {indexing_maps = [#[[BYTE]], #[[BLK]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[CB]], %[[S]] : tensor<2x2x16xi8>, tensor<2x2xi8>) outs(%{{.*}} : tensor<2x2x16x2xf32>)
// CHECK:   linalg.index 3
// CHECK:   arith.shrui
// CHECK:   arith.mulf
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[V]] {{\[}}[0], [1, 2, 3]] : tensor<2x2x16x2xf32> into tensor<2x64xf32>
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[F]] : tensor<2x64xf32>) outs(%{{.*}} : tensor<2x64xbf16>)
// CHECK:   arith.constant 32767 : i32
// CHECK:   arith.trunci %{{.*}} : i32 to i16
// CHECK:   arith.bitcast %{{.*}} : i16 to bf16
// CHECK: return %[[B]]
func.func @mxfp4_dequantize(%q: !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<2x64xbf16> {
  %x = fp4.dequantize %q : !fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x64xbf16>
  return %x : tensor<2x64xbf16>
}

// -----

// NVFP4: the tensor amax over finite values is a full reduction to a 0-d
// tensor; g_enc = min(2688 / amax, FLT_MAX), g_dec, and k = g_enc / 6 are
// scalar arith; g_dec becomes the tensor<f32> component. With
// four_over_six, both candidates' f64 squared errors are reduced per block
// and the map-to-4 byte wins only on strictly lower error.
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @nvfp4_four_over_six
// CHECK-SAME: (%[[X:.*]]: tensor<2x32xf32>) -> (tensor<2x16xi8>, tensor<2x2xi8>, tensor<f32>)
// CHECK: %[[TAMAX:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[ALL]]], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<2x32xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[A:.*]] = tensor.extract %[[TAMAX]][] : tensor<f32>
// CHECK: %[[TOP:.*]] = arith.constant 1.536000e+03 : f32
// CHECK: arith.divf %[[TOP]], %[[A]] : f32
// CHECK: %[[GDEC:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: %[[SIX:.*]] = arith.constant 6.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[SIX]] : f32
// CHECK: %[[TS:.*]] = tensor.from_elements %[[GDEC]] : tensor<f32>
// CHECK: %[[S6:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xi8>)
// CHECK: %[[S4:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xi8>)
// CHECK:   arith.constant 1.500000e+00 : f32
// CHECK: %[[SSE:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[S6]], %[[S4]] : tensor<2x2x16xf32>, tensor<2x2xi8>, tensor<2x2xi8>) outs(%{{.*}}, %{{.*}} : tensor<2x2xf64>, tensor<2x2xf64>)
// CHECK:   arith.extf %{{.*}} : f32 to f64
// CHECK:   arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK:   arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[SSE]]#0, %[[SSE]]#1, %[[S6]], %[[S4]] : tensor<2x2xf64>, tensor<2x2xf64>, tensor<2x2xi8>, tensor<2x2xi8>) outs(%{{.*}} : tensor<2x2xi8>)
// CHECK:   arith.cmpf olt, %{{.*}}, %{{.*}} : f64
// CHECK:   arith.select
// CHECK: %[[CODES:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<2x2x8x2xf32>, tensor<2x2xi8>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[CODES]]
// CHECK: return %[[C]], %[[S]], %[[TS]] : tensor<2x16xi8>, tensor<2x2xi8>, tensor<f32>
func.func @nvfp4_four_over_six(%x: tensor<2x32xf32>) -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1> {
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
}

// -----

// NVFP4 16x16 tiles: the tile amax reduces two non-adjacent dimensions, and
// the tile byte is repeated over the tile's 16 lines in the scale component.
// CHECK-LABEL: func.func @nvfp4_tile2d
// CHECK-SAME: -> (tensor<32x16xi8>, tensor<32x2xi8>, tensor<f32>)
// CHECK: %[[K:.*]] = tensor.expand_shape %{{.*}} output_shape [32, 2, 16] : tensor<32x32xf32> into tensor<32x2x16xf32>
// CHECK: tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [2, 16, 2, 16] : tensor<32x2x16xf32> into tensor<2x16x2x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x16x2x16xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: %[[REP:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2xi8>) outs(%{{.*}} : tensor<2x16x2xi8>)
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[REP]] {{\[}}[0, 1], [2]] : tensor<2x16x2xi8> into tensor<32x2xi8>
// CHECK: return %{{.*}}, %[[S]], %{{.*}}
func.func @nvfp4_tile2d(%x: tensor<32x32xf32>) -> !fp4.tensor<32x32xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> {
  %q = fp4.quantize %x : tensor<32x32xf32> -> !fp4.tensor<32x32xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  return %q : !fp4.tensor<32x32xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
}

// -----

// NVFP4 dequantize reads g_dec from the 0-d component.
// CHECK-LABEL: func.func @nvfp4_dequantize
// CHECK-SAME: (%[[C:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<4x1xi8>, %[[T:.*]]: tensor<f32>) -> tensor<4x16xf32>
// CHECK: %[[G:.*]] = tensor.extract %[[T]][] : tensor<f32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<4x1x8xi8>, tensor<4x1xi8>)
// CHECK:   arith.mulf %{{.*}}, %[[G]] : f32
func.func @nvfp4_dequantize(%q: !fp4.tensor<4x16xf4E2M1FN, #fp4.nvfp4, axis = 1>) -> tensor<4x16xf32> {
  %x = fp4.dequantize %q : !fp4.tensor<4x16xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<4x16xf32>
  return %x : tensor<4x16xf32>
}

// -----

// HiF4: groups of 64 split as [8 level-2 blocks, 2 level-3 blocks, 4]; the
// maxima per 4, 8 and 64 are three chained reductions; the i32 metadata
// word ORs the E6M2 byte and the level bits over the (8, 2) sub-blocks.
// CHECK-LABEL: func.func @hif4_quantize
// CHECK-SAME: (%[[X:.*]]: tensor<3x128xf32>) -> (tensor<3x64xi8>, tensor<3x2xi32>)
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1, 2, 3, 4]] output_shape [3, 2, 8, 2, 4]
// CHECK: %[[M4:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2x8x2xf32>)
// CHECK: %[[M8:.*]] = linalg.generic {{.*}} ins(%[[M4]] : tensor<3x2x8x2xf32>) outs(%{{.*}} : tensor<3x2x8xf32>)
// CHECK: %[[M64:.*]] = linalg.generic {{.*}} ins(%[[M8]] : tensor<3x2x8xf32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK: %[[BYTE:.*]] = linalg.generic {{.*}} ins(%[[M64]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<3x2xi32>)
// CHECK:   arith.constant 0.142578125 : f32
// CHECK: %[[REC:.*]] = linalg.generic {{.*}} ins(%[[BYTE]] : tensor<3x2xi32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK: %[[L2:.*]] = linalg.generic {{.*}} ins(%[[M8]], %[[REC]] : tensor<3x2x8xf32>, tensor<3x2xf32>) outs(%{{.*}} : tensor<3x2x8xi32>)
// CHECK: %[[L3:.*]] = linalg.generic {{.*}} ins(%[[M4]], %[[REC]], %[[L2]] : tensor<3x2x8x2xf32>, tensor<3x2xf32>, tensor<3x2x8xi32>) outs(%{{.*}} : tensor<3x2x8x2xi32>)
// CHECK: %[[META:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[BYTE]], %[[L2]], %[[L3]] : tensor<3x2xi32>, tensor<3x2x8xi32>, tensor<3x2x8x2xi32>) outs(%{{.*}} : tensor<3x2xi32>)
// CHECK: %[[CODES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[REC]], %[[L2]], %[[L3]] : tensor<3x2x8x2x2x2xf32>, tensor<3x2xf32>, tensor<3x2x8xi32>, tensor<3x2x8x2xi32>)
// CHECK:   math.floor
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[CODES]] {{\[}}[0], [1, 2, 3, 4]] : tensor<3x2x8x2x2xi8> into tensor<3x64xi8>
// CHECK: return %[[C]], %[[META]]
func.func @hif4_quantize(%x: tensor<3x128xf32>) -> !fp4.tensor<3x128x!fp4.s1p2, #fp4.hif4, axis = 1> {
  %q = fp4.quantize %x : tensor<3x128xf32> -> !fp4.tensor<3x128x!fp4.s1p2, #fp4.hif4, axis = 1>
  return %q : !fp4.tensor<3x128x!fp4.s1p2, #fp4.hif4, axis = 1>
}

// -----

// Macro-block default: the macro amax reduces [blocks, 32]; m is the bf16
// significand of amax / 6; blocks are quantized on y = x / m; the factor is
// stored as bf16 bits.
// CHECK-LABEL: func.func @macro_default
// CHECK-SAME: -> (tensor<2x128xi8>, tensor<2x8xi8>, tensor<2x1xbf16>)
// CHECK: %[[XS:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1, 8, 32]
// CHECK: %[[MAMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[XS]] : tensor<2x1x8x32xf32>) outs(%{{.*}} : tensor<2x1xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[MAMAX]] : tensor<2x1xf32>) outs(%{{.*}} : tensor<2x1xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XS]], %[[M]] : tensor<2x1x8x32xf32>, tensor<2x1xf32>) outs(%{{.*}} : tensor<2x1x8x32xf32>)
// CHECK:   arith.divf
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<2x1xf32>) outs(%{{.*}} : tensor<2x1xbf16>)
// CHECK:   arith.bitcast %{{.*}} : i16 to bf16
// CHECK: return %{{.*}}, %{{.*}}, %[[F]]
func.func @macro_default(%x: tensor<2x256xf32>) -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1> {
  %q = fp4.quantize %x : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
  return %q : !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
}

// -----

// Macro-block search=4: the candidates bf16(1 + j/4) are a constant table
// indexed by a candidate loop; the per-candidate f64 error reduces [blocks,
// 32]; the first strictly lowest error wins (j = 0 always taken).
// CHECK-LABEL: func.func @macro_search
// CHECK: %[[TABLE:.*]] = arith.constant dense<[1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00]> : tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[TABLE]] : tensor<2x2x2x32xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<2x2x4x2xf32>)
// CHECK: %[[SSE:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %[[TABLE]], %{{.*}} : tensor<2x2x2x32xf32>, tensor<4xf32>, tensor<2x2x4x2xi8>) outs(%{{.*}} : tensor<2x2x4xf64>)
// CHECK: %[[BEST:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SSE]] : tensor<2x2x4xf64>) outs(%{{.*}}, %{{.*}} : tensor<2x2xi32>, tensor<2x2xf64>)
// CHECK:   arith.cmpi eq
// CHECK:   arith.cmpf olt
// CHECK:   arith.ori
// CHECK: linalg.generic {{.*}} ins(%[[BEST]]#0 : tensor<2x2xi32>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:   tensor.extract %[[TABLE]]
func.func @macro_search(%x: tensor<2x128xf32>) -> !fp4.tensor<2x128xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 4>, axis = 1> {
  %q = fp4.quantize %x : tensor<2x128xf32> -> !fp4.tensor<2x128xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 4>, axis = 1>
  return %q : !fp4.tensor<2x128xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 4>, axis = 1>
}

// -----

// W4A16 matmul: the weight is dequantized to f32, the bf16 activation is
// extended, and a contraction with a transposed rhs map accumulates into a
// zero-filled f32 tensor.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_w4a16
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xbf16>, %[[C:.*]]: tensor<8x32xi8>, %[[S:.*]]: tensor<8x2xi8>) -> tensor<?x8xf32>
// CHECK: %[[XF:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x64xbf16>) outs(%{{.*}} : tensor<?x64xf32>)
// CHECK: %[[W:.*]] = tensor.collapse_shape %{{.*}} : tensor<8x2x16x2xf32> into tensor<8x64xf32>
// CHECK: %[[M:.*]] = tensor.dim %[[XF]], %{{.*}} : tensor<?x64xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[M]]) : tensor<?x8xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x8xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XF]], %[[W]] : tensor<?x64xf32>, tensor<8x64xf32>) outs(%[[Z]] : tensor<?x8xf32>)
// CHECK:   %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:   arith.addf %{{.*}}, %[[P]] : f32
// CHECK: return %[[Y]]
func.func @matmul_w4a16(%x: tensor<?x64xbf16>, %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<?x8xf32> {
  %y = fp4.matmul %x, %w : tensor<?x64xbf16>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Batched lhs with a shared rank-2 rhs, and fully batched; bf16 result.
// CHECK-DAG: #[[BLHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[SHARED:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[BRHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[BOUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.generic {indexing_maps = [#[[BLHS]], #[[SHARED]], #[[BOUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x4x32xf32>, tensor<8x32xf32>) outs(%{{.*}} : tensor<2x4x8xf32>)
// The f16 operand is widened with the numerics f16 rule (no fpext libcall).
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x8x32xf16>) outs(%{{.*}} : tensor<2x8x32xf32>)
// CHECK:   arith.bitcast %{{.*}} : f16 to i16
// CHECK:   arith.constant 31744 : i32
// CHECK: linalg.generic {indexing_maps = [#[[BLHS]], #[[BRHS]], #[[BOUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x4x32xf32>, tensor<2x8x32xf32>) outs(%{{.*}} : tensor<2x4x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4x8xbf16>)
// CHECK: return %{{.*}}, %[[R]]
func.func @matmul_batched(%x: tensor<2x4x32xf32>, %w: !fp4.tensor<8x32xf4E2M1FN, #fp4.nvfp4, axis = 1>,
                          %wb: tensor<2x8x32xf16>) -> (tensor<2x4x8xf32>, tensor<2x4x8xbf16>) {
  %0 = fp4.matmul %x, %w : tensor<2x4x32xf32>, !fp4.tensor<8x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<2x4x8xf32>
  %1 = fp4.matmul %x, %wb : tensor<2x4x32xf32>, tensor<2x8x32xf16> -> tensor<2x4x8xbf16>
  return %0, %1 : tensor<2x4x8xf32>, tensor<2x4x8xbf16>
}

// -----

// pack/unpack are the identity on components; signatures, calls and returns
// carry the components in ABI order.
// CHECK-LABEL: func.func private @callee(tensor<4x16xi8>, tensor<4x1xi8>) -> (tensor<4x16xi8>, tensor<4x1xi8>)
// CHECK-LABEL: func.func @pack_unpack
// CHECK-SAME: (%[[C:.*]]: tensor<4x16xi8>, %[[S:.*]]: tensor<4x1xi8>)
// CHECK-NOT: fp4.
// CHECK: %[[R:.*]]:2 = call @callee(%[[C]], %[[S]]) : (tensor<4x16xi8>, tensor<4x1xi8>) -> (tensor<4x16xi8>, tensor<4x1xi8>)
// CHECK: return %[[R]]#1, %[[R]]#0 : tensor<4x1xi8>, tensor<4x16xi8>
func.func private @callee(!fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @pack_unpack(%c: tensor<4x16xi8>, %s: tensor<4x1xi8>) -> (tensor<4x1xi8>, tensor<4x16xi8>) {
  %q = fp4.pack %c, %s : tensor<4x16xi8>, tensor<4x1xi8> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %r = func.call @callee(%q) : (!fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %c2, %s2 = fp4.unpack %r : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x16xi8>, tensor<4x1xi8>
  return %s2, %c2 : tensor<4x1xi8>, tensor<4x16xi8>
}

// -----

// Quantized values carried by scf.for become one iter_arg per component.
// CHECK-LABEL: func.func @scf_loop
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x16xi8>, tensor<2x2xi8>, tensor<f32>)
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x16xi8>, tensor<2x2xi8>, tensor<f32>
// CHECK-NOT: fp4.
func.func @scf_loop(%x: tensor<2x32xf32>, %n: index) -> tensor<2x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %q) -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1> {
    %d = fp4.dequantize %a : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<2x32xf32>
    %q2 = fp4.quantize %d : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
    scf.yield %q2 : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  }
  %d = fp4.dequantize %r : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<2x32xf32>
  return %d : tensor<2x32xf32>
}
