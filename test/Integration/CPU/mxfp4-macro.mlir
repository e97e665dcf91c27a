// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// Macro-block-scaled MXFP4 (numerics.md 5) on the CPU, macro blocks of 64:
// E8M0 bytes per 32, one bf16 factor m in [1, 2) per macro block (printed
// as its bf16 bits), x' = (e2m1 * 2^e) * m.

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

func.func @print_bf16_bits(%t: tensor<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %t, %c0 : tensor<?x?xbf16>
  %d1 = tensor.dim %t, %c1 : tensor<?x?xbf16>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xi32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<?x?xbf16>) outs(%e : tensor<?x?xi32>) {
  ^bb0(%a: bf16, %b: i32):
    %h = arith.bitcast %a : bf16 to i16
    %z = arith.extui %h : i16 to i32
    linalg.yield %z : i32
  } -> tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// Default factor. Macro block 0: amax 5.25, 5.25 / 6 = 0.875 = 1.75 * 2^-1,
// so m = 1.75 (bf16 0x3FE0 = 16352). Block a = [5.25, 3.5, 1.75, -0.875,
// 0.4375, 0, ...]: y = x / m = [3, 2, 1, -0.5, 0.25]: amax 3, e = -1 (126),
// y / 2^-1 = 6 4 2 -1 0.5 -> codes 7 6 4 10 1 (bytes 103, 164, 1), decoding
// exactly back to x. Block b = [0.7, -0.35]: y = 0.4, -0.2: e = -4 (123),
// y * 16 = 6.4 -> 6 (7), -3.2 -> -3 (13): byte 215; values 6/16 * 1.75 =
// 0.65625, -3/16 * 1.75 = -0.328125.
// Macro block 1: amax 11.99, 11.99 / 6 = 1.998 rounds to bf16 2.0, which
// becomes m = 1 (16256): plain MXFP4: e = 1 (128), 11.99 / 2 -> 6 (7),
// value 12; block [1, -3]: e = -1 (126), codes 4, 15 (byte 244).
// CHECK-LABEL: macro_default
// CHECK: {{\[}}[126, 123, 128, 126]]
// CHECK: {{\[}}[103, 164, 1, 215, 7, 244]]
// CHECK: {{\[}}[16352, 16256]]
// CHECK: {{\[}}[5.25, 3.5, 1.75, -0.875, 0.4375, 0, 0.65625, -0.328125, 12, 0, 1, -3]]
func.func @macro_default() {
  vector.print str "macro_default\n"
  %x = call @macro_input() : () -> tensor<1x128xf32>
  %q = fp4.quantize %x : tensor<1x128xf32> -> !fp4.tensor<1x128xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  %c, %s, %f = fp4.unpack %q : !fp4.tensor<1x128xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> -> tensor<1x64xi8>, tensor<1x4xi8>, tensor<1x2xbf16>
  %sd = tensor.cast %s : tensor<1x4xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %c0 = tensor.extract_slice %c[0, 0] [1, 3] [1, 1] : tensor<1x64xi8> to tensor<1x3xi8>
  %c16 = tensor.extract_slice %c[0, 16] [1, 1] [1, 1] : tensor<1x64xi8> to tensor<1x1xi8>
  %c32 = tensor.extract_slice %c[0, 32] [1, 1] [1, 1] : tensor<1x64xi8> to tensor<1x1xi8>
  %c48 = tensor.extract_slice %c[0, 48] [1, 1] [1, 1] : tensor<1x64xi8> to tensor<1x1xi8>
  %cs = tensor.concat dim(1) %c0, %c16, %c32, %c48 : (tensor<1x3xi8>, tensor<1x1xi8>, tensor<1x1xi8>, tensor<1x1xi8>) -> tensor<1x6xi8>
  %cd = tensor.cast %cs : tensor<1x6xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %fd = tensor.cast %f : tensor<1x2xbf16> to tensor<?x?xbf16>
  call @print_bf16_bits(%fd) : (tensor<?x?xbf16>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<1x128xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> -> tensor<1x128xf32>
  %d0 = tensor.extract_slice %d[0, 0] [1, 6] [1, 1] : tensor<1x128xf32> to tensor<1x6xf32>
  %d32 = tensor.extract_slice %d[0, 32] [1, 2] [1, 1] : tensor<1x128xf32> to tensor<1x2xf32>
  %d64 = tensor.extract_slice %d[0, 64] [1, 2] [1, 1] : tensor<1x128xf32> to tensor<1x2xf32>
  %d96 = tensor.extract_slice %d[0, 96] [1, 2] [1, 1] : tensor<1x128xf32> to tensor<1x2xf32>
  %ds = tensor.concat dim(1) %d0, %d32, %d64, %d96 : (tensor<1x6xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x12xf32>
  %dd = tensor.cast %ds : tensor<1x12xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  return
}

func.func @macro_input() -> tensor<1x128xf32> {
  %z = arith.constant dense<0.0> : tensor<1x128xf32>
  %a = arith.constant dense<[[5.25, 3.5, 1.75, -0.875, 0.4375, 0.0]]> : tensor<1x6xf32>
  %b = arith.constant dense<[[0.7, -0.35]]> : tensor<1x2xf32>
  %c = arith.constant dense<[[11.99]]> : tensor<1x1xf32>
  %d = arith.constant dense<[[1.0, -3.0]]> : tensor<1x2xf32>
  %x0 = tensor.insert_slice %a into %z[0, 0] [1, 6] [1, 1] : tensor<1x6xf32> into tensor<1x128xf32>
  %x1 = tensor.insert_slice %b into %x0[0, 32] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x128xf32>
  %x2 = tensor.insert_slice %c into %x1[0, 64] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<1x128xf32>
  %x3 = tensor.insert_slice %d into %x2[0, 96] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x128xf32>
  return %x3 : tensor<1x128xf32>
}

// search = 4 on x = [5, 2.5, -1.25, 0.625, 0...] ++ [1.875, -0.3125, 0...]
// (one macro block): the candidates are m = 1, 1.25, 1.5, 1.75. With
// m = 1.25 every y is on the grid (y = 4 2 -1 0.5 with e = 0, byte 127,
// codes 6 4 10 1 -> bytes 70, 26; y = 1.5 -0.25 with e = -2, byte 125,
// codes 7 10 -> byte 167): zero error, so j = 1 wins (bf16 1.25 = 16288)
// and x is reproduced exactly.
// The default factor on the same data is bf16(significand(5/6)) =
// 1.6640625 (16341): y = 3.005 -> e = -1: codes 7 5 | 11 2 (bytes 87, 43),
// block b e = -2: codes 6 10 (166); values (e2m1 * 2^e) * m = 4.99219,
// 2.49609, -1.24805, 0.832031, 1.66406, -0.416016.
// CHECK-LABEL: macro_search
// CHECK: {{\[}}[127, 125]]
// CHECK: {{\[}}[70, 26, 167]]
// CHECK: {{\[}}[16288]]
// CHECK: {{\[}}[5, 2.5, -1.25, 0.625, 1.875, -0.3125]]
// CHECK: {{\[}}[126, 125]]
// CHECK: {{\[}}[87, 43, 166]]
// CHECK: {{\[}}[16341]]
// CHECK: {{\[}}[4.99219, 2.49609, -1.24805, 0.832031, 1.66406, -0.416016]]
func.func @macro_search() {
  vector.print str "macro_search\n"
  %z = arith.constant dense<0.0> : tensor<1x64xf32>
  %a = arith.constant dense<[[5.0, 2.5, -1.25, 0.625]]> : tensor<1x4xf32>
  %b = arith.constant dense<[[1.875, -0.3125]]> : tensor<1x2xf32>
  %x0 = tensor.insert_slice %a into %z[0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<1x64xf32>
  %x = tensor.insert_slice %b into %x0[0, 32] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x64xf32>
  %q = fp4.quantize %x : tensor<1x64xf32> -> !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 4>, axis = 1>
  %c, %s, %f = fp4.unpack %q : !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 4>, axis = 1> -> tensor<1x32xi8>, tensor<1x2xi8>, tensor<1x1xbf16>
  %d = fp4.dequantize %q : !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64, search = 4>, axis = 1> -> tensor<1x64xf32>
  call @print_macro(%c, %s, %f, %d) : (tensor<1x32xi8>, tensor<1x2xi8>, tensor<1x1xbf16>, tensor<1x64xf32>) -> ()
  %q2 = fp4.quantize %x : tensor<1x64xf32> -> !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  %c2, %s2, %f2 = fp4.unpack %q2 : !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> -> tensor<1x32xi8>, tensor<1x2xi8>, tensor<1x1xbf16>
  %d2 = fp4.dequantize %q2 : !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> -> tensor<1x64xf32>
  call @print_macro(%c2, %s2, %f2, %d2) : (tensor<1x32xi8>, tensor<1x2xi8>, tensor<1x1xbf16>, tensor<1x64xf32>) -> ()
  return
}

func.func @print_macro(%c: tensor<1x32xi8>, %s: tensor<1x2xi8>, %f: tensor<1x1xbf16>, %d: tensor<1x64xf32>) {
  %sd = tensor.cast %s : tensor<1x2xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %c0 = tensor.extract_slice %c[0, 0] [1, 2] [1, 1] : tensor<1x32xi8> to tensor<1x2xi8>
  %c16 = tensor.extract_slice %c[0, 16] [1, 1] [1, 1] : tensor<1x32xi8> to tensor<1x1xi8>
  %cs = tensor.concat dim(1) %c0, %c16 : (tensor<1x2xi8>, tensor<1x1xi8>) -> tensor<1x3xi8>
  %cd = tensor.cast %cs : tensor<1x3xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %fd = tensor.cast %f : tensor<1x1xbf16> to tensor<?x?xbf16>
  call @print_bf16_bits(%fd) : (tensor<?x?xbf16>) -> ()
  %d0 = tensor.extract_slice %d[0, 0] [1, 4] [1, 1] : tensor<1x64xf32> to tensor<1x4xf32>
  %d32 = tensor.extract_slice %d[0, 32] [1, 2] [1, 1] : tensor<1x64xf32> to tensor<1x2xf32>
  %ds = tensor.concat dim(1) %d0, %d32 : (tensor<1x4xf32>, tensor<1x2xf32>) -> tensor<1x6xf32>
  %dd = tensor.cast %ds : tensor<1x6xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()
  return
}

func.func @main() {
  call @macro_default() : () -> ()
  call @macro_search() : () -> ()
  return
}
