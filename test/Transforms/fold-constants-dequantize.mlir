// RUN: fp4-opt %s -split-input-file -fp4-fold-constants="fold-dequantize=true" | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-fold-constants | FileCheck %s --check-prefix=KEEP

// fp4.dequantize of fp4.pack of constants folds to a float constant, decoded
// with the scheme's reference dequantizer (numerics specification). Results
// of 64 elements or more are dense_resource blobs: their hex holds the
// little-endian element bytes after a 4-byte alignment word.

// MXFP4: the codes of @mxfp4_ties (fold-constants.mlir) with scale byte 0x7F
// (X = 1) decode to the E2M1 values themselves, -0 included; byte 0x80
// doubles them; byte 0xFF (a NaN block) decodes to NaN.
// CHECK-LABEL: func.func @mxfp4
// CHECK-DAG: %[[D0:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00, 4.000000e+00, 4.000000e+00, 6.000000e+00, -0.000000e+00, -0.000000e+00, -1.000000e+00, -6.000000e+00, 5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, -3.000000e+00, 6.000000e+00, -1.000000e+00, -4.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x32xf32>
// CHECK-DAG: %[[D1:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 2.000000e+00, 2.000000e+00, 4.000000e+00, 4.000000e+00, 8.000000e+00, 8.000000e+00, 1.200000e+01, -0.000000e+00, -0.000000e+00, -2.000000e+00, -1.200000e+01, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00, 1.200000e+01, 0.000000e+00, 0.000000e+00, 1.000000e+00, -6.000000e+00, 1.200000e+01, -2.000000e+00, -8.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x32xf32>
// CHECK-DAG: %[[N:.*]] = arith.constant dense<0x7FC00000> : tensor<1x32xf32>
// CHECK-NOT: fp4.pack
// CHECK-NOT: xi8>
// CHECK: return %[[D0]], %[[D1]], %[[N]]
func.func @mxfp4() -> (tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) {
  %c = arith.constant dense<"0x2042647688FA21436507107DEA000000"> : tensor<1x16xi8>
  %s0 = arith.constant dense<127> : tensor<1x1xi8>
  %p0 = fp4.pack %c, %s0 : tensor<1x16xi8>, tensor<1x1xi8> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d0 = fp4.dequantize %p0 : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x32xf32>
  %s1 = arith.constant dense<-128> : tensor<1x1xi8>
  %p1 = fp4.pack %c, %s1 : tensor<1x16xi8>, tensor<1x1xi8> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d1 = fp4.dequantize %p1 : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x32xf32>
  %nc = arith.constant dense<119> : tensor<1x16xi8>
  %ns = arith.constant dense<-1> : tensor<1x1xi8>
  %np = fp4.pack %nc, %ns : tensor<1x16xi8>, tensor<1x1xi8> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %n = fp4.dequantize %np : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<1x32xf32>
  return %d0, %d1, %n : tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>
}

// -----

