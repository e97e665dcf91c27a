// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// The boundaries a caller sees: a function over memrefs writing the
// components in place (the JIT ABI), functions taking and returning
// quantized tensors with a dynamic dimension and f16 input, fp4.pack of
// hand-written component bytes (the decode direction of docs/ABI.md), and a
// dense_resource weight.

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


// The MXFP4 "rounding" vector (see mxfp4.mlir) and the same vector / 4:
// identical codes, scales 127 and 125; every value is exact in bf16.
func.func @quantize_abi(%in: memref<?x32xf32>, %codes: memref<?x16xi8>,
                        %scales: memref<?x1xi8>, %deq: memref<?x32xbf16>)
    attributes {llvm.emit_c_interface} {
  %t = bufferization.to_tensor %in restrict : memref<?x32xf32> to tensor<?x32xf32>
  %q = fp4.quantize %t : tensor<?x32xf32> -> !fp4.tensor<?x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %c, %s = fp4.unpack %q : !fp4.tensor<?x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<?x16xi8>, tensor<?x1xi8>
  bufferization.materialize_in_destination %c in restrict writable %codes : (tensor<?x16xi8>, memref<?x16xi8>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %scales : (tensor<?x1xi8>, memref<?x1xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<?x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<?x32xbf16>
  bufferization.materialize_in_destination %d in restrict writable %deq : (tensor<?x32xbf16>, memref<?x32xbf16>) -> ()
  return
}

// CHECK-LABEL: memref_abi
// CHECK: {{\[}}[127],
// CHECK-NEXT: [125]]
// CHECK: {{\[}}[32, 66, 100, 118, 168, 202, 236, 254, 136, 0, 33, 67, 101, 119, 31, 145],
// CHECK-NEXT: [32, 66, 100, 118, 168, 202, 236, 254, 136, 0, 33, 67, 101, 119, 31, 145]]
// CHECK: {{\[}}[0, 1, 1, 2, 2, 4, 4, 6, -0, -1, -1, -2, -2, -4, -4, -6, -0, -0, 0, 0, 0.5, 1, 1.5, 2, 3, 4, 6, 6, -6, 0.5, 0.5, -0.5],
// CHECK-NEXT: [0, 0.25, 0.25, 0.5, 0.5, 1, 1, 1.5, -0, -0.25, -0.25, -0.5, -0.5, -1, -1, -1.5, -0, -0, 0, 0, 0.125, 0.25, 0.375, 0.5, 0.75, 1, 1.5, 1.5, -1.5, 0.125, 0.125, -0.125]]
func.func @memref_abi() {
  vector.print str "memref_abi\n"
  %row = arith.constant dense_resource<rounding_row> : tensor<1x32xf32>
  %quarter = arith.constant dense<0.25> : tensor<1x32xf32>
  %row4 = arith.mulf %row, %quarter : tensor<1x32xf32>
  %x = tensor.concat dim(0) %row, %row4 : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<2x32xf32>
  %xm = bufferization.to_buffer %x read_only : tensor<2x32xf32> to memref<2x32xf32>
  %in = memref.cast %xm : memref<2x32xf32> to memref<?x32xf32>
  %c2 = arith.constant 2 : index
  %codes = memref.alloc(%c2) : memref<?x16xi8>
  %scales = memref.alloc(%c2) : memref<?x1xi8>
  %deq = memref.alloc(%c2) : memref<?x32xbf16>
  call @quantize_abi(%in, %codes, %scales, %deq) : (memref<?x32xf32>, memref<?x16xi8>, memref<?x1xi8>, memref<?x32xbf16>) -> ()
  %st = bufferization.to_tensor %scales restrict : memref<?x1xi8> to tensor<?x1xi8>
  %sd = tensor.cast %st : tensor<?x1xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %ct = bufferization.to_tensor %codes restrict : memref<?x16xi8> to tensor<?x16xi8>
  %cd = tensor.cast %ct : tensor<?x16xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  %du = memref.cast %deq : memref<?x32xbf16> to memref<*xbf16>
  call @printMemrefBF16(%du) : (memref<*xbf16>) -> ()
  return
}
func.func private @printMemrefBF16(memref<*xbf16>) attributes {llvm.emit_c_interface}

// f16 input, dynamic rows, a quantized result crossing a call. The values
// are nvfp4.mlir's first test (0.2 and 0.05 are not exact in f16 but still
// round to code 0), so the bytes are the same.
func.func @quantize_f16(%x: tensor<?x16xf16>) -> !fp4.tensor<?x16xf4E2M1FN, #fp4.nvfp4, axis = 1> {
  %q = fp4.quantize %x : tensor<?x16xf16> -> !fp4.tensor<?x16xf4E2M1FN, #fp4.nvfp4, axis = 1>
  return %q : !fp4.tensor<?x16xf4E2M1FN, #fp4.nvfp4, axis = 1>
}

// CHECK-LABEL: quantized_call
// CHECK: {{\[}}[126],
// CHECK-NEXT: [110]]
// CHECK: {{\[}}[87, 27, 0, 40, 100, 246, 34, 68],
// CHECK-NEXT: [87, 27, 0, 40, 100, 246, 34, 68]]
func.func @quantized_call() {
  vector.print str "quantized_call\n"
  %x = arith.constant dense<[[6.0, 3.0, -1.5, 0.5, 0.25, 0.2, -0.0, 1.0, 2.0, 4.0, 5.0, -6.0, 0.75, 1.25, 1.75, 2.5],
                             [1.5, 0.75, -0.375, 0.125, 0.0625, 0.05, -0.0, 0.25, 0.5, 1.0, 1.25, -1.5, 0.1875, 0.3125, 0.4375, 0.625]]> : tensor<2x16xf16>
  %xd = tensor.cast %x : tensor<2x16xf16> to tensor<?x16xf16>
  %q = call @quantize_f16(%xd) : (tensor<?x16xf16>) -> !fp4.tensor<?x16xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %c, %s, %g = fp4.unpack %q : !fp4.tensor<?x16xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<?x8xi8>, tensor<?x1xi8>, tensor<f32>
  %sd = tensor.cast %s : tensor<?x1xi8> to tensor<?x?xi8>
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  %cd = tensor.cast %c : tensor<?x8xi8> to tensor<?x?xi8>
  call @print_bytes(%cd) : (tensor<?x?xi8>) -> ()
  return
}

// Decoding hand-written components (docs/ABI.md):
//  MXFP4: byte 0x71 = 113 holds element 0 = code 1 (0.5, low nibble) and
//   element 1 = code 7 (6); byte 0xF8 = 248: -0 and -6; scale byte 130:
//   X = 2^3: values 4, 48, -0, -48 (rest 0).
//  HiF4: metadata 192 | 1 << 8 | 1 << 16 (E6M2 1.0, 8-block 0 and 4-block 0
//   doubled): byte 0x17 = 23 -> codes 7 (1.75) and 1 (0.25) scaled by 4:
//   7, 1; byte 0xA4 = 164 -> codes 4 (1.0) and 10 (-0.5) scaled by 4: 4, -2;
//   the second 4-block (scale 2) byte 0x0C = 12 -> code 12 (-1.0) -> -2, 0.
// CHECK-LABEL: pack_decode
// CHECK: {{\[}}[4, 48, -0, -48, 0, 0]]
// CHECK: {{\[}}[7, 1, 4, -2, -2, 0, 0, 0]]
func.func @pack_decode() {
  vector.print str "pack_decode\n"
  %zc = arith.constant dense<0> : tensor<1x16xi8>
  %b = arith.constant dense<[[113, -8]]> : tensor<1x2xi8>
  %c = tensor.insert_slice %b into %zc[0, 0] [1, 2] [1, 1] : tensor<1x2xi8> into tensor<1x16xi8>
  %s = arith.constant dense<[[-126]]> : tensor<1x1xi8>
  %q = fp4.pack %c, %s : tensor<1x16xi8>, tensor<1x1xi8> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x32xf32>
  %d6 = tensor.extract_slice %d[0, 0] [1, 6] [1, 1] : tensor<1x32xf32> to tensor<1x6xf32>
  %dd = tensor.cast %d6 : tensor<1x6xf32> to tensor<?x?xf32>
  call @print_f32(%dd) : (tensor<?x?xf32>) -> ()

  %zh = arith.constant dense<0> : tensor<1x32xi8>
  %hb = arith.constant dense<[[23, -92, 12]]> : tensor<1x3xi8>
  %hc = tensor.insert_slice %hb into %zh[0, 0] [1, 3] [1, 1] : tensor<1x3xi8> into tensor<1x32xi8>
  %hm = arith.constant dense<[[65984]]> : tensor<1x1xi32>
  %hq = fp4.pack %hc, %hm : tensor<1x32xi8>, tensor<1x1xi32> -> !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  %hd = fp4.dequantize %hq : !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<1x64xf32>
  %hd8 = tensor.extract_slice %hd[0, 0] [1, 8] [1, 1] : tensor<1x64xf32> to tensor<1x8xf32>
  %hdd = tensor.cast %hd8 : tensor<1x8xf32> to tensor<?x?xf32>
  call @print_f32(%hdd) : (tensor<?x?xf32>) -> ()
  return
}

func.func @main() {
  call @memref_abi() : () -> ()
  call @quantized_call() : () -> ()
  call @pack_decode() : () -> ()
  return
}

{-#
  dialect_resources: {
    builtin: {
      rounding_row: "0x040000000000803E0000403F0000A03F0000E03F00002040000060400000A0400000B040000080BE000040BF0000A0BF0000E0BF000020C0000060C00000A0C00000B0C000000080CDCCCCBD00000000CDCCCC3D0000003F0000803F0000C03F0000004000004040000080400000C0400000F0400000F0C0B81E853EA4703D3FB81E85BE"
    }
  }
#-}
