// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// MXFP4 (numerics.md 1-2) run on the CPU. Every expected value below is
// worked out from the spec in the comments; the codes are printed as bytes
// (two E2M1 codes, the lower index in the low nibble), the E8M0 scales as
// bytes and the dequantized values as f32.

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

// Element rounding. amax = 7.5: floor(log2 7.5) - 2 = 0, so X = 1 (byte 127)
// and each code is the E2M1 rounding of x itself:
//   ties to even: 0.25->0 (0), 0.75->1 (2), 1.25->1 (2), 1.75->2 (4),
//   2.5->2 (4), 3.5->4 (6), 5->4 (6), 5.5->6 (7), and negated (code | 8);
//   -0.0 and -0.1 -> code 8; 0.0, 0.1 -> 0; 0.5, 1, 1.5, 2, 3, 4, 6 exact;
//   7.5 saturates to 6 (7), -7.5 to -6 (15); 0.26 -> 0.5 (1);
//   0.74 -> 0.5 (1); -0.26 -> -0.5 (9).
// Bytes: (0 | 2<<4) = 32, (2 | 4<<4) = 66, (4 | 6<<4) = 100, (6 | 7<<4) = 118,
//   (8 | 10<<4) = 168, 202, 236, 254, (8 | 8<<4) = 136, 0, (1 | 2<<4) = 33,
//   67, 101, 119, (15 | 1<<4) = 31, (1 | 9<<4) = 145.
// CHECK-LABEL: rounding
// CHECK: sizes = [1, 1]
// CHECK-NEXT: {{\[}}[127]]
// CHECK: sizes = [1, 16]
// CHECK-NEXT: {{\[}}[32, 66, 100, 118, 168, 202, 236, 254, 136, 0, 33, 67, 101, 119, 31, 145]]
// CHECK: sizes = [1, 32]
// CHECK-NEXT: {{\[}}[0, 1, 1, 2, 2, 4, 4, 6, -0, -1, -1, -2, -2, -4, -4, -6, -0, -0, 0, 0, 0.5, 1, 1.5, 2, 3, 4, 6, 6, -6, 0.5, 0.5, -0.5]]
// half_away (microxcaling): 0.25->0.5 (1), 0.75->1 (2), 1.25->1.5 (3),
// 1.75->2 (4), 2.5->3 (5), 3.5->4 (6), 5->6 (7), 5.5->6 (7), negated likewise.
// CHECK: sizes = [1, 16]
// CHECK-NEXT: {{\[}}[33, 67, 101, 119, 169, 203, 237, 255, 136, 0, 33, 67, 101, 119, 31, 145]]
func.func @rounding() {
  vector.print str "rounding\n"
  %x = arith.constant dense<[[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.5,
                              -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -5.5,
                              -0.0, -0.1, 0.0, 0.1, 0.5, 1.0, 1.5, 2.0,
                              3.0, 4.0, 6.0, 7.5, -7.5, 0.26, 0.74, -0.26]]> : tensor<1x32xf32>
  %q = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %c, %s = fp4.unpack %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x16xi8>, tensor<1x1xi8>
  %sd = tensor.cast %s : tensor<1x1xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %cd = tensor.cast %c : tensor<1x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x32xf32>
  %dd = tensor.cast %d : tensor<1x32xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  %qa = fp4.quantize %x : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<rounding = half_away>, axis = 1>
  %ca, %sa = fp4.unpack %qa : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<rounding = half_away>, axis = 1> -> tensor<1x16xi8>, tensor<1x1xi8>
  %cad = tensor.cast %ca : tensor<1x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cad) : (tensor<?x?xi8>) -> ()
  return
}

