// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// HiF4 (numerics.md 4) on the CPU: one 64-element group per row, metadata
// printed as the i32 word (bits 0-7 E6M2 byte, 8-15 level-2 bits, 16-31
// level-3 bits), codes as bytes (sign << 3 | k, value k/4).

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

func.func @print_i32(%t: tensor<?x?xi32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// Row 0: 8-blocks [7 6 5 4 | 0.3 0.1 -0.2 0.5], [1 1.5 -2 2.5 | 3 3.5 -3.75
// 0.75], [0.25 0.125 0.375 -0.625 | 0.875 0 -0 0.1875], then zeros.
//   m64 = 7: sf = bf16(7 * bf16(1/7) = 0.998046875) = 1 (tie to even),
//   E6M2 1.0 = byte (0 + 48) << 2 = 192; rec = 1.
//   8-block 0: m8 = 7 >= 4 -> l2 = 2 (bit 8). 4-block 0: 7/2 >= 2 -> l3 = 2
//   (bit 16), scale 4: t = |x| -> 7 6 5 4 (values 7 6 5 4). 4-block 1:
//   0.5/2 < 2 -> l3 = 1, scale 2: t = 2|x| = 0.6 0.2 0.4 1 -> k = 1 0 0 1
//   (half up) -> codes 1 0 8 1, values 0.5 0 -0 0.5.
//   8-block 1: m8 = 3.75 < 4 -> l2 = 1; both 4-blocks l3 = 2 (bits 18, 19),
//   scale 2: t = 2|x| = 2 3 4 5 | 6 7 7.5 1.5 -> k = 2 3 4 5 | 6 7 8->7 2:
//   codes 2 3 12 5 | 6 7 15 2, values 1 1.5 -2 2.5 | 3 3.5 -3.5 1.
//   8-block 2: l2 = l3 = 1, t = 4|x| = 1 0.5 1.5 2.5 | 3.5 0 0 0.75 -> k =
//   1 1 2 3 | 4 0 0 1 (ties go up): codes 1 1 2 11 | 4 0 8 1.
//   Word: 192 | 1<<8 | 1<<16 | 1<<18 | 1<<19 = 852416.
//   Bytes: 7|6<<4 = 103, 69, 1, 8|1<<4 = 24, 50, 92, 118, 47, 17, 178, 4, 24.
// Row 1: a NaN -> word 0xFF = 255, NaN values.
// Row 2: zeros and -0s -> word 0 (sf clamps to 2^-48, E6M2 byte 0), codes 0
//   / 8 by sign (bytes 128).
// Row 3: [1e6, -2, 30000, 0, ...]: sf = bf16(142578.125) clamps to 49152 =
//   1.5 * 2^15: byte (15 + 48) << 2 | 2 = 254; l2 = l3 = 2 on the first
//   blocks (bits 8, 16): word 254 | 256 | 65536 = 66046. 1e6 saturates to
//   k = 7: 1.75 * 4 * 49152 = 344064; -2 -> -0 (code 8); 30000 * rec = 0.61
//   -> k = 1: 0.25 * 4 * 49152 = 49152. Bytes 7 | 8<<4 = 135, 1.
// CHECK-LABEL: hif4
// CHECK: {{\[}}[852416],
// CHECK-NEXT: [255],
// CHECK-NEXT: [0],
// CHECK-NEXT: [66046]]
// CHECK: {{\[}}[103, 69, 1, 24, 50, 92, 118, 47, 17, 178, 4, 24, 0, 0],
// CHECK-NEXT: [128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128],
// CHECK-NEXT: [135, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
// CHECK: {{\[}}[7, 6, 5, 4, 0.5, 0, -0, 0.5, 1, 1.5, -2, 2.5, 3, 3.5, -3.5, 1, 0.25, 0.25, 0.5, -0.75, 1, 0, -0, 0.25, 0, 0],
// CHECK-NEXT: [{{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan, {{-?}}nan],
// CHECK-NEXT: [0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0, 0, -0],
// CHECK-NEXT: [344064, -0, 49152, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
func.func @hif4() {
  vector.print str "hif4\n"
  %z = arith.constant dense<0.0> : tensor<4x64xf32>
  %v = arith.constant dense<[
      [7.0, 6.0, 5.0, 4.0, 0.3, 0.1, -0.2, 0.5, 1.0, 1.5, -2.0, 2.5, 3.0, 3.5, -3.75, 0.75,
       0.25, 0.125, 0.375, -0.625, 0.875, 0.0, -0.0, 0.1875],
      [1.0, 0x7FC00000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
       0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
      [0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0,
       0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0],
      [1.0e6, -2.0, 30000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
       0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<4x24xf32>
  %x0 = tensor.insert_slice %v into %z[0, 0] [4, 24] [1, 1] : tensor<4x24xf32> into tensor<4x64xf32>
  // Row 2 continues with 0 / -0 pairs.
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%x0 : tensor<4x64xf32>) {
  ^bb0(%a: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %odd = arith.andi %j, %c1 : index
    %row2 = arith.cmpi eq, %i, %c2 : index
    %isodd = arith.cmpi eq, %odd, %c1 : index
    %both = arith.andi %row2, %isodd : i1
    %m0 = arith.constant -0.0 : f32
    %r = arith.select %both, %m0, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  %c, %m = fp4.unpack %q : !fp4.tensor<4x64x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<4x32xi8>, tensor<4x1xi32>
  %md = tensor.cast %m : tensor<4x1xi32> to tensor<?x?xi32>
  call @print_i32(%md) : (tensor<?x?xi32>) -> ()
  // Row 1's codes are unspecified (NaN group): print rows 0, 2, 3.
  %r0 = tensor.extract_slice %c[0, 0] [1, 14] [1, 1] : tensor<4x32xi8> to tensor<1x14xi8>
  %r23 = tensor.extract_slice %c[2, 0] [2, 14] [1, 1] : tensor<4x32xi8> to tensor<2x14xi8>
  %rows = tensor.concat dim(0) %r0, %r23 : (tensor<1x14xi8>, tensor<2x14xi8>) -> tensor<3x14xi8>
  %cd = tensor.cast %rows : tensor<3x14xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<4x64x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<4x64xf32>
  %d26 = tensor.extract_slice %d[0, 0] [4, 26] [1, 1] : tensor<4x64xf32> to tensor<4x26xf32>
  %dd = tensor.cast %d26 : tensor<4x26xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  return
}

// The same group blocked along axis 0 of a [64, 2] tensor (column 1 is
// column 0 doubled: bf16(14 * bf16(1/7)) = 1.99609375 rounds to the E6M2
// value 2, byte 196, rec = 0.5: the same level bits and codes, values
// doubled): metadata [1, 2], codes pair up rows.
// CHECK-LABEL: hif4_axis0
// CHECK: {{\[}}[852416, 852420]]
// CHECK: {{\[}}[103, 103],
// CHECK-NEXT: [69, 69],
// CHECK-NEXT: [1, 1],
// CHECK-NEXT: [24, 24]]
// CHECK: {{\[}}[7, 6, 5, 4, 0.5, 0, -0, 0.5, 1, 1.5, -2, 2.5, 3, 3.5, -3.5, 1],
// CHECK-NEXT: [14, 12, 10, 8, 1, 0, -0, 1, 2, 3, -4, 5, 6, 7, -7, 2]]
func.func @hif4_axis0() {
  vector.print str "hif4_axis0\n"
  %v = arith.constant dense<[7.0, 6.0, 5.0, 4.0, 0.3, 0.1, -0.2, 0.5, 1.0, 1.5, -2.0, 2.5, 3.0, 3.5, -3.75, 0.75,
                             0.25, 0.125, 0.375, -0.625, 0.875, 0.0, -0.0, 0.1875]> : tensor<24xf32>
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %col = tensor.insert_slice %v into %z[0] [24] [1] : tensor<24xf32> into tensor<64xf32>
  %e = tensor.empty() : tensor<64x2xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%col : tensor<64xf32>) outs(%e : tensor<64x2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %j = linalg.index 1 : index
    %jf = arith.index_cast %j : index to i32
    %one = arith.constant 1 : i32
    %f = arith.addi %jf, %one : i32
    %ff = arith.sitofp %f : i32 to f32
    %r = arith.mulf %a, %ff : f32
    linalg.yield %r : f32
  } -> tensor<64x2xf32>
  %q = fp4.quantize %x : tensor<64x2xf32> -> !fp4.tensor<64x2x!fp4.s1p2, #fp4.hif4, axis = 0>
  %c, %m = fp4.unpack %q : !fp4.tensor<64x2x!fp4.s1p2, #fp4.hif4, axis = 0> -> tensor<32x2xi8>, tensor<1x2xi32>
  %md = tensor.cast %m : tensor<1x2xi32> to tensor<?x?xi32>
  call @print_i32(%md) : (tensor<?x?xi32>) -> ()
  %c4 = tensor.extract_slice %c[0, 0] [4, 2] [1, 1] : tensor<32x2xi8> to tensor<4x2xi8>
  %cd = tensor.cast %c4 : tensor<4x2xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<64x2x!fp4.s1p2, #fp4.hif4, axis = 0> -> tensor<64x2xf32>
  %d16 = tensor.extract_slice %d[0, 0] [16, 2] [1, 1] : tensor<64x2xf32> to tensor<16x2xf32>
  %te = tensor.empty() : tensor<2x16xf32>
  %t = linalg.transpose ins(%d16 : tensor<16x2xf32>) outs(%te : tensor<2x16xf32>) permutation = [1, 0]
  %td = tensor.cast %t : tensor<2x16xf32> to tensor<?x?xf32>
  call @print_f32(%td) : (tensor<?x?xf32>) -> ()
  return
}

func.func @main() {
  call @hif4() : () -> ()
  call @hif4_axis0() : () -> ()
  return
}
