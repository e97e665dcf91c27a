// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// fp4.rotate and fp4.permute run on the CPU. Expected values come from an
// independent computation (numpy: explicit Sylvester matrices in f64, a
// separate implementation of the documented sign generator
//   D[i] = -1 iff bit 31 of counterRandom(seed, i, 0x48414441),
// f32 products rounded once); inputs are small integers so every butterfly
// sum is exact and only the final scaling by c_d rounds. Non-trivial f32
// results are compared as bit patterns (printed as i32).

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @print_f32(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print_bits(%t: tensor<?x?xf32>) {
  %b = arith.bitcast %t : tensor<?x?xf32> to tensor<?x?xi32>
  %m = bufferization.to_buffer %b : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// Deterministic Hadamard-16: y = x H16 / 4 (exact).
// CHECK-LABEL: deterministic16
// CHECK: {{\[}}[34, -2, -4, 0, -8, 0, 0, 0, -16, 0, 0, 0, 0, 0, 0, 0],
// CHECK-NEXT: [3.25, -1.25, 1.25, 7.75, 1.25, -2.25, -3.75, -0.25, 0.25, 6.75, -1.75, -0.25, -0.75, -1.25, 4.25, -1.25]]
func.func @deterministic16() {
  vector.print str "deterministic16\n"
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                             [3.0, -1.0, 0.0, 2.0, 5.0, -4.0, 1.0, 1.0, 0.0, 0.0, -2.0, 7.0, 3.0, 3.0, -6.0, 1.0]]> : tensor<2x16xf32>
  %y = fp4.rotate %x hadamard 16 axis 1 : tensor<2x16xf32> -> tensor<2x16xf32>
  %d = tensor.cast %y : tensor<2x16xf32> to tensor<?x?xf32>
  call @print_f32(%d) : (tensor<?x?xf32>) -> ()
  return
}

// Randomized Hadamard-16, seed 7: signs + + - + + - - + + + - - - + - -,
// y = (x * s) H16 / 4; the inverse (H16 / 4, then the signs) gives x back
// exactly. The input is bf16 and the first result bf16 (all values exact).
// CHECK-LABEL: randomized16
// CHECK: {{\[}}[-7.5, -9.5, 18.5, 0.5, 7.5, 5.5, 3.5, 1.5, 9.5, 3.5, -18.5, 15.5, -5.5, -7.5, -1.5, -11.5]]
// CHECK: {{\[}}[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]]
func.func @randomized16() {
  vector.print str "randomized16\n"
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<1x16xbf16>
  %y = fp4.rotate %x hadamard 16 seed 7 axis 1 : tensor<1x16xbf16> -> tensor<1x16xbf16>
  %yf = arith.extf %y : tensor<1x16xbf16> to tensor<1x16xf32>
  %d = tensor.cast %yf : tensor<1x16xf32> to tensor<?x?xf32>
  call @print_f32(%d) : (tensor<?x?xf32>) -> ()
  %z = fp4.rotate %y hadamard 16 seed 7 axis 1 inverse : tensor<1x16xbf16> -> tensor<1x16xf32>
  %e = tensor.cast %z : tensor<1x16xf32> to tensor<?x?xf32>
  call @print_f32(%e) : (tensor<?x?xf32>) -> ()
  return
}

// Hadamard-32: the sums S are exact integers, y = f32(S * c32) with
// c32 = 0x3E3504F3 (f32(1/sqrt(32))); bit patterns.
// CHECK-LABEL: hadamard32
// CHECK: {{\[}}[1043662067, -1072491515, 1067344981, -1074207026, -1068042783, -1061507813, 1073276622, -1055158207, -1084078544, -1074207026, -1074207026, 1073276622, 1073276622, -1074207026, -1074207026, 1073276622, 1043662067, 1073276622, -1061507813, -1074207026, -1074207026, -1061507813, 1073276622, 1085975835, 1073276622, -1074207026, -1074207026, 1073276622, 1073276622, -1074207026, -1074207026, 1073276622]]
func.func @hadamard32() {
  vector.print str "hadamard32\n"
  %x = arith.constant dense<[[-5.0, 2.0, -2.0, 5.0, 1.0, -3.0, 4.0, 0.0, -4.0, 3.0, -1.0, -5.0, 2.0, -2.0, 5.0, 1.0, -3.0, 4.0, 0.0, -4.0, 3.0, -1.0, -5.0, 2.0, -2.0, 5.0, 1.0, -3.0, 4.0, 0.0, -4.0, 3.0]]> : tensor<1x32xf32>
  %y = fp4.rotate %x hadamard 32 axis 1 : tensor<1x32xf32> -> tensor<1x32xf32>
  %d = tensor.cast %y : tensor<1x32xf32> to tensor<?x?xf32>
  call @print_bits(%d) : (tensor<?x?xf32>) -> ()
  return
}

// A strided rotation along axis 0 (size 2, stride 4: pairs (k, k + 4)):
// y[k] = (x[k] + x[k+4]) c2, y[k+4] = (x[k] - x[k+4]) c2, c2 = 0x3F3504F3.
// CHECK-LABEL: strided_axis0
// CHECK: {{\[}}[1074250678, 1060439283],
// CHECK-NEXT: [1082639286, -1087044365],
// CHECK-NEXT: [-1064844362, 1080182320],
// CHECK-NEXT: [1085605107, 1093993715],
// CHECK-NEXT: [-1087044365, 1074250678],
// CHECK-NEXT: [0, -1063361451],
// CHECK-NEXT: [1082639286, 1080182320],
// CHECK-NEXT: [1082639286, -1078655757]]
func.func @strided_axis0() {
  vector.print str "strided_axis0\n"
  %x = arith.constant dense<[[1.0, 2.0], [3.0, -4.0], [0.0, 5.0], [7.0, 7.0], [2.0, -1.0], [3.0, 3.0], [-6.0, 0.0], [1.0, 9.0]]> : tensor<8x2xf32>
  %y = fp4.rotate %x hadamard 2 stride 4 axis 0 : tensor<8x2xf32> -> tensor<8x2xf32>
  %d = tensor.cast %y : tensor<8x2xf32> to tensor<?x?xf32>
  call @print_bits(%d) : (tensor<?x?xf32>) -> ()
  return
}

// Permutations gather: result[i] = x[perm[i]] along the axis.
// CHECK-LABEL: permute
// CHECK: {{\[}}[3, 1, 4, 2],
// CHECK-NEXT: [7, 5, 8, 6]]
// CHECK: {{\[}}[5, 6, 7, 8],
// CHECK-NEXT: [1, 2, 3, 4]]
func.func @permute() {
  vector.print str "permute\n"
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %y = fp4.permute %x axis 1 permutation [2, 0, 3, 1] : tensor<2x4xf32>
  %d = tensor.cast %y : tensor<2x4xf32> to tensor<?x?xf32>
  call @print_f32(%d) : (tensor<?x?xf32>) -> ()
  %z = fp4.permute %x axis 0 permutation [1, 0] : tensor<2x4xf32>
  %e = tensor.cast %z : tensor<2x4xf32> to tensor<?x?xf32>
  call @print_f32(%e) : (tensor<?x?xf32>) -> ()
  return
}

func.func @main() {
  call @deterministic16() : () -> ()
  call @randomized16() : () -> ()
  call @hadamard32() : () -> ()
  call @strided_axis0() : () -> ()
  call @permute() : () -> ()
  return
}