// Special blocks (one per row, other elements 0):
//  0: a NaN          -> byte 0xFF (255), every value NaN
//  1: +Inf           -> 255, NaN values
//  2: -Inf           -> 255
//  3: zeros and -0s  -> byte 0; codes 0 / 8 by sign: bytes 0 | 8<<4 = 128
//  4: amax = 2^-125  -> e = -125 - 2 = -127, byte 0 (X = 2^-127, subnormal):
//     2^-125 -> 4 (6), 3*2^-127 -> 3 (5), -2^-127 -> -1 (10),
//     2^-129 -> 0.25 -> 0 (0), -1.5*2^-129 -> -0.375 -> -0.5 (9);
//     bytes 6 | 5<<4 = 86, 10, 9; values 2^-125, 3*2^-127, -2^-127, 0, -2^-128
//  5: amax = 2^-130 (subnormal) -> e clamps to -127, byte 0; 2^-130 -> 0.125
//     -> 0 (0); -2^-131 -> -0 (8); bytes 0 | 8<<4 = 128
//  6: amax = FLT_MAX -> e = 127 - 2 = 125, byte 252: FLT_MAX / 2^125 = 7.99
//     saturates to 6 (7), 2^126 -> 2 (4), -1.5*2^125 -> -1.5 (11), 1 -> 0;
//     bytes 7 | 4<<4 = 71, 11; values 6*2^125, 2^126, -1.5*2^125, 0
// CHECK-LABEL: special_blocks
// CHECK: sizes = [7, 1]
// CHECK-NEXT: {{\[}}[255],
// CHECK-NEXT: [255],
// CHECK-NEXT: [255],
// CHECK-NEXT: [0],
// CHECK-NEXT: [0],
// CHECK-NEXT: [0],
// CHECK-NEXT: [252]]
// CHECK: sizes = [4, 4]
// CHECK-NEXT: {{\[}}[128, 128, 128, 128],
// CHECK-NEXT: [86, 10, 9, 0],
// CHECK-NEXT: [128, 0, 0, 0],
// CHECK-NEXT: [71, 11, 0, 0]]
// CHECK: sizes = [7, 6]
// CHECK-NEXT: {{\[}}[nan, nan, nan, nan, nan, nan],
// CHECK-NEXT: [nan, nan, nan, nan, nan, nan],
// CHECK-NEXT: [nan, nan, nan, nan, nan, nan],
// CHECK-NEXT: [0, -0, 0, -0, 0, -0],
// CHECK-NEXT: [2.35099e-38, 1.76324e-38, -5.87747e-39, 0, -2.93874e-39, 0],
// CHECK-NEXT: [0, -0, 0, 0, 0, 0],
// CHECK-NEXT: [2.55212e+38, 8.50706e+37, -6.38029e+37, 0, 0, 0]]
func.func @special_blocks() {
  vector.print str "special_blocks\n"
  %z = arith.constant dense<0.0> : tensor<7x32xf32>
  %vals = arith.constant dense<[
      [1.0, 0x7FC00000, -2.0, 0.0, 0.0, 0.0],
      [0x7F800000, 0.0, 0.0, 0.0, 0.0, 3.0],
      [0.0, 0.0, 0.0, 0xFF800000, 0.0, 0.0],
      [0.0, -0.0, 0.0, -0.0, 0.0, -0.0],
      [0x01000000, 0x00C00000, 0x80400000, 0x00100000, 0x80180000, 0.0],
      [0x00080000, 0x80040000, 0.0, 0.0, 0.0, 0.0],
      [0x7F7FFFFF, 0x7E800000, 0xFE400000, 1.0, 0.0, 0.0]]> : tensor<7x6xf32>
  %x0 = tensor.insert_slice %vals into %z[0, 0] [7, 6] [1, 1] : tensor<7x6xf32> into tensor<7x32xf32>
  // Row 3: the remaining 26 elements alternate 0 / -0 as well.
  %x = call @alternate_zeros(%x0) : (tensor<7x32xf32>) -> tensor<7x32xf32>
  %q = fp4.quantize %x : tensor<7x32xf32> -> !fp4.tensor<7x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %c, %s = fp4.unpack %q : !fp4.tensor<7x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<7x16xi8>, tensor<7x1xi8>
  %sd = tensor.cast %s : tensor<7x1xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %c4 = tensor.extract_slice %c[3, 0] [4, 4] [1, 1] : tensor<7x16xi8> to tensor<4x4xi8>
  %cd = tensor.cast %c4 : tensor<4x4xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<7x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<7x32xf32>
  %d6 = tensor.extract_slice %d[0, 0] [7, 6] [1, 1] : tensor<7x32xf32> to tensor<7x6xf32>
  %dd = tensor.cast %d6 : tensor<7x6xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  return
}

