// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// fp4.residual (numerics.md 8) and its correction product on the CPU, with
// expected values worked out by hand in the comments.

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)

func.func @print_f32(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print_values(%t: tensor<?x?x?xbf16>) {
  %f = arith.extf %t : tensor<?x?x?xbf16> to tensor<?x?x?xf32>
  %m = bufferization.to_buffer %f : tensor<?x?x?xf32> to memref<?x?x?xf32>
  %u = memref.cast %m : memref<?x?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print_i8(%t: tensor<?x?x?xi8>) {
  %i = arith.extsi %t : tensor<?x?x?xi8> to tensor<?x?x?xi32>
  %m = bufferization.to_buffer %i : tensor<?x?x?xi32> to memref<?x?x?xi32>
  %u = memref.cast %m : memref<?x?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// x (bf16, one MXFP4 block of 32): [4, 0.375, 0.875, 1.375, 2.75, 3.75,
// -0.125, 5.5, 0 x 24]. amax 5.5: e = floor(log2 5.5) - 2 = 0, X = 1, so
// deq(Q(x)) = E2M1(x) = [4, 0.5, 1, 1.5, 3, 4, -0, 6, 0...] (0.375 > 0.25
// rounds up, 5.5 > 5 to 6) and r = x - deq =
//   [0, -0.125, -0.125, -0.125 | -0.25, -0.25, -0.125, -0.5 | 0 ...].
// 2:4 (block 4, top 2; ties to the lower index):
//   block 0 -> r[1], r[2] = -0.125, -0.125; block 1 -> r[7] = -0.5, r[4] =
//   -0.25; zero blocks -> indices 0, 1 with value 0.
// CHECK-LABEL: two_four
// CHECK: {{\[}}[-0.125,   -0.125],
// CHECK-NEXT: [-0.5,   -0.25],
// CHECK-NEXT: [0,   0],
// CHECK: {{\[}}[1,   2],
// CHECK-NEXT: [3,   0],
// CHECK-NEXT: [0,   1],
// Top 4 of the block of 32: r[7], r[4], r[5], r[1].
// CHECK-LABEL: top4
// CHECK: {{\[}}{{\[}}[-0.5,   -0.25,   -0.25,   -0.125]]]
// CHECK: {{\[}}{{\[}}[7,   4,   5,   1]]]
//
// The corrected product against w = [1, 2, ..., 32] (f32):
//   deq(Q(x)).w = 4 + 1 + 3 + 6 + 15 + 24 + 0 + 48 = 101
//   S(r).w (2:4) = -0.125 * (2 + 3) - 0.5 * 8 - 0.25 * 5 = -5.875
//   -> 95.125; x.w = 92.25, the rest being the residual entries not kept:
//   r[3] w3 + r[5] w5 + r[6] w6 = -0.5 - 1.5 - 0.875 = -2.875.
// CHECK-LABEL: product
// CHECK: {{\[}}[95.125]]
func.func @main() {
  %x = arith.constant dense<[[4.0, 0.375, 0.875, 1.375, 2.75, 3.75, -0.125, 5.5,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xbf16>
  %q = fp4.quantize %x : tensor<1x32xbf16> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>

  vector.print str "two_four\n"
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<1x32xbf16>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x8x2xbf16>, tensor<1x8x2xi8>
  %vd = tensor.cast %v : tensor<1x8x2xbf16> to tensor<?x?x?xbf16>
  call @print_values(%vd) : (tensor<?x?x?xbf16>) -> ()
  %id = tensor.cast %i : tensor<1x8x2xi8> to tensor<?x?x?xi8>
  call @print_i8(%id) : (tensor<?x?x?xi8>) -> ()

  vector.print str "top4\n"
  %v4, %i4 = fp4.residual %x, %q block 32 top 4 : tensor<1x32xbf16>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x1x4xbf16>, tensor<1x1x4xi8>
  %v4d = tensor.cast %v4 : tensor<1x1x4xbf16> to tensor<?x?x?xbf16>
  call @print_values(%v4d) : (tensor<?x?x?xbf16>) -> ()
  %i4d = tensor.cast %i4 : tensor<1x1x4xi8> to tensor<?x?x?xi8>
  call @print_i8(%i4d) : (tensor<?x?x?xi8>) -> ()

  vector.print str "product\n"
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
      13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0,
      27.0, 28.0, 29.0, 30.0, 31.0, 32.0]]> : tensor<1x32xf32>
  %y0 = fp4.matmul %q, %w : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, tensor<1x32xf32> -> tensor<1x1xf32>
  %y = fp4.correction_matmul (%v, %i block 4), (%w) acc %y0 : (tensor<1x8x2xbf16>, tensor<1x8x2xi8>), (tensor<1x32xf32>), tensor<1x1xf32> -> tensor<1x1xf32>
  %yd = tensor.cast %y : tensor<1x1xf32> to tensor<?x?xf32>
  call @print_f32(%yd) : (tensor<?x?xf32>) -> ()
  return
}
