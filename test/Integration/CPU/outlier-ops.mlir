// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// fp4.split_outliers, fp4.split_channels and fp4.correction_matmul
// (numerics.md 7) on the CPU.
// Every expected value is worked out by hand in the comments.

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefBF16(memref<*xbf16>) attributes {llvm.emit_c_interface}

func.func @print_f32(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print_bf16(%t: tensor<?x?x?xbf16>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?xbf16> to memref<?x?x?xbf16>
  %u = memref.cast %m : memref<?x?x?xbf16> to memref<*xbf16>
  call @printMemrefBF16(%u) : (memref<*xbf16>) -> ()
  return
}

func.func @print_i8(%t: tensor<?x?x?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %t, %c0 : tensor<?x?x?xi8>
  %d1 = tensor.dim %t, %c1 : tensor<?x?x?xi8>
  %d2 = tensor.dim %t, %c2 : tensor<?x?x?xi8>
  %e = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?xi32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : tensor<?x?x?xi8>) outs(%e : tensor<?x?x?xi32>) {
  ^bb0(%a: i8, %b: i32):
    %z = arith.extsi %a : i8 to i32
    linalg.yield %z : i32
  } -> tensor<?x?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?x?xi32> to memref<?x?x?xi32>
  %u = memref.cast %m : memref<?x?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// Blocks of 4, top 2 (slot j = rank j: larger |x| first, ties to the lower
// index; -0 and +0 tie):
//   row 0: [1, -3, 3, 2 | 0.5, -0.25, 7, -7]
//     -> values [-3, 3 | 7, -7], indices [1, 2 | 2, 3],
//        rest [1, 0, 0, 2, 0.5, -0.25, 0, 0]
//   row 1: [0, -0, 0, 0 | 1.00390625, -1.01171875, 0.125, 0.25]
//     -> values [0, -0 | -1.01171875, 1.00390625] (in bf16: -1.015625 and 1,
//        both ties to even), indices [0, 1 | 1, 0],
//        rest [0, 0, 0, 0, 0, 0, 0.125, 0.25]
// CHECK-LABEL: split
// CHECK: {{\[}}[1,   0,   0,   2,   0.5,   -0.25,   0,   0],
// CHECK-NEXT: [0,   0,   0,   0,   0,   0,   0.125,   0.25]]
// CHECK: {{\[}}{{\[}}[-3,   3],
// CHECK-NEXT: [7,   -7]],
// CHECK-NEXT: {{\[}}[0,   -0],
// CHECK-NEXT: [-1.01562,   1]]]
// CHECK: {{\[}}{{\[}}[1,   2],
// CHECK-NEXT: [2,   3]],
// CHECK-NEXT: {{\[}}[0,   1],
// CHECK-NEXT: [1,   0]]]
//
// Weights W [3, 8]: w0 = 1 everywhere, w1 = [1, 2, ..., 8],
// w2 = 2^-10 at k = 7, else 0. S = scatter(values) (bf16 values):
//   S0 = [0, -3, 3, 0, 0, 0, 7, -7], S1 = [0, -0, 0, 0, 1, -1.015625, 0, 0].
// sparse x dense, acc = [[10, 20, 30], [40, 50, 60]]:
//   S0.w = -3 + 3 + 7 - 7 = 0, -6 + 9 + 49 - 56 = -4, -7 * 2^-10
//   S1.w = 1 - 1.015625 = -0.015625, 5 - 6.09375 = -1.09375, 0
//   -> [[10, 16, 29.9932], [39.9844, 48.9062, 60]]
// CHECK-LABEL: sparse_dense
// CHECK: {{\[}}[10,   16,   29.9932],
// CHECK-NEXT: [39.9844,   48.9062,   60]]
// dense x sparse: W times S^T, no accumulator: the transpose of the above
// without acc.
// CHECK-LABEL: dense_sparse
// CHECK: {{\[}}[0,   -0.015625],
// CHECK-NEXT: [-4,   -1.09375],
// CHECK-NEXT: [-0.00683594,   0]]
// sparse x sparse with different blocks: T = W split in blocks of 8, top 1:
//   w0 -> 1 at 0 (all tie), w1 -> 8 at 7, w2 -> 2^-10 at 7.
//   S0.T = [0 * 1, -7 * 8, -7 * 2^-10] (S0 stores col 1, 2, 6, 7)
//   S1.T = [0 * 1 (col 0 is stored with value 0), 0, 0]
// CHECK-LABEL: sparse_sparse
// CHECK: {{\[}}[0,   -56,   -0.00683594],
// CHECK-NEXT: [0,   0,   0]]
// split_channels [1, 6]: rest = x with columns 1 and 6 zeroed, gathered =
// those columns.
// CHECK-LABEL: split_channels
// CHECK: {{\[}}[1,   0,   3,   2,   0.5,   -0.25,   0,   -7],
// CHECK-NEXT: [0,   0,   0,   0,   1.00391,   -1.01172,   0,   0.25]]
// CHECK: {{\[}}[-3,   7],
// CHECK-NEXT: [-0,   0.125]]
// dense x dense = x W^T + 1:
//   x0.w = 1 - 3 + 3 + 2 + 0.5 - 0.25 + 7 - 7 = 3.25, x0.w1 = 6,
//   x0.w2 = -7 * 2^-10; x1.w = 0.3671875, x1.w1 = 5.01953125 - 6.0703125
//   + 0.875 + 2 = 1.82421875, x1.w2 = 0.25 * 2^-10
// CHECK-LABEL: dense_dense
// CHECK: {{\[}}[4.25,   7,   0.993164],
// CHECK-NEXT: [1.36719,   2.82422,   1.00024]]
func.func @main() {
  %x = arith.constant dense<[[1.0, -3.0, 3.0, 2.0, 0.5, -0.25, 7.0, -7.0],
                             [0.0, -0.0, 0.0, 0.0, 1.00390625, -1.01171875, 0.125, 0.25]]> : tensor<2x8xf32>
  %w = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                             [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0009765625]]> : tensor<3x8xf32>

  vector.print str "split\n"
  %rest, %v, %i = fp4.split_outliers %x block 4 top 2 : tensor<2x8xf32> -> tensor<2x2x2xbf16>, tensor<2x2x2xi8>
  %restd = tensor.cast %rest : tensor<2x8xf32> to tensor<?x?xf32>
  call @print_f32(%restd) : (tensor<?x?xf32>) -> ()
  %vd = tensor.cast %v : tensor<2x2x2xbf16> to tensor<?x?x?xbf16>
  call @print_bf16(%vd) : (tensor<?x?x?xbf16>) -> ()
  %id = tensor.cast %i : tensor<2x2x2xi8> to tensor<?x?x?xi8>
  call @print_i8(%id) : (tensor<?x?x?xi8>) -> ()

  vector.print str "sparse_dense\n"
  %acc = arith.constant dense<[[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]]> : tensor<2x3xf32>
  %y0 = fp4.correction_matmul (%v, %i block 4), (%w) acc %acc : (tensor<2x2x2xbf16>, tensor<2x2x2xi8>), (tensor<3x8xf32>), tensor<2x3xf32> -> tensor<2x3xf32>
  %y0d = tensor.cast %y0 : tensor<2x3xf32> to tensor<?x?xf32>
  call @print_f32(%y0d) : (tensor<?x?xf32>) -> ()

  vector.print str "dense_sparse\n"
  %y1 = fp4.correction_matmul (%w), (%v, %i block 4) : (tensor<3x8xf32>), (tensor<2x2x2xbf16>, tensor<2x2x2xi8>) -> tensor<3x2xf32>
  %y1d = tensor.cast %y1 : tensor<3x2xf32> to tensor<?x?xf32>
  call @print_f32(%y1d) : (tensor<?x?xf32>) -> ()

  vector.print str "sparse_sparse\n"
  %wrest, %wv, %wi = fp4.split_outliers %w block 8 top 1 : tensor<3x8xf32> -> tensor<3x1x1xf32>, tensor<3x1x1xi8>
  %y2 = fp4.correction_matmul (%v, %i block 4), (%wv, %wi block 8) : (tensor<2x2x2xbf16>, tensor<2x2x2xi8>), (tensor<3x1x1xf32>, tensor<3x1x1xi8>) -> tensor<2x3xf32>
  %y2d = tensor.cast %y2 : tensor<2x3xf32> to tensor<?x?xf32>
  call @print_f32(%y2d) : (tensor<?x?xf32>) -> ()

  vector.print str "split_channels\n"
  %crest, %cout = fp4.split_channels %x channels [1, 6] : tensor<2x8xf32> -> tensor<2x2xf32>
  %crestd = tensor.cast %crest : tensor<2x8xf32> to tensor<?x?xf32>
  call @print_f32(%crestd) : (tensor<?x?xf32>) -> ()
  %coutd = tensor.cast %cout : tensor<2x2xf32> to tensor<?x?xf32>
  call @print_f32(%coutd) : (tensor<?x?xf32>) -> ()

  vector.print str "dense_dense\n"
  %ones = arith.constant dense<1.0> : tensor<2x3xbf16>
  %y3 = fp4.correction_matmul (%x), (%w) acc %ones : (tensor<2x8xf32>), (tensor<3x8xf32>), tensor<2x3xbf16> -> tensor<2x3xf32>
  %y3d = tensor.cast %y3 : tensor<2x3xf32> to tensor<?x?xf32>
  call @print_f32(%y3d) : (tensor<?x?xf32>) -> ()
  return
}