// Row 3 of the special blocks: x[3, j] = -0.0 for odd j.
func.func @alternate_zeros(%x: tensor<7x32xf32>) -> tensor<7x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%x : tensor<7x32xf32>) {
  ^bb0(%v: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %odd = arith.andi %j, %c1 : index
    %isrow = arith.cmpi eq, %i, %c3 : index
    %isodd = arith.cmpi eq, %odd, %c1 : index
    %both = arith.andi %isrow, %isodd : i1
    %m0 = arith.constant -0.0 : f32
    %o = arith.select %both, %m0, %v : f32
    linalg.yield %o : f32
  } -> tensor<7x32xf32>
  return %r : tensor<7x32xf32>
}

// The four scale rules at their boundaries. Row amax (other elements 0):
// 7.0 = 1.75 * 2^2, 6.0 = 1.5 * 2^2, 6.0000005 (next float), 4.0, FLT_MAX.
//   floor: e = floor(log2 amax) - 2      -> 0, 0, 0, 0, 125
//   ceil:  e = ceil(log2 amax) - 2       -> 1, 1, 1, 0, 126
//   even:  +1 iff amax / 2^floor >= 1.75 -> 1, 0, 0, 0, 126
//   rceil: e = ceil(log2(amax / 6))      -> 1, 0, 1, 0, 126
// Bytes e + 127. The amax element's value: with e = 0, 7 clips to 6, 6 and
// 6.0000005 -> 6, 4 -> 4; with e = 1, 7 / 2 = 3.5 -> 4 (tie to even) -> 8,
// 6 / 2 = 3 -> 6, 6.0000005 / 2 -> 3 -> 6; FLT_MAX: e = 125 clips to
// 6 * 2^125, e = 126 rounds 3.99999976 up to 4 and 4 * 2^126 = 2^128
// overflows to inf (the IEEE rounding of the exact value, numerics.md 2).
// CHECK-LABEL: scale_rules
// CHECK: {{\[}}[127, 127, 127, 127, 252]]
// CHECK: {{\[}}[6, 6, 6, 4, 2.55212e+38]]
// CHECK: {{\[}}[128, 128, 128, 127, 253]]
// CHECK: {{\[}}[8, 6, 6, 4, inf]]
// CHECK: {{\[}}[128, 127, 127, 127, 253]]
// CHECK: {{\[}}[8, 6, 6, 4, inf]]
// CHECK: {{\[}}[128, 127, 128, 127, 253]]
// CHECK: {{\[}}[8, 6, 6, 4, inf]]
func.func @scale_rules() {
  vector.print str "scale_rules\n"
  %z = arith.constant dense<0.0> : tensor<5x32xf32>
  %amax = arith.constant dense<[[7.0], [6.0], [0x40C00001], [4.0], [0x7F7FFFFF]]> : tensor<5x1xf32>
  %x = tensor.insert_slice %amax into %z[0, 0] [5, 1] [1, 1] : tensor<5x1xf32> into tensor<5x32xf32>
  %q0 = fp4.quantize %x : tensor<5x32xf32> -> !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  call @print_rule_floor(%q0) : (!fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> ()
  %q1 = fp4.quantize %x : tensor<5x32xf32> -> !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil>, axis = 1>
  %c1, %s1 = fp4.unpack %q1 : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil>, axis = 1> -> tensor<5x16xi8>, tensor<5x1xi8>
  %d1 = fp4.dequantize %q1 : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil>, axis = 1> -> tensor<5x32xf32>
  call @print_column(%s1, %d1) : (tensor<5x1xi8>, tensor<5x32xf32>) -> ()
  %q2 = fp4.quantize %x : tensor<5x32xf32> -> !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  %c2, %s2 = fp4.unpack %q2 : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1> -> tensor<5x16xi8>, tensor<5x1xi8>
  %d2 = fp4.dequantize %q2 : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1> -> tensor<5x32xf32>
  call @print_column(%s2, %d2) : (tensor<5x1xi8>, tensor<5x32xf32>) -> ()
  %q3 = fp4.quantize %x : tensor<5x32xf32> -> !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
  %c3, %s3 = fp4.unpack %q3 : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1> -> tensor<5x16xi8>, tensor<5x1xi8>
  %d3 = fp4.dequantize %q3 : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1> -> tensor<5x32xf32>
  call @print_column(%s3, %d3) : (tensor<5x1xi8>, tensor<5x32xf32>) -> ()
  return
}

// A function taking a quantized tensor (its components at run time).
func.func @print_rule_floor(%q: !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  %c, %s = fp4.unpack %q : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<5x16xi8>, tensor<5x1xi8>
  %d = fp4.dequantize %q : !fp4.tensor<5x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<5x32xf32>
  call @print_column(%s, %d) : (tensor<5x1xi8>, tensor<5x32xf32>) -> ()
  return
}

// Prints the scales and the dequantized first column, each as one row.
func.func @print_column(%s: tensor<5x1xi8>, %d: tensor<5x32xf32>) {
  %st = tensor.collapse_shape %s [[0, 1]] : tensor<5x1xi8> into tensor<5xi8>
  %sr = tensor.expand_shape %st [[0, 1]] output_shape [1, 5] : tensor<5xi8> into tensor<1x5xi8>
  %sd = tensor.cast %sr : tensor<1x5xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %col = tensor.extract_slice %d[0, 0] [5, 1] [1, 1] : tensor<5x32xf32> to tensor<5x1xf32>
  %ct = tensor.collapse_shape %col [[0, 1]] : tensor<5x1xf32> into tensor<5xf32>
  %cr = tensor.expand_shape %ct [[0, 1]] output_shape [1, 5] : tensor<5xf32> into tensor<1x5xf32>
  %cd = tensor.cast %cr : tensor<1x5xf32> to tensor<?x?xf32>
  call @print_f32(%cd) : (tensor<?x?xf32>) -> ()
  return
}

// Stochastic rounding: x = [6, 0.25 x7, 1.25 x8, 5 x8, -0.75 x8], X = 1, so
// every element but the first lies exactly halfway between two grid points
// (p = 1/2). The bits of element i are counterRandom(seed, i) (numerics.md
// 1, CounterRandom.h), so the bytes are a pure function of (seed, index):
// the expected bytes below are the C++ reference's (Reference.h) for the
// same seed. A second row (indices 32..63) of the same values rounds
// differently, and a different seed gives a different pattern; the 6 on
// the grid never moves, and every value is one of its two neighbours.
// CHECK-LABEL: stochastic
// CHECK: {{\[}}[7, 17, 1, 0, 34, 34, 34, 51, 103, 119, 102, 103, 154, 170, 170, 169],
// CHECK-NEXT: [7, 0, 0, 1, 51, 51, 34, 50, 102, 103, 118, 102, 169, 170, 170, 153]]
// CHECK: {{\[}}[6, 0, 0.5, 0.5, 0.5, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1.5, 1.5, 6, 4, 6, 6, 4, 4, 6, 4, -1, -0.5, -1, -1, -1, -1, -0.5, -1],
// CHECK: {{\[}}[7, 16, 17, 16, 34, 35, 35, 51, 118, 102, 118, 118, 170, 153, 153, 170],
func.func @stochastic() {
  vector.print str "stochastic\n"
  %x = arith.constant dense<[[6.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                              1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25,
                              5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0,
                              -0.75, -0.75, -0.75, -0.75, -0.75, -0.75, -0.75, -0.75],
                             [6.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                              1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25,
                              5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0,
                              -0.75, -0.75, -0.75, -0.75, -0.75, -0.75, -0.75, -0.75]]> : tensor<2x32xf32>
  %q = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 1>, axis = 1>
  %c, %s = fp4.unpack %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 1>, axis = 1> -> tensor<2x16xi8>, tensor<2x1xi8>
  %cd = tensor.cast %c : tensor<2x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 1>, axis = 1> -> tensor<2x32xf32>
  %dd = tensor.cast %d : tensor<2x32xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  %q2 = fp4.quantize %x : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 2>, axis = 1>
  %c2, %s2 = fp4.unpack %q2 : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 2>, axis = 1> -> tensor<2x16xi8>, tensor<2x1xi8>
  %c2d = tensor.cast %c2 : tensor<2x16xi8> to tensor<?x?xi8>
  call @print_bytes(%c2d) : (tensor<?x?xi8>) -> ()
  return
}

// Blocked along axis 0 with a dynamic second dimension: column 0 is the
// rounding vector above, column 1 is -4 times it (amax 30 -> e = 2, byte
// 129, and x / 4 is the negated vector, so every code has its sign flipped:
// byte ^ 0x88). Codes pair up along the axis: codes[i, j] holds elements
// (2i, j) and (2i+1, j).
// CHECK-LABEL: axis0_dynamic
// CHECK: {{\[}}[127, 129]]
// CHECK: {{\[}}[32, 168],
// CHECK-NEXT: [66, 202],
// CHECK-NEXT: [100, 236],
// CHECK-NEXT: [118, 254],
// CHECK-NEXT: [168, 32],
// CHECK-NEXT: [202, 66],
// CHECK-NEXT: [236, 100],
// CHECK-NEXT: [254, 118],
// CHECK-NEXT: [136, 0],
// CHECK-NEXT: [0, 136],
// CHECK-NEXT: [33, 169],
// CHECK-NEXT: [67, 203],
// CHECK-NEXT: [101, 237],
// CHECK-NEXT: [119, 255],
// CHECK-NEXT: [31, 151],
// CHECK-NEXT: [145, 25]]
// CHECK: {{\[}}[0, 1, 1, 2, 2, 4, 4, 6, -0, -1, -1, -2, -2, -4, -4, -6, -0, -0, 0, 0, 0.5, 1, 1.5, 2, 3, 4, 6, 6, -6, 0.5, 0.5, -0.5],
// CHECK-NEXT: [-0, -4, -4, -8, -8, -16, -16, -24, 0, 4, 4, 8, 8, 16, 16, 24, 0, 0, -0, -0, -2, -4, -6, -8, -12, -16, -24, -24, 24, -2, -2, 2]]
func.func @quantize_axis0(%x: tensor<32x?xf32>) -> !fp4.tensor<32x?xf4E2M1FN, #fp4.mxfp4, axis = 0> {
  %q = fp4.quantize %x : tensor<32x?xf32> -> !fp4.tensor<32x?xf4E2M1FN, #fp4.mxfp4, axis = 0>
  return %q : !fp4.tensor<32x?xf4E2M1FN, #fp4.mxfp4, axis = 0>
}