// Round trip along a middle axis: every block (b, :, j) of x[2, 32, 3] holds
// the E2M1 grid times 2^(b-j) with its maximum 6 * 2^(b-j), so the floor rule
// picks X = 2^(b-j) and quantize + dequantize give x back bit for bit in the
// logical layout: the f32 blob is the input's bytes, the bf16 blob their
// (exact) bf16 conversion.
// CHECK-LABEL: func.func @round_trip_axis1
// CHECK: %[[F:.*]] = arith.constant dense_resource<[[F32:fp4_const_dequantized[_0-9]*]]> : tensor<2x32x3xf32>
// CHECK: %[[B:.*]] = arith.constant dense_resource<[[BF16:fp4_const_dequantized[_0-9]*]]> : tensor<2x32x3xbf16>
// CHECK-NOT: fp4.
// CHECK: return %[[F]], %[[B]]
// CHECK-DAG: [[F32]]: "0x08000000000000000000803E0000803E0000003F0000003F0000C03E0000803F0000403F0000003F0000C0BF000080BF000040BF000000C00000C0BF000080BF000040C0000000C00000C0BF0000804000004040000000000000C040000000000000003E000000000000803E0000803E000000BF000000BF0000C0BE000080BF000040BF000000BF0000C0BF000080BF000040BF000000400000C03F0000803F00004040000000400000C03F0000804000004040000000000000C0C000000000000000BE00000000000080BE000080BE000000BF000000BF0000C0BE0000803F0000403F0000003F0000C03F0000803F0000403F000000400000C03F0000803F000040C0000000C00000C0BF000080C0000040C0000000000000C0C000000000000000BE000000000000803E0000803E0000003F0000003F0000C03E0000803F0000403F0000003F0000C0BF000080BF000040BF000000C00000C0BF000080BF000040C0000000C00000C0BF0000804000004040000000000000C040000000000000003E000000000000003F0000003F0000803F0000803F0000403F000000400000C03F0000803F000040C0000000C00000C0BF000080C0000040C0000000C00000C0C0000080C0000040C0000000410000C0400000000000004041000000000000803E000000000000003F0000003F000080BF000080BF000040BF000000C00000C0BF000080BF000040C0000000C00000C0BF0000804000004040000000400000C0400000804000004040000000410000C04000000000000040C100000000000080BE00000000000000BF000000BF000080BF000080BF000040BF000000400000C03F0000803F00004040000000400000C03F0000804000004040000000400000C0C0000080C0000040C0000000C10000C0C000000000000040C100000000000080BE000000000000003F0000003F0000803F0000803F0000403F000000400000C03F0000803F000040C0000000C00000C0BF000080C0000040C0000000C00000C0C0000080C0000040C0000000410000C0400000000000004041000000000000803E"
// CHECK-DAG: [[BF16]]: "0x080000000000803E803E003F003FC03E803F403F003FC0BF80BF40BF00C0C0BF80BF40C000C0C0BF804040400000C0400000003E0000803E803E00BF00BFC0BE80BF40BF00BFC0BF80BF40BF0040C03F803F40400040C03F804040400000C0C0000000BE000080BE80BE00BF00BFC0BE803F403F003FC03F803F403F0040C03F803F40C000C0C0BF80C040C00000C0C0000000BE0000803E803E003F003FC03E803F403F003FC0BF80BF40BF00C0C0BF80BF40C000C0C0BF804040400000C0400000003E0000003F003F803F803F403F0040C03F803F40C000C0C0BF80C040C000C0C0C080C040C00041C040000040410000803E0000003F003F80BF80BF40BF00C0C0BF80BF40C000C0C0BF804040400040C040804040400041C040000040C1000080BE000000BF00BF80BF80BF40BF0040C03F803F40400040C03F804040400040C0C080C040C000C1C0C0000040C1000080BE0000003F003F803F803F403F0040C03F803F40C000C0C0BF80C040C000C0C0C080C040C00041C040000040410000803E"
func.func @round_trip_axis1() -> (tensor<2x32x3xf32>, tensor<2x32x3xbf16>) {
  %c = arith.constant dense<[[[0.0, 0.25, 0.25], [0.5, 0.5, 0.375], [1.0, 0.75, 0.5], [-1.5, -1.0, -0.75], [-2.0, -1.5, -1.0], [-3.0, -2.0, -1.5], [4.0, 3.0, 0.0], [6.0, 0.0, 0.125], [0.0, 0.25, 0.25], [-0.5, -0.5, -0.375], [-1.0, -0.75, -0.5], [-1.5, -1.0, -0.75], [2.0, 1.5, 1.0], [3.0, 2.0, 1.5], [4.0, 3.0, 0.0], [-6.0, 0.0, -0.125], [0.0, -0.25, -0.25], [-0.5, -0.5, -0.375], [1.0, 0.75, 0.5], [1.5, 1.0, 0.75], [2.0, 1.5, 1.0], [-3.0, -2.0, -1.5], [-4.0, -3.0, 0.0], [-6.0, 0.0, -0.125], [0.0, 0.25, 0.25], [0.5, 0.5, 0.375], [1.0, 0.75, 0.5], [-1.5, -1.0, -0.75], [-2.0, -1.5, -1.0], [-3.0, -2.0, -1.5], [4.0, 3.0, 0.0], [6.0, 0.0, 0.125]], [[0.0, 0.5, 0.5], [1.0, 1.0, 0.75], [2.0, 1.5, 1.0], [-3.0, -2.0, -1.5], [-4.0, -3.0, -2.0], [-6.0, -4.0, -3.0], [8.0, 6.0, 0.0], [12.0, 0.0, 0.25], [0.0, 0.5, 0.5], [-1.0, -1.0, -0.75], [-2.0, -1.5, -1.0], [-3.0, -2.0, -1.5], [4.0, 3.0, 2.0], [6.0, 4.0, 3.0], [8.0, 6.0, 0.0], [-12.0, 0.0, -0.25], [0.0, -0.5, -0.5], [-1.0, -1.0, -0.75], [2.0, 1.5, 1.0], [3.0, 2.0, 1.5], [4.0, 3.0, 2.0], [-6.0, -4.0, -3.0], [-8.0, -6.0, 0.0], [-12.0, 0.0, -0.25], [0.0, 0.5, 0.5], [1.0, 1.0, 0.75], [2.0, 1.5, 1.0], [-3.0, -2.0, -1.5], [-4.0, -3.0, -2.0], [-6.0, -4.0, -3.0], [8.0, 6.0, 0.0], [12.0, 0.0, 0.25]]]> : tensor<2x32x3xf32>
  %q = fp4.quantize %c : tensor<2x32x3xf32> -> !fp4.tensor<2x32x3xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = fp4.dequantize %q : !fp4.tensor<2x32x3xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x32x3xf32>
  %b = fp4.dequantize %q : !fp4.tensor<2x32x3xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x32x3xbf16>
  return %d, %b : tensor<2x32x3xf32>, tensor<2x32x3xbf16>
}

