// RUN: fp4-opt %s -split-input-file -fp4-fold-constants --mlir-print-elementsattrs-with-hex-if-larger=0 | FileCheck %s
// RUN: fp4-opt %s -split-input-file -fp4-fold-constants --mlir-print-elementsattrs-with-hex-if-larger=0 --mlir-disable-threading | FileCheck %s

// Expected bytes are derived by hand from the numerics specification.
// Non-splat attributes print as hex byte strings in memory order; a codes
// byte holds element 2k in its low nibble (the second hex digit) and 2k+1 in
// its high nibble. E2M1 codes: 0..7 = +{0, 0.5, 1, 1.5, 2, 3, 4, 6}, 8..15
// the same negated (8 = -0).

// MXFP4, default floor rule. Row 0: amax 7 -> e = floor(log2 7) - 2 = 0,
// byte 0x7F, X = 1, so codes are Q(x): ties to even (0.25->0, 0.75->1,
// 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4), 7 -> 6 (saturate), -0.25 and -0.0
// -> code 8, 0.1 -> 0, 0.3 -> 0.5, -2.75 -> -3, 5.5 -> 6.
// Row 1: an all-zero block of -0.0 / 0.0: byte 0, codes 8 / 0 by sign.
// CHECK-LABEL: func.func @mxfp4_ties
// CHECK-DAG: %[[C:.*]] = arith.constant dense<"0x2042647688FA21436507107DEA00000008080808080808080808080808080808"> : tensor<2x16xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<"0x7F00"> : tensor<2x1xi8>
// CHECK: %[[P:.*]] = fp4.pack %[[C]], %[[S]] : tensor<2x16xi8>, tensor<2x1xi8> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK-NOT: fp4.quantize
// CHECK-NOT: xf32>
// CHECK: return %[[P]]
func.func @mxfp4_ties() -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<[[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.25, -0.0, -1.25, -5.5, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 0.0, 0.1, 0.3, -2.75, 5.5, -0.75, -3.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0]]> : tensor<2x32xf32>
  %q = fp4.quantize %c : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// half_away: ties go up: 0.25->0.5, 1.25->1.5, 2.5->3, 5->6, -0.25->-0.5.
