// RUN: fp4-opt %s -split-input-file -canonicalize | FileCheck %s

// A rotation followed by its inverse cancels, in both orders.
// CHECK-LABEL: func @forward_then_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @forward_then_inverse(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %0 = fp4.rotate %x hadamard 32 seed 3 axis 1 : tensor<4x64xf32> -> tensor<4x64xf32>
  %1 = fp4.rotate %0 hadamard 32 seed 3 axis 1 inverse : tensor<4x64xf32> -> tensor<4x64xf32>
  %2 = fp4.rotate %x hadamard 4 stride 16 axis 1 inverse : tensor<4x64xf32> -> tensor<4x64xf32>
  %3 = fp4.rotate %2 hadamard 4 stride 16 axis 1 : tensor<4x64xf32> -> tensor<4x64xf32>
  return %1, %3 : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// The pair cancels through a wider intermediate type when the outer result
// has the input's type.
// CHECK-LABEL: func @through_f32
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
// CHECK-NEXT: return %[[X]]
func.func @through_f32(%x: tensor<4x64xbf16>) -> tensor<4x64xbf16> {
  %0 = fp4.rotate %x hadamard 64 axis 1 : tensor<4x64xbf16> -> tensor<4x64xf32>
  %1 = fp4.rotate %0 hadamard 64 axis 1 inverse : tensor<4x64xf32> -> tensor<4x64xbf16>
  return %1 : tensor<4x64xbf16>
}

// -----

// Not inverses of each other: different seeds, sizes, axes, directions, or a
// result type that differs from the original input's.
// CHECK-LABEL: func @no_cancel
// CHECK-COUNT-10: fp4.rotate
// CHECK-NOT: fp4.rotate
func.func @no_cancel(%x: tensor<64x64xf32>, %b: tensor<64x64xbf16>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = fp4.rotate %x hadamard 32 seed 3 axis 1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %1 = fp4.rotate %0 hadamard 32 seed 4 axis 1 inverse : tensor<64x64xf32> -> tensor<64x64xf32>
  %2 = fp4.rotate %x hadamard 32 axis 1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = fp4.rotate %2 hadamard 64 axis 1 inverse : tensor<64x64xf32> -> tensor<64x64xf32>
  %4 = fp4.rotate %x hadamard 32 axis 1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %5 = fp4.rotate %4 hadamard 32 axis 0 inverse : tensor<64x64xf32> -> tensor<64x64xf32>
  %6 = fp4.rotate %x hadamard 32 axis 1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %7 = fp4.rotate %6 hadamard 32 axis 1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %8 = fp4.rotate %b hadamard 32 axis 1 : tensor<64x64xbf16> -> tensor<64x64xf32>
  %9 = fp4.rotate %8 hadamard 32 axis 1 inverse : tensor<64x64xf32> -> tensor<64x64xf32>
  return %1, %3, %5, %7, %9 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A +0.0 splat rotates deterministically into +0.0 everywhere; a 1.0 splat
// does not stay a splat (the first coordinate of each block gets sqrt(d)).
// CHECK-LABEL: func @splat
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<4x32xbf16>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<4x32xf32>
// CHECK: %[[R:.*]] = fp4.rotate %[[ONE]] hadamard 32 axis 1
// CHECK: return %[[Z]], %[[R]]
func.func @splat() -> (tensor<4x32xbf16>, tensor<4x32xf32>) {
  %z = arith.constant dense<0.0> : tensor<4x32xf32>
  %0 = fp4.rotate %z hadamard 32 axis 1 : tensor<4x32xf32> -> tensor<4x32xbf16>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %1 = fp4.rotate %one hadamard 32 axis 1 : tensor<4x32xf32> -> tensor<4x32xf32>
  return %0, %1 : tensor<4x32xbf16>, tensor<4x32xf32>
}

// -----

// Permutations of one axis compose (result[i] = x[p[q[i]]]); inverse pairs
// and the identity disappear; splats are unchanged.
// CHECK-LABEL: func @permutes
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>)
// CHECK-DAG: %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<2x4xf32>
// CHECK-DAG: %[[P:.*]] = fp4.permute %[[X]] axis 1 permutation [3, 0, 2, 1] : tensor<2x4xf32>
// CHECK-DAG: %[[A:.*]] = fp4.permute %[[X]] axis 0 permutation [1, 0] : tensor<2x4xf32>
// CHECK-DAG: %[[B:.*]] = fp4.permute %[[A]] axis 1 permutation [1, 0, 3, 2] : tensor<2x4xf32>
// CHECK: return %[[P]], %[[X]], %[[X]], %[[C]], %[[B]]
func.func @permutes(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = fp4.permute %x axis 1 permutation [2, 0, 3, 1] : tensor<2x4xf32>
  %1 = fp4.permute %0 axis 1 permutation [2, 1, 0, 3] : tensor<2x4xf32>
  %2 = fp4.permute %x axis 1 permutation [1, 3, 0, 2] : tensor<2x4xf32>
  %3 = fp4.permute %2 axis 1 permutation [2, 0, 3, 1] : tensor<2x4xf32>
  %4 = fp4.permute %x axis 1 permutation [0, 1, 2, 3] : tensor<2x4xf32>
  %c = arith.constant dense<0.5> : tensor<2x4xf32>
  %5 = fp4.permute %c axis 1 permutation [3, 2, 1, 0] : tensor<2x4xf32>
  %6 = fp4.permute %x axis 0 permutation [1, 0] : tensor<2x4xf32>
  %7 = fp4.permute %6 axis 1 permutation [1, 0, 3, 2] : tensor<2x4xf32>
  return %1, %3, %4, %5, %7 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