func.func @axis0_dynamic() {
  vector.print str "axis0_dynamic\n"
  %v = arith.constant dense<[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.5,
                             -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -5.5,
                             -0.0, -0.1, 0.0, 0.1, 0.5, 1.0, 1.5, 2.0,
                             3.0, 4.0, 6.0, 7.5, -7.5, 0.26, 0.74, -0.26]> : tensor<32xf32>
  %e = tensor.empty() : tensor<32x2xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<32xf32>) outs(%e : tensor<32x2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %j = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %j, %c0 : index
    %m4 = arith.constant -4.0 : f32
    %s = arith.mulf %a, %m4 : f32
    %r = arith.select %first, %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<32x2xf32>
  %xd = tensor.cast %x : tensor<32x2xf32> to tensor<32x?xf32>
  %q = call @quantize_axis0(%xd) : (tensor<32x?xf32>) -> !fp4.tensor<32x?xf4E2M1FN, #fp4.mxfp4, axis = 0>
  %c, %s = fp4.unpack %q : !fp4.tensor<32x?xf4E2M1FN, #fp4.mxfp4, axis = 0> -> tensor<16x?xi8>, tensor<1x?xi8>
  %sd = tensor.cast %s : tensor<1x?xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %cd = tensor.cast %c : tensor<16x?xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<32x?xf4E2M1FN, #fp4.mxfp4, axis = 0> -> tensor<32x?xf32>
  %ds = tensor.cast %d : tensor<32x?xf32> to tensor<32x2xf32>
  %te = tensor.empty() : tensor<2x32xf32>
  %t = linalg.transpose ins(%ds : tensor<32x2xf32>) outs(%te : tensor<2x32xf32>) permutation = [1, 0]
  %td = tensor.cast %t : tensor<2x32xf32> to tensor<?x?xf32>
  call @print_f32(%td) : (tensor<?x?xf32>) -> ()
  return
}

func.func @main() {
  call @rounding() : () -> ()
  call @special_blocks() : () -> ()
  call @scale_rules() : () -> ()
  call @stochastic() : () -> ()
  call @axis0_dynamic() : () -> ()
  return
}