// CHECK-LABEL: func.func @mxfp4_half_away
// CHECK-DAG: arith.constant dense<"0x2143657789FB21436507107DEA000000"> : tensor<1x16xi8>
// CHECK-DAG: arith.constant dense<127> : tensor<1x1xi8>
func.func @mxfp4_half_away() -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<rounding = half_away>, axis = 1> {
  %c = arith.constant dense<[[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.25, -0.0, -1.25, -5.5, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 0.0, 0.1, 0.3, -2.75, 5.5, -0.75, -3.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %q = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<rounding = half_away>, axis = 1>
  return %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4<rounding = half_away>, axis = 1>
}

// -----

// Scale rules on three blocks with amax 7, 5, 6.5 (first element, rest 0):
//   floor: e = 2-2 = 0 for all                      -> 7F 7F 7F
//   ceil:  e = 3-2 = 1 for all                      -> 80 80 80
//   even:  7 = 1.75*4 rounds up to 8 -> 1; 5, 6.5 -> 0 -> 80 7F 7F
//   rceil: ceil(log2(a/6)): 7/6 -> 1, 5/6 -> 0, 6.5/6 -> 1 -> 80 7F 80
// and the first code of each row is Q(a / 2^e): 7 -> 6|3.5->4, 5 -> 4|2.5->2,
// 6.5 -> 6|3.25->3.
// CHECK-LABEL: func.func @mxfp4_scale_rules
// CHECK-DAG: arith.constant dense<"0x070000000000000000000000000000000600000000000000000000000000000007000000000000000000000000000000"> : tensor<3x16xi8>
// CHECK-DAG: arith.constant dense<127> : tensor<3x1xi8>
// CHECK-DAG: arith.constant dense<"0x060000000000000000000000000000000400000000000000000000000000000005000000000000000000000000000000"> : tensor<3x16xi8>
// CHECK-DAG: arith.constant dense<-128> : tensor<3x1xi8>
// CHECK-DAG: arith.constant dense<"0x060000000000000000000000000000000600000000000000000000000000000007000000000000000000000000000000"> : tensor<3x16xi8>
// CHECK-DAG: arith.constant dense<"0x807F7F"> : tensor<3x1xi8>
// CHECK-DAG: arith.constant dense<"0x060000000000000000000000000000000600000000000000000000000000000005000000000000000000000000000000"> : tensor<3x16xi8>
// CHECK-DAG: arith.constant dense<"0x807F80"> : tensor<3x1xi8>
func.func @mxfp4_scale_rules() -> (!fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil>, axis = 1>,
    !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>,
    !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>) {
  %c = arith.constant dense<[[7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [6.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<3x32xf32>
  %q0 = fp4.quantize %c : tensor<3x32xf32> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q1 = fp4.quantize %c : tensor<3x32xf32> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil>, axis = 1>
  %q2 = fp4.quantize %c : tensor<3x32xf32> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  %q3 = fp4.quantize %c : tensor<3x32xf32> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
  return %q0, %q1, %q2, %q3 : !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = ceil>, axis = 1>,
    !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>,
    !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
}

// -----

// A block holding NaN or Inf gets E8M0 byte 0xFF (its codes are unspecified).
// CHECK-LABEL: func.func @mxfp4_nan_inf
// CHECK-DAG: arith.constant dense<"0xFFFF7F"> : tensor<3x1xi8>
func.func @mxfp4_nan_inf() -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<[[0.0, 0x7FC00000, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 0x7F800000, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<3x32xf32>
  %q = fp4.quantize %c : tensor<3x32xf32> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// A splat stays a splat: 1.0 -> e = -2 (byte 125), 1 / 2^-2 = 4 -> code 6.
// CHECK-LABEL: func.func @splat
// CHECK-DAG: arith.constant dense<102> : tensor<4x32xi8>
// CHECK-DAG: arith.constant dense<125> : tensor<4x2xi8>
func.func @splat() -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<1.0> : tensor<4x64xf32>
  %q = fp4.quantize %c : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// bf16 and f16 constants, directly and through arith.extf, give the bytes of
// @mxfp4_ties row 0 (0.1 and 0.3 move a little in bf16/f16 but keep codes).
// CHECK-LABEL: func.func @narrow_inputs
// CHECK-COUNT-3: arith.constant dense<"0x2042647688FA21436507107DEA000000"> : tensor<1x16xi8>
// CHECK-NOT: arith.extf
func.func @narrow_inputs() -> (!fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  %b = arith.constant dense<[[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.25, -0.0, -1.25, -5.5, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 0.0, 0.1, 0.3, -2.75, 5.5, -0.75, -3.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xbf16>
  %h = arith.constant dense<[[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.25, -0.0, -1.25, -5.5, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 0.0, 0.1, 0.3, -2.75, 5.5, -0.75, -3.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf16>
  %e = arith.extf %h : tensor<1x32xf16> to tensor<1x32xf32>
  %b2 = arith.constant dense<[[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, -0.25, -0.0, -1.25, -5.5, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 0.0, 0.1, 0.3, -2.75, 5.5, -0.75, -3.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xbf16>
  %q0 = fp4.quantize %b : tensor<1x32xbf16> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q1 = fp4.quantize %e : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q2 = fp4.quantize %b2 : tensor<1x32xbf16> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q0, %q1, %q2 : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// arith.truncf is applied exactly (round to nearest even) before quantizing:
// 1.25390625 = 1.25 + half a bf16 ulp ties to 1.25 in bf16 -> code 2 (1.0);
// 1.250244140625 = 1.25 + 2^-12 rounds to 1.25 in f16 -> code 2. Unrounded,
// both would give code 3 (1.5). 6.0 -> code 7 keeps X = 1.
// CHECK-LABEL: func.func @truncf
// CHECK-COUNT-2: arith.constant dense<"0x72000000000000000000000000000000"> : tensor<1x16xi8>
// CHECK: arith.constant dense<"0x73000000000000000000000000000000"> : tensor<1x16xi8>
// CHECK-NOT: arith.truncf
func.func @truncf() -> (!fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  %c = arith.constant dense<[[1.25390625, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %t = arith.truncf %c : tensor<1x32xf32> to tensor<1x32xbf16>
  %e = arith.extf %t : tensor<1x32xbf16> to tensor<1x32xf32>
  %q0 = fp4.quantize %e : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = arith.constant dense<[[1.250244140625, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %h = arith.truncf %d : tensor<1x32xf32> to tensor<1x32xf16>
  %q1 = fp4.quantize %h : tensor<1x32xf16> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q2 = fp4.quantize %d : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q0, %q1, %q2 : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// A transposed constant folds to the bytes of @mxfp4_ties; the transpose and
// its init tensor are erased with the float constant.
// CHECK-LABEL: func.func @transpose
// CHECK-DAG: arith.constant dense<"0x2042647688FA21436507107DEA00000008080808080808080808080808080808"> : tensor<2x16xi8>
// CHECK-DAG: arith.constant dense<"0x7F00"> : tensor<2x1xi8>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.empty
// CHECK-NOT: xf32>
// CHECK: return
func.func @transpose() -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> {
  %c = arith.constant dense<[[0.25, -0.0], [0.75, 0.0], [1.25, -0.0], [1.75, 0.0], [2.5, -0.0], [3.5, 0.0], [5.0, -0.0], [7.0, 0.0], [-0.25, -0.0], [-0.0, 0.0], [-1.25, -0.0], [-5.5, 0.0], [0.5, -0.0], [1.0, 0.0], [1.5, -0.0], [2.0, 0.0], [3.0, -0.0], [4.0, 0.0], [6.0, -0.0], [0.0, 0.0], [0.1, -0.0], [0.3, 0.0], [-2.75, -0.0], [5.5, 0.0], [-0.75, -0.0], [-3.5, 0.0], [0.0, -0.0], [0.0, 0.0], [0.0, -0.0], [0.0, 0.0], [0.0, -0.0], [0.0, 0.0]]> : tensor<32x2xf32>
  %e = tensor.empty() : tensor<2x32xf32>
  %t = linalg.transpose ins(%c : tensor<32x2xf32>) outs(%e : tensor<2x32xf32>) permutation = [1, 0]
  %q = fp4.quantize %t : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

// -----

// Blocked along axis 0: each column is quantized; the components keep the
// logical layout, codes paired along axis 0 (codes[k][j] holds rows 2k and
// 2k+1 of column j), so the bytes of @mxfp4_ties' two rows interleave.
// CHECK-LABEL: func.func @axis0
// CHECK-DAG: arith.constant dense<"0x20084208640876088808FA08210843086508070810087D08EA08000800080008"> : tensor<16x2xi8>
// CHECK-DAG: arith.constant dense<"0x7F00"> : tensor<1x2xi8>
func.func @axis0() -> !fp4.tensor<32x2xf4E2M1FN, #fp4.mxfp4, axis = 0> {
  %c = arith.constant dense<[[0.25, -0.0], [0.75, 0.0], [1.25, -0.0], [1.75, 0.0], [2.5, -0.0], [3.5, 0.0], [5.0, -0.0], [7.0, 0.0], [-0.25, -0.0], [-0.0, 0.0], [-1.25, -0.0], [-5.5, 0.0], [0.5, -0.0], [1.0, 0.0], [1.5, -0.0], [2.0, 0.0], [3.0, -0.0], [4.0, 0.0], [6.0, -0.0], [0.0, 0.0], [0.1, -0.0], [0.3, 0.0], [-2.75, -0.0], [5.5, 0.0], [-0.75, -0.0], [-3.5, 0.0], [0.0, -0.0], [0.0, 0.0], [0.0, -0.0], [0.0, 0.0], [0.0, -0.0], [0.0, 0.0]]> : tensor<32x2xf32>
  %q = fp4.quantize %c : tensor<32x2xf32> -> !fp4.tensor<32x2xf4E2M1FN, #fp4.mxfp4, axis = 0>
  return %q : !fp4.tensor<32x2xf4E2M1FN, #fp4.mxfp4, axis = 0>
}

// -----

// Stochastic rounding: 1.25 lies halfway between 1 and 1.5 (X = 1 from the
// 6.0), so it rounds up (code 3) iff bit 31 of counterRandom(seed = 7,
// index) is 0, with index the element's row-major linear index in the
// logical tensor: r * 32 + c for the [2, 32] tensor, r * 2 + c for the
// [32, 2] tensor blocked along axis 0 (not its position in the row view).
// CHECK-LABEL: func.func @stochastic
// CHECK-DAG: arith.constant dense<"0x3723323223323322333233322222233237323323232322333323233332222223"> : tensor<2x16xi8>
// CHECK-DAG: arith.constant dense<"0x3727223323322323233323332222233222333323332232323323333222233222"> : tensor<16x2xi8>
func.func @stochastic() -> (!fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 7>, axis = 1>,
    !fp4.tensor<32x2xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 7>, axis = 0>) {
  %a = arith.constant dense<[[6.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25], [6.0, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25, 1.25]]> : tensor<2x32xf32>
  %b = arith.constant dense<[[6.0, 6.0], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25], [1.25, 1.25]]> : tensor<32x2xf32>
  %q0 = fp4.quantize %a : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 7>, axis = 1>
  %q1 = fp4.quantize %b : tensor<32x2xf32> -> !fp4.tensor<32x2xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 7>, axis = 0>
  return %q0, %q1 : !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 7>, axis = 1>,
    !fp4.tensor<32x2xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 7>, axis = 0>
}

// -----

// NVFP4, tensor amax 5.25: g_enc = 2688 / 5.25 = 512, g_dec = 2^-9 (the
// stored tensor scale), k = g_enc / 6.
// Row 0, block 0: amax 5.25 -> s = e4m3(5.25 k) = 448 (0x7E), enc =
//   1 / (448 * 2^-9) = f32(8/7): 5.25 -> 6, 2.625 -> 3, 1.3125 -> 1.5,
//   0.65625 -> f32(0.65625 * 8/7) is just above the 0.75 tie -> 1, -5.25 -> -6.
// Row 0, block 1: amax 0.75 -> s = 64 (0x68), enc = 8 exactly, so the values
//   land on the tie table: 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2,
//   3.5->4, 5->4, -0.25 -> -0 (code 8), -0 -> 8.
// Row 1, block 0: amax 1e-5 -> s rounds to E4M3 0: the block is zeroed,
//   codes 0 / 8 by sign. Block 1 is all zero: scale 0.
// CHECK-LABEL: func.func @nvfp4
// CHECK-DAG: %[[C:.*]] = arith.constant dense<"0x57230F0000000000072244668821436580000000000000000000000000000000"> : tensor<2x16xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<"0x7E680000"> : tensor<2x2xi8>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<0.001953125> : tensor<f32>
// CHECK: fp4.pack %[[C]], %[[S]], %[[T]] : tensor<2x16xi8>, tensor<2x2xi8>, tensor<f32>
func.func @nvfp4() -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1> {
  %c = arith.constant dense<[[5.25, 2.625, 1.3125, 0.65625, -5.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.75, 0.03125, 0.09375, 0.15625, 0.21875, 0.3125, 0.4375, 0.625, -0.03125, -0.0, 0.0625, 0.125, 0.1875, 0.25, 0.375, 0.5], [1.0e-05, -1.0e-05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x32xf32>
  %q = fp4.quantize %c : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
}

// -----

// The tensor amax skips non-finite values (3.0 here: g_enc = 896, g_dec =
// f32(1/896)); a block with Inf or NaN gets scale byte 0x7F. Block 1: 3 k =
// 448 - 2^-16 ties to 448 (0x7E).
// CHECK-LABEL: func.func @nvfp4_nan_inf
// CHECK-DAG: arith.constant dense<"0x7F7E7F7E"> : tensor<2x2xi8>
// CHECK-DAG: arith.constant dense<0.00111607148> : tensor<f32>
func.func @nvfp4_nan_inf() -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1> {
  %c = arith.constant dense<[[0x7F800000, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0xFFC00000, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x32xf32>
  %q = fp4.quantize %c : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  return %q : !fp4.tensor<2x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
}

// -----

// four_over_six, tensor amax 3: g_enc = 256 * 6 / 3 = 512, k = 512 / 6.
// Block 0 [3, 2.25, 0...]: map-to-6 s = 256 (0x78, enc 2) gives 6 and 4.5->4,
//   i.e. 3 and 2 after decoding (squared error 0.0625); map-to-4 s = 384
//   (0x7C, enc 4/3) gives 4 and 3, decoding to 3 and 2.25 exactly: 0x7C wins.
// Block 1 [3, 1, 0...]: map-to-6 is exact (codes 7, 4), map-to-4 decodes 1 as
//   1.125: 0x78 stays.
// CHECK-LABEL: func.func @nvfp4_four_over_six
// CHECK-DAG: arith.constant dense<"0x56000000000000004700000000000000"> : tensor<1x16xi8>
// CHECK-DAG: arith.constant dense<"0x7C78"> : tensor<1x2xi8>
// CHECK-DAG: arith.constant dense<0.001953125> : tensor<f32>
func.func @nvfp4_four_over_six() -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1> {
  %c = arith.constant dense<[[3.0, 2.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %q = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
  return %q : !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
}

// -----

// tile2d: one 16x16 tile, amax 5.25 (= tensor amax): scale 0x7E (enc 8/7)
// repeated in all 16 rows. Row 1 [0.75, 0.375, 0...] uses the tile's scale:
// 0.857 -> 1 (code 2), 0.429 -> 0.5 (code 1); a row-wise block would have had
// its own scale 0x68.
// CHECK-LABEL: func.func @nvfp4_tile2d
// CHECK-DAG: arith.constant dense_resource<[[CODES:fp4_const_codes.*]]> : tensor<16x8xi8>
// CHECK-DAG: arith.constant dense<126> : tensor<16x1xi8>
// CHECK: [[CODES]]: "0x080000000700000000000000120000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @nvfp4_tile2d() -> !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1> {
  %c = arith.constant dense<[[5.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.75, 0.375, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<16x16xf32>
  %q = fp4.quantize %c : tensor<16x16xf32> -> !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
  return %q : !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 1>
}

// -----

// The transpose of @nvfp4_tile2d's input blocked along axis 0 gives the
// transposed codes (byte (k, j) = byte (j, k) above) and scales.
// CHECK-LABEL: func.func @nvfp4_tile2d_axis0
// CHECK-DAG: arith.constant dense_resource<[[CODES:fp4_const_codes.*]]> : tensor<8x16xi8>
// CHECK-DAG: arith.constant dense<126> : tensor<1x16xi8>
// CHECK: [[CODES]]: "0x080000000712000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @nvfp4_tile2d_axis0() -> !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 0> {
  %c = arith.constant dense<[[5.25, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.375, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<16x16xf32>
  %q = fp4.quantize %c : tensor<16x16xf32> -> !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 0>
  return %q : !fp4.tensor<16x16xf4E2M1FN, #fp4.nvfp4<tile2d = true>, axis = 0>
}

// -----

// HiF4, m64 = 7: sf = bf16(7 * bf16(1/7)) = bf16(0.998046875) = 1.0 (tie to
// even), E6M2 byte 48 << 2 = 0xC0, rec = 1.
//   8-block 0 (m8 = 7 >= 4, l2 = 2): 4-block [7,0,0,0]: 7/2 >= 2, l3 = 2,
//     t = 4*7/4 = 7 -> code 7; 4-block [0.5, 0.125, 0.375, -0.125]: l3 = 1,
//     t = 2|x| = 1, 0.25, 0.75, 0.25 -> half up: 1, 0, 1, -0 (8).
//   8-block 1 (m8 = 2.5, l2 = 1): [1, 0.125, 0.25, 0.375]: l3 = 1, t = 4|x| =
//     4, 0.5, 1, 1.5 -> 4, 1, 1, 2 (half up); [2.5, 0, 0, 0]: l3 = 2, t = 5.
//   8-block 2: [3.9, 0, 0, 0]: l2 = 1, l3 = 2, t = 7.8 -> 8 -> 1.75 (7).
//   8-block 3 starts with -0.0 -> code 8.
// Metadata: 0xC0 | l2 bit 8 | l3 bits 16, 19, 20 = 0x1901C0 = 1638848.
// CHECK-LABEL: func.func @hif4
// CHECK-DAG: arith.constant dense<"0x0700018114210500070000000800000000000000000000000000000000000000"> : tensor<1x32xi8>
// CHECK-DAG: arith.constant dense<1638848> : tensor<1x1xi32>
func.func @hif4() -> !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1> {
  %c = arith.constant dense<[[7.0, 0.0, 0.0, 0.0, 0.5, 0.125, 0.375, -0.125, 1.0, 0.125, 0.25, 0.375, 2.5, 0.0, 0.0, 0.0, 3.9, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x64xf32>
  %q = fp4.quantize %c : tensor<1x64xf32> -> !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  return %q : !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
}

// -----

// HiF4 all-zero group: metadata 0, codes 0 / 8 by sign. A group with NaN gets
// metadata 0x000000FF.
// CHECK-LABEL: func.func @hif4_zero_nan
// CHECK-DAG: arith.constant dense<8> : tensor<1x32xi8>
// CHECK-DAG: arith.constant dense<0> : tensor<1x1xi32>
// CHECK-DAG: arith.constant dense<255> : tensor<1x1xi32>
func.func @hif4_zero_nan() -> (!fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>, !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>) {
  %z = arith.constant dense<[[-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0]]> : tensor<1x64xf32>
  %n = arith.constant dense<[[0x7FC00000, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<1x64xf32>
  %q0 = fp4.quantize %z : tensor<1x64xf32> -> !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  %q1 = fp4.quantize %n : tensor<1x64xf32> -> !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  return %q0, %q1 : !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>, !fp4.tensor<1x64x!fp4.s1p2, #fp4.hif4, axis = 1>
}

// -----

// Macro blocks: macro amax 9 -> m = significand(9 / 6) = 1.5; y = x / 1.5:
// block 0 y-amax 6 -> byte 0x7F, 9 -> y = 6 -> code 7; block 1 y-amax 2 ->
// byte 0x7E (X = 0.5), 3 -> y = 2 -> 4 -> code 6. A whole-row macro block
// (macro_block = 0) is the same here.
// CHECK-LABEL: func.func @macro
// CHECK-COUNT-2: arith.constant dense<"0x0700000000000000000000000000000006000000000000000000000000000000"> : tensor<1x32xi8>
// CHECK-DAG: arith.constant dense<"0x7F7E"> : tensor<1x2xi8>
// CHECK-DAG: arith.constant dense<1.500000e+00> : tensor<1x1xbf16>
func.func @macro() -> (!fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>,
    !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>) {
  %c = arith.constant dense<[[9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x64xf32>
  %q0 = fp4.quantize %c : tensor<1x64xf32> -> !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  %q1 = fp4.quantize %c : tensor<1x64xf32> -> !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>
  return %q0, %q1 : !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>,
    !fp4.tensor<1x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>
}

// -----

// [1.25, 0...]: default m = bf16(significand(1.25 / 6) = 1.6667) = 1.6640625,
// y = 0.7512 -> e = -3 (byte 0x7C), 6.009 -> code 7. search = 4 tries m =
// 1, 1.25, 1.5, 1.75: m = 1.25 makes y = 1 exact (e = -2, byte 0x7D, 4 ->
// code 6, no error) and wins.
// CHECK-LABEL: func.func @macro_search
// CHECK-DAG: arith.constant dense<"0x07000000000000000000000000000000"> : tensor<1x16xi8>
// CHECK-DAG: arith.constant dense<124> : tensor<1x1xi8>
// CHECK-DAG: arith.constant dense<1.664060e+00> : tensor<1x1xbf16>
// CHECK-DAG: arith.constant dense<"0x06000000000000000000000000000000"> : tensor<1x16xi8>
// CHECK-DAG: arith.constant dense<125> : tensor<1x1xi8>
// CHECK-DAG: arith.constant dense<1.250000e+00> : tensor<1x1xbf16>
func.func @macro_search() -> (!fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32>, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32, search = 4>, axis = 1>) {
  %c = arith.constant dense<[[1.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %q0 = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32>, axis = 1>
  %q1 = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32, search = 4>, axis = 1>
  return %q0, %q1 : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32>, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 32, search = 4>, axis = 1>
}

// -----

// dense_resource inputs (f32 and bf16 blobs, read directly): row r is
// @mxfp4_ties row 0 times 2^r, so every row has the same codes and the scale
// bytes count up from 0x7F. 64 codes bytes become a dense_resource named
// after the input blob.
// CHECK-LABEL: func.func @resources
// CHECK-DAG: arith.constant dense_resource<fp4_w0_codes> : tensor<4x16xi8>
// CHECK-DAG: arith.constant dense_resource<fp4_w1_codes> : tensor<4x16xi8>
// CHECK-DAG: arith.constant dense<"0x7F808182"> : tensor<4x1xi8>
// CHECK-DAG: arith.constant dense<"0x7F808182"> : tensor<4x1xi8>
// CHECK-NOT: dense_resource<w
// CHECK: fp4_w0_codes: "0x08000000[[ROW:2042647688FA21436507107DEA000000]][[ROW]][[ROW]][[ROW]]"
// CHECK: fp4_w1_codes: "0x08000000[[ROW]][[ROW]][[ROW]][[ROW]]"
func.func @resources() -> (!fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  %a = arith.constant dense_resource<w0> : tensor<4x32xf32>
  %b = arith.constant dense_resource<w1> : tensor<4x32xbf16>
  %q0 = fp4.quantize %a : tensor<4x32xf32> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q1 = fp4.quantize %b : tensor<4x32xbf16> -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q0, %q1 : !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}

{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803E0000403F0000A03F0000E03F00002040000060400000A0400000E040000080BE000000800000A0BF0000B0C00000003F0000803F0000C03F0000004000004040000080400000C04000000000CDCCCC3D9A99993E000030C00000B040000040BF000060C00000000000000000000000000000000000000000000000000000003F0000C03F00002040000060400000A0400000E0400000204100006041000000BF00000080000020C0000030C10000803F0000004000004040000080400000C040000000410000404100000000CDCC4C3E9A99193F0000B0C0000030410000C0BF0000E0C00000000000000000000000000000000000000000000000000000803F000040400000A0400000E04000002041000060410000A0410000E041000080BF000000800000A0C00000B0C100000040000080400000C0400000004100004041000080410000C04100000000CDCCCC3E9A99993F000030C10000B041000040C0000060C1000000000000000000000000000000000000000000000000000000400000C04000002041000060410000A0410000E0410000204200006042000000C000000080000020C1000030C2000080400000004100004041000080410000C041000000420000404200000000CDCC4C3F9A9919400000B0C1000030420000C0C00000E0C1000000000000000000000000000000000000000000000000",
      w1: "0x02000000803E403FA03FE03F20406040A040E04080BE0080A0BFB0C0003F803FC03F004040408040C0400000CD3D9A3E30C0B04040BF60C0000000000000000000000000003FC03F20406040A040E0402041604100BF008020C030C1803F004040408040C0400041404100004D3E1A3FB0C03041C0BFE0C0000000000000000000000000803F4040A040E04020416041A041E04180BF0080A0C0B0C100408040C040004140418041C0410000CD3E9A3F30C1B04140C060C10000000000000000000000000040C04020416041A041E0412042604200C0008020C130C28040004140418041C0410042404200004D3F1A40B0C13042C0C0E0C1000000000000000000000000"
    }
  }
#-}

// -----

// One constant feeding two quantizations folds twice and is then erased.
// Non-constant inputs and casts the pattern cannot apply exactly (truncf from
// f64) are left alone.
// CHECK-LABEL: func.func @shared_and_unfoldable
// CHECK-DAG: arith.constant dense<102> : tensor<1x16xi8>
// CHECK-DAG: arith.constant dense<119> : tensor<1x16xi8>
// CHECK-NOT: arith.constant dense<1.000000e+00> : tensor<1x32xf32>
// CHECK: fp4.quantize %{{.*}} : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: arith.truncf
// CHECK: fp4.quantize %{{.*}} : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @shared_and_unfoldable(%arg: tensor<1x32xf32>) -> (!fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  %c = arith.constant dense<1.0> : tensor<1x32xf32>
  %q0 = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %q1 = fp4.quantize %c : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %q2 = fp4.quantize %arg : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %d = arith.constant dense<1.0> : tensor<1x32xf64>
  %t = arith.truncf %d : tensor<1x32xf64> to tensor<1x32xf32>
  %q3 = fp4.quantize %t : tensor<1x32xf32> -> !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return %q0, %q1, %q2, %q3 : !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>,
    !fp4.tensor<1x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
}
