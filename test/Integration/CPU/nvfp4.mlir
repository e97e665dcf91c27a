// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// NVFP4 (numerics.md 3) on the CPU: TransformerEngine's order of f32
// operations, E4M3 block scales, the f32 per-tensor decode scale, the
// four_over_six choice, NaN blocks and 16x16 tiles. Expected values are
// derived in the comments from the spec.

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @print_bytes(%t: tensor<?x?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %t, %c0 : tensor<?x?xi8>
  %d1 = tensor.dim %t, %c1 : tensor<?x?xi8>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xi32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<?x?xi8>) outs(%e : tensor<?x?xi32>) {
  ^bb0(%a: i8, %b: i32):
    %z = arith.extui %a : i8 to i32
    linalg.yield %z : i32
  } -> tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @print_f32(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print_scalar(%t: tensor<f32>) {
  %r = tensor.expand_shape %t [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
  %d = tensor.cast %r : tensor<1x1xf32> to tensor<?x?xf32>
  call @print_f32(%d) : (tensor<?x?xf32>) -> ()
  return
}

// Bit patterns of f32 values, to check roundings the printed digits hide.
func.func @print_bits(%t: tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %t, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %t, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xi32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<?x?xf32>) outs(%e : tensor<?x?xi32>) {
  ^bb0(%a: f32, %b: i32):
    %z = arith.bitcast %a : f32 to i32
    linalg.yield %z : i32
  } -> tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// Block 0: [6, 3, -1.5, 0.5, 0.25, 0.2, -0, 1, 2, 4, 5, -6, 0.75, 1.25, 1.75,
// 2.5]; block 1: block 0 / 4.
//   tensor_amax = 6, g_enc = 2688 / 6 = 448, g_dec = f32(1/448) = 0.00223214,
//   k = f32(448 / 6) = 448/6 - (2/3)2^-18.
//   Block 0: amax * k = 448 - 2^-16, a tie between 448 - 2^-15 and 448 that
//   rounds to even: s = 448, E4M3 byte 0x7E = 126. 448 * g_dec =
//   7 * f32(1/7) = 1.0000000447 rounds to 1, so enc = 1 and the codes are
//   the E2M1 codes of x: 7 5 11 1 0 0 8 2 4 6 6 15 2 2 4 4 -> bytes
//   87 27 0 40 100 246 34 68.
//   Block 1: amax * k = 112 - 2^-18 -> 112 (tie to even), byte
//   0x6E = 110; 112 * g_dec rounds to 0.25, enc = 4: the same codes.
//   x' = (e2m1 * s) * g_dec: 6 * 448 = 2688, 2688 * g_dec = 6.00000027 rounds
//   to 6.0000005 (bits 0x40C00001 = 1086324737): the order of operations
//   is visible in the bits.
// CHECK-LABEL: nvfp4_default
// CHECK: {{\[}}[126, 110]]
// CHECK: {{\[}}[87, 27, 0, 40, 100, 246, 34, 68, 87, 27, 0, 40, 100, 246, 34, 68]]
// CHECK: {{\[}}[0.00223214]]
// CHECK: {{\[}}[6, 3, -1.5, 0.5, 0, 0, -0, 1, 2, 4, 4, -6, 1, 1, 2, 2, 1.5, 0.75, -0.375, 0.125, 0, 0, -0, 0.25, 0.5, 1, 1, -1.5, 0.25, 0.25, 0.5, 0.5]]
// CHECK: {{\[}}[1086324737, 1065353216]]
func.func @nvfp4_default() {
  vector.print str "nvfp4_default\n"
  %x = arith.constant dense<[[6.0, 3.0, -1.5, 0.5, 0.25, 0.2, -0.0, 1.0, 2.0, 4.0, 5.0, -6.0, 0.75, 1.25, 1.75, 2.5,
                              1.5, 0.75, -0.375, 0.125, 0.0625, 0.05, -0.0, 0.25, 0.5, 1.0, 1.25, -1.5, 0.1875, 0.3125, 0.4375, 0.625]]> : tensor<1x32xf32>
  %q = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %c, %s, %g = fp4.unpack %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<1x16xi8>, tensor<1x2xi8>, tensor<f32>
  %sd = tensor.cast %s : tensor<1x2xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %cd = tensor.cast %c : tensor<1x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  call @print_scalar(%g) : (tensor<f32>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<1x32xf32>
  %dd = tensor.cast %d : tensor<1x32xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  %two = tensor.extract_slice %d[0, 0] [1, 2] [1, 7] : tensor<1x32xf32> to tensor<1x2xf32>
  %td = tensor.cast %two : tensor<1x2xf32> to tensor<?x?xf32>
  call @print_bits(%td) : (tensor<?x?xf32>) -> ()
  return
}

// four_over_six: block 0 = [4, 3 x15], block 1 = [4, 1 x15].
//   tensor_amax = 4, g_enc = 256 * 6 / 4 = 384, g_dec = 1/384, k = 64.
//   Map-to-6: s6 = 4 * 64 = 256 (byte 0x78 = 120), enc = 1.5: 4 -> 6 (7),
//   3 -> 4.5 -> 4 (6): 3 decodes to 4 * 256/384 = 2.67, SSE > 0.
//   Map-to-4: s4 = 1.5 * 256 = 384 (byte 0x7C = 124), enc = 1: 4 -> 4 (6),
//   3 -> 3 (5): exact, SSE 0 < SSE6, so block 0 takes 124.
//   Block 1: map-to-6 gives 1 -> 1.5 (3), decoding to exactly 1, SSE 0;
//   map-to-4 is exact too; a tie keeps map-to-6 (120).
// CHECK-LABEL: nvfp4_four_over_six
// CHECK: {{\[}}[124, 120]]
// CHECK: {{\[}}[86, 85, 85, 85, 85, 85, 85, 85, 55, 51, 51, 51, 51, 51, 51, 51]]
// CHECK: {{\[}}[4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]]
func.func @nvfp4_four_over_six() {
  vector.print str "nvfp4_four_over_six\n"
  %x = arith.constant dense<[[4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0,
                              4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<1x32xf32>
  %q = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
  %c, %s, %g = fp4.unpack %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1> -> tensor<1x16xi8>, tensor<1x2xi8>, tensor<f32>
  %sd = tensor.cast %s : tensor<1x2xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %cd = tensor.cast %c : tensor<1x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1> -> tensor<1x32xf32>
  %dd = tensor.cast %d : tensor<1x32xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  return
}

// Non-finite values: block 0 holds a NaN and an Inf -> byte 0x7F (127),
// NaN values; the tensor amax ignores them (2, from block 1), so g_enc =
// 2688 / 2 = 1344 and block 1 (2, -0.5) gets s = 448 (126): 2 -> 6 (7),
// -0.5 -> -1.5 (11), byte 7 | 11 << 4 = 183, decoding back to 2, -0.5.
// An all-zero tensor: g_enc = g_dec = 1, s = 0 (byte 0), codes 0 / 8 by
// sign (bytes 0 | 8 << 4 = 128).
// CHECK-LABEL: nvfp4_special
// CHECK: {{\[}}[127, 126]]
// CHECK: {{\[}}[0, 0, 0, 0, 0, 0, 0, 0, 183, 0, 0, 0, 0, 0, 0, 0]]
// CHECK: {{\[}}[{{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, 2, -0.5, 0, 0]]
// CHECK: {{\[}}[0, 0]]
// CHECK: {{\[}}[128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128]]
// CHECK: {{\[}}[1]]
func.func @nvfp4_special() {
  vector.print str "nvfp4_special\n"
  %x = arith.constant dense<[[1.0, 0x7FC00000, 0.0, 0.0, 0.0, 0x7F800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                              2.0, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %q = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %c, %s, %g = fp4.unpack %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<1x16xi8>, tensor<1x2xi8>, tensor<f32>
  %sd = tensor.cast %s : tensor<1x2xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  // A NaN block's codes are unspecified (numerics.md 3): blank them.
  %cz = arith.constant dense<0> : tensor<1x8xi8>
  %c8 = tensor.insert_slice %cz into %c[0, 0] [1, 8] [1, 1] : tensor<1x8xi8> into tensor<1x16xi8>
  %cd = tensor.cast %c8 : tensor<1x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<1x32xf32>
  %d8 = tensor.extract_slice %d[0, 12] [1, 8] [1, 1] : tensor<1x32xf32> to tensor<1x8xf32>
  %dd = tensor.cast %d8 : tensor<1x8xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()

  %z = arith.constant dense<[[0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0,
                              0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0]]> : tensor<1x32xf32>
  %qz = fp4.quantize %z : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %cz2, %sz, %gz = fp4.unpack %qz : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<1x16xi8>, tensor<1x2xi8>, tensor<f32>
  %szd = tensor.cast %sz : tensor<1x2xi8> to tensor<?x?xi8>
  call @print_bytes(%szd) : (tensor<?x?xi8>) -> ()
  %czd = tensor.cast %cz2 : tensor<1x16xi8> to tensor<?x?xi8>
  call @print_bytes(%czd) : (tensor<?x?xi8>) -> ()
  call @print_scalar(%gz) : (tensor<f32>) -> ()
  return
}

// 16x16 tiles on a [32, 16] weight (two tiles): rows 0 and 16 hold the
// nvfp4_default blocks (tile amax 6 -> 126, 1.5 -> 110), row 5 a 1.0 at
// column 3 and row 20 a 0.5 at column 7. Each tile's byte is repeated in
// its 16 lines; row 5's 1.0 shares tile 0's scale (enc 1: code 2, byte 1
// = 2 << 4 = 32) although its own 1x16 block would have a much finer one,
// and row 20's 0.5 uses tile 1's enc 4 (code 4, byte 3 = 4 << 4 = 64).
// CHECK-LABEL: nvfp4_tile2d
// CHECK: {{\[}}[126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 126, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110]]
// CHECK: {{\[}}[87, 27, 0, 40, 100, 246, 34, 68],
// CHECK-NEXT: [0, 32, 0, 0, 0, 0, 0, 0],
// CHECK-NEXT: [87, 27, 0, 40, 100, 246, 34, 68],
// CHECK-NEXT: [0, 0, 0, 64, 0, 0, 0, 0]]
func.func @nvfp4_tile2d() {
  vector.print str "nvfp4_tile2d\n"
  %z = arith.constant dense<0.0> : tensor<32x16xf32>
  %b = arith.constant dense<[[6.0, 3.0, -1.5, 0.5, 0.25, 0.2, -0.0, 1.0, 2.0, 4.0, 5.0, -6.0, 0.75, 1.25, 1.75, 2.5]]> : tensor<1x16xf32>
  %b4 = arith.constant dense<[[1.5, 0.75, -0.375, 0.125, 0.0625, 0.05, -0.0, 0.25, 0.5, 1.0, 1.25, -1.5, 0.1875, 0.3125, 0.4375, 0.625]]> : tensor<1x16xf32>
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c20 = arith.constant 20 : index
  %x0 = tensor.insert_slice %b into %z[0, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<32x16xf32>
  %x1 = tensor.insert_slice %b4 into %x0[16, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<32x16xf32>
  %x2 = tensor.insert %one into %x1[%c5, %c3] : tensor<32x16xf32>
  %x = tensor.insert %half into %x2[%c20, %c7] : tensor<32x16xf32>
  %q = fp4.quantize %x : tensor<32x16xf32> -> !fp4.tensor<32x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  %c, %s, %g = fp4.unpack %q : !fp4.tensor<32x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> -> tensor<32x8xi8>, tensor<32x1xi8>, tensor<f32>
  %sc = tensor.collapse_shape %s [[0, 1]] : tensor<32x1xi8> into tensor<32xi8>
  %sr = tensor.expand_shape %sc [[0, 1]] output_shape [1, 32] : tensor<32xi8> into tensor<1x32xi8>
  %sd = tensor.cast %sr : tensor<1x32xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %r0 = tensor.extract_slice %c[0, 0] [1, 8] [1, 1] : tensor<32x8xi8> to tensor<1x8xi8>
  %r5 = tensor.extract_slice %c[5, 0] [1, 8] [1, 1] : tensor<32x8xi8> to tensor<1x8xi8>
  %r16 = tensor.extract_slice %c[16, 0] [1, 8] [1, 1] : tensor<32x8xi8> to tensor<1x8xi8>
  %r20 = tensor.extract_slice %c[20, 0] [1, 8] [1, 1] : tensor<32x8xi8> to tensor<1x8xi8>
  %rows = tensor.concat dim(0) %r0, %r5, %r16, %r20 : (tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>, tensor<1x8xi8>) -> tensor<4x8xi8>
  %rd = tensor.cast %rows : tensor<4x8xi8> to tensor<?x?xi8>
  call @print_bytes(%rd) : (tensor<?x?xi8>) -> ()
  return
}

func.func @main() {
  call @nvfp4_default() : () -> ()
  call @nvfp4_four_over_six() : () -> ()
  call @nvfp4_special() : () -> ()
  call @nvfp4_tile2d() : () -> ()
  return
}