// -----

// NVFP4: (e2m1 x e4m3 scale) x tensor scale: 6 x 64 x 2^-9 = 0.75,
// 0.5 x 64 x 2^-9 = 0.0625, -1 x 448 x 2^-9 = -0.875.
// CHECK-LABEL: func.func @nvfp4
// KEEP-LABEL: func.func @nvfp4
// KEEP: %[[P:.*]] = fp4.pack
// KEEP: fp4.dequantize %[[P]]
// CHECK: arith.constant dense<{{\[}}[7.500000e-01, 6.250000e-02, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, -8.750000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x32xf32>
func.func @nvfp4() -> tensor<1x32xf32> {
  %c = arith.constant dense<[[23, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0]]> : tensor<1x16xi8>
  %s = arith.constant dense<[[104, 126]]> : tensor<1x2xi8>
  %t = arith.constant dense<0.001953125> : tensor<f32>
  %p = fp4.pack %c, %s, %t : tensor<1x16xi8>, tensor<1x2xi8>, tensor<f32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %d = fp4.dequantize %p : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<1x32xf32>
  return %d : tensor<1x32xf32>
}

// -----

// HiF4: the group of @hif4 in fold-constants.mlir decodes to
// sign x (k/4) x l2 x l3 x sf with sf = 1: 7, 0, 0, 0 | 0.5, 0, 0.5, -0 |
// 1, 0.25, 0.25, 0.5 | 2.5, 0, 0, 0 | 3.5 (3.9 saturated), 0 ... | -0, 0 ...
// In f32 hex: 7 = 0000E040, 0.5 = 0000003F, -0 = 00000080, 1 = 0000803F,
// 0.25 = 0000803E, 2.5 = 00002040, 3.5 = 00006040.
// CHECK-LABEL: func.func @hif4
// CHECK: arith.constant dense_resource<[[V:.*]]> : tensor<1x64xf32>
// CHECK: [[V]]: "0x080000000000E0400000000000000000000000000000003F000000000000003F000000800000803F0000803E0000803E0000003F00002040000000000000000000000000000060400000000000000000000000000000000000000000000000000000000000000080000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @hif4() -> tensor<1x64xf32> {
  %c = arith.constant dense<"0x0700018114210500070000000800000000000000000000000000000000000000"> : tensor<1x32xi8>
  %m = arith.constant dense<1638848> : tensor<1x1xi32>
  %p = fp4.pack %c, %m : tensor<1x32xi8>, tensor<1x1xi32> -> !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  %d = fp4.dequantize %p : !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<1x64xf32>
  return %d : tensor<1x64xf32>
}

// -----

// Macro blocks: (e2m1 x 2^e) x m = 6 x 1 x 1.5 = 9 and 4 x 0.5 x 1.5 = 3,
// exact in the bf16 result (bf16 hex: 9 = 1041, 3 = 4040).
// CHECK-LABEL: func.func @macro
// CHECK: arith.constant dense_resource<[[V:.*]]> : tensor<1x64xbf16>
// CHECK: [[V]]: "0x080000001041000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000040400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @macro() -> tensor<1x64xbf16> {
  %c = arith.constant dense<"0x0700000000000000000000000000000006000000000000000000000000000000"> : tensor<1x32xi8>
  %s = arith.constant dense<[[127, 126]]> : tensor<1x2xi8>
  %f = arith.constant dense<1.5> : tensor<1x1xbf16>
  %p = fp4.pack %c, %s, %f : tensor<1x32xi8>, tensor<1x2xi8>, tensor<1x1xbf16> -> !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  %d = fp4.dequantize %p : !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1> -> tensor<1x64xbf16>
  return %d : tensor<1x64xbf16>
}
