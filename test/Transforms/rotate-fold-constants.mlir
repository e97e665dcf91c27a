// RUN: fp4-opt %s -split-input-file -fp4-fold-constants | FileCheck %s
// Constants above max-elements are left for run time.
// RUN: fp4-opt %s -split-input-file -fp4-fold-constants=max-elements=16 | FileCheck %s --check-prefix=LIMIT

// fp4.rotate of a constant is computed at compile time with the numerics
// library's rotation (expected values: x H16 / 4, worked out independently in
// test/Integration/CPU/rotate.mlir, which runs the lowering on the same data).
// CHECK-LABEL: func @deterministic
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<{{\[}}[3.400000e+01, -2.000000e+00, -4.000000e+00, 0.000000e+00, -8.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, -1.600000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [3.250000e+00, -1.250000e+00, 1.250000e+00, 7.750000e+00, 1.250000e+00, -2.250000e+00, -3.750000e+00, -2.500000e-01, 2.500000e-01, 6.750000e+00, -1.750000e+00, -2.500000e-01, -7.500000e-01, -1.250000e+00, 4.250000e+00, -1.250000e+00]]> : tensor<2x16xf32>
// CHECK-NEXT: return %[[C]]
// LIMIT-LABEL: func @deterministic
// LIMIT: fp4.rotate
func.func @deterministic() -> tensor<2x16xf32> {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                             [3.0, -1.0, 0.0, 2.0, 5.0, -4.0, 1.0, 1.0, 0.0, 0.0, -2.0, 7.0, 3.0, 3.0, -6.0, 1.0]]> : tensor<2x16xbf16>
  %y = fp4.rotate %x hadamard 16 axis 1 : tensor<2x16xbf16> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// Behind a transpose (the rotation runs along axis 0 of the transposed
// values), randomized (seed 7), rounded to a bf16 result.
// CHECK-LABEL: func @transposed_randomized
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<{{\[}}[-7.500000e+00], [-9.500000e+00], [1.850000e+01], [5.000000e-01], [7.500000e+00], [5.500000e+00], [3.500000e+00], [1.500000e+00], [9.500000e+00], [3.500000e+00], [-1.850000e+01], [1.550000e+01], [-5.500000e+00], [-7.500000e+00], [-1.500000e+00], [-1.150000e+01]]> : tensor<16x1xbf16>
// CHECK-NEXT: return %[[C]]
func.func @transposed_randomized() -> tensor<16x1xbf16> {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<1x16xf32>
  %e = tensor.empty() : tensor<16x1xf32>
  %t = linalg.transpose ins(%x : tensor<1x16xf32>) outs(%e : tensor<16x1xf32>) permutation = [1, 0]
  %y = fp4.rotate %t hadamard 16 seed 7 axis 0 : tensor<16x1xf32> -> tensor<16x1xbf16>
  return %y : tensor<16x1xbf16>
}

// -----

// Permutations gather; the results of chained folds feed each other.
// CHECK-LABEL: func @permute
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<{{\[}}[3.000000e+00, 1.000000e+00, 4.000000e+00, 2.000000e+00], [7.000000e+00, 5.000000e+00, 8.000000e+00, 6.000000e+00]]> : tensor<2x4xf16>
// CHECK-NEXT: return %[[C]]
func.func @permute() -> tensor<2x4xf16> {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf16>
  %y = fp4.permute %x axis 1 permutation [2, 0, 3, 1] : tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}

// -----

// The fp4-rotate output on a constant weight: the rotation folds, then the
// quantize of its result; blobs are named after the weight.
// CHECK-LABEL: func @weight
// CHECK-NOT: fp4.rotate
// CHECK-NOT: fp4.quantize
// CHECK: %[[CODES:.*]] = arith.constant dense_resource<fp4_w_rotated_codes> : tensor<8x32xi8>
// CHECK: %[[SCALES:.*]] = arith.constant dense<{{.*}}> : tensor<8x2xi8>
// CHECK: %[[P:.*]] = fp4.pack %[[CODES]], %[[SCALES]]
// CHECK: fp4.matmul %{{.*}}, %[[P]]
func.func @weight(%xq: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<4x8xf32> {
  %w = arith.constant dense<0.5> : tensor<8x64xbf16> loc("w")
  %r = fp4.rotate %w hadamard 32 seed 3 axis 1 : tensor<8x64xbf16> -> tensor<8x64xf32>
  %q = fp4.quantize %r : tensor<8x64xf32> -> !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %xq, %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A rotated constant that stays float (64 elements or more, not uniform)
// becomes a dense_resource blob.
// CHECK-LABEL: func @float_blob
// CHECK-NEXT: %[[C:.*]] = arith.constant dense_resource<const_rotated> : tensor<4x16xf32>
// CHECK-NEXT: return %[[C]]
func.func @float_blob() -> tensor<4x16xf32> {
  %x = arith.constant dense<1.0> : tensor<4x16xf32>
  %y = fp4.rotate %x hadamard 16 axis 1 : tensor<4x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Not constants: left alone.
// CHECK-LABEL: func @runtime
// CHECK: fp4.rotate
// CHECK: fp4.permute
func.func @runtime(%x: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %y = fp4.rotate %x hadamard 16 axis 1 : tensor<2x16xf32> -> tensor<2x16xf32>
  %z = fp4.permute %x axis 0 permutation [1, 0] : tensor<2x16xf32>
  return %y, %z : tensor<2x16xf32>, tensor<2x16xf32>
}
