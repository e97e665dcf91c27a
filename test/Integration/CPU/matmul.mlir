// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s

// fp4.matmul (y = x * W^T, K-major operands, f32 accumulation) on the CPU.
// K = 32. Weights (MXFP4, both rows exact on the grid):
//   w0 = 1 at k = 0 and k = 31, 0 elsewhere   (amax 1: X = 2^-2, code 6)
//   w1 = 2 * (-1)^k                           (amax 2: X = 2^-1, codes 6 / 14)
// Activations (bf16, exact):
//   x0 = [1, 2, ..., 32], x1 = 0.5 everywhere, x2 = 256 at k = 0, 1 at k = 31.
// Exact products:
//   y00 = 1 + 32 = 33, y01 = 2 * (1 - 2 + 3 - ... - 32) = -32,
//   y10 = 0.5 * 2 = 1, y11 = 0, y20 = 256 + 1 = 257, y21 = 512 - 2 = 510.

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @print_f32(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}


func.func @print_bf16(%t: tensor<?x?xbf16>) {
  %m = bufferization.to_buffer %t : tensor<?x?xbf16> to memref<?x?xbf16>
  %u = memref.cast %m : memref<?x?xbf16> to memref<*xbf16>
  call @printMemrefBF16(%u) : (memref<*xbf16>) -> ()
  return
}
func.func private @printMemrefBF16(memref<*xbf16>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF16(memref<*xf16>) attributes {llvm.emit_c_interface}

func.func @print3(%t: tensor<2x3x2xf32>) {
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x3x2xf32> into tensor<6x2xf32>
  %d = tensor.cast %c : tensor<6x2xf32> to tensor<?x?xf32>
  call @print_f32(%d) : (tensor<?x?xf32>) -> ()
  return
}

func.func @weights() -> tensor<2x32xf32> {
  %e = tensor.empty() : tensor<2x32xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x32xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c31 = arith.constant 31 : index
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %mtwo = arith.constant -2.0 : f32
    %k0 = arith.cmpi eq, %k, %c0 : index
    %k31 = arith.cmpi eq, %k, %c31 : index
    %ends = arith.ori %k0, %k31 : i1
    %w0 = arith.select %ends, %one, %zero : f32
    %odd = arith.andi %k, %c1 : index
    %isodd = arith.cmpi eq, %odd, %c1 : index
    %w1 = arith.select %isodd, %mtwo, %two : f32
    %row0 = arith.cmpi eq, %n, %c0 : index
    %v = arith.select %row0, %w0, %w1 : f32
    linalg.yield %v : f32
  } -> tensor<2x32xf32>
  return %w : tensor<2x32xf32>
}

func.func @activations() -> tensor<3x32xbf16> {
  %e = tensor.empty() : tensor<3x32xbf16>
  %x = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<3x32xbf16>) {
  ^bb0(%o: bf16):
    %m = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c31 = arith.constant 31 : index
    %ki = arith.index_cast %k : index to i32
    %one = arith.constant 1 : i32
    %k1 = arith.addi %ki, %one : i32
    %v0 = arith.sitofp %k1 : i32 to bf16
    %v1 = arith.constant 0.5 : bf16
    %big = arith.constant 256.0 : bf16
    %small = arith.constant 1.0 : bf16
    %zero = arith.constant 0.0 : bf16
    %k0 = arith.cmpi eq, %k, %c0 : index
    %k31 = arith.cmpi eq, %k, %c31 : index
    %s = arith.select %k31, %small, %zero : bf16
    %v2 = arith.select %k0, %big, %s : bf16
    %r0 = arith.cmpi eq, %m, %c0 : index
    %r1 = arith.cmpi eq, %m, %c1 : index
    %a = arith.select %r1, %v1, %v2 : bf16
    %v = arith.select %r0, %v0, %a : bf16
    linalg.yield %v : bf16
  } -> tensor<3x32xbf16>
  return %x : tensor<3x32xbf16>
}

// W4A16 in f32 and rounded once to bf16 (257 -> 256: a tie between 256 and
// 258 goes to even; 510 is representable), and to f16 (all exact).
// CHECK-LABEL: w4a16
// CHECK: {{\[}}[33, -32],
// CHECK-NEXT: [1, 0],
// CHECK-NEXT: [257, 510]]
// CHECK: {{\[}}[33, -32],
// CHECK-NEXT: [1, 0],
// CHECK-NEXT: [256, 510]]
// CHECK: {{\[}}[33, -32],
// CHECK-NEXT: [1, 0],
// CHECK-NEXT: [257, 510]]
//
// W4A4: x quantized with MXFP4 as well. x0: amax 32, X = 8, k/8 rounds to
// 0 0 4 4 4 8 8 8 8 8 12 12 12 16 (x7) 24 (x7) 32 (x5) (ties to even), so
// y00 = 0 + 32 = 32 and y01 = 2 * (-16) = -32; x1 is exact; x2: X = 64,
// 256 -> 256 but 1 / 64 -> 0, so y20 = 256, y21 = 512.
// CHECK-LABEL: w4a4
// CHECK: {{\[}}[32, -32],
// CHECK-NEXT: [1, 0],
// CHECK-NEXT: [256, 512]]
//
// Batched lhs [x, 2x] (f32) with the shared rank-2 weight, then fully
// batched with rhs [W, -W].
// CHECK-LABEL: batched
// CHECK: {{\[}}[33, -32],
// CHECK-NEXT: [1, 0],
// CHECK-NEXT: [257, 510],
// CHECK-NEXT: [66, -64],
// CHECK-NEXT: [2, 0],
// CHECK-NEXT: [514, 1020]]
// CHECK: {{\[}}[33, -32],
// CHECK-NEXT: [1, 0],
// CHECK-NEXT: [257, 510],
// CHECK-NEXT: [-66, 64],
// CHECK-NEXT: [-2, 0],
// CHECK-NEXT: [-514, -1020]]
func.func @main() {
  %w = call @weights() : () -> tensor<2x32xf32>
  %x = call @activations() : () -> tensor<3x32xbf16>
  %wq = fp4.quantize %w : tensor<2x32xf32> -> !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1>

  vector.print str "w4a16\n"
  %y = fp4.matmul %x, %wq : tensor<3x32xbf16>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<3x2xf32>
  %yd = tensor.cast %y : tensor<3x2xf32> to tensor<?x?xf32>
  call @print_f32(%yd) : (tensor<?x?xf32>) -> ()
  %yb = fp4.matmul %x, %wq : tensor<3x32xbf16>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<3x2xbf16>
  %ybd = tensor.cast %yb : tensor<3x2xbf16> to tensor<?x?xbf16>
  call @print_bf16(%ybd) : (tensor<?x?xbf16>) -> ()
  %yh = fp4.matmul %x, %wq : tensor<3x32xbf16>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<3x2xf16>
  %yhm = bufferization.to_buffer %yh : tensor<3x2xf16> to memref<3x2xf16>
  %yhu = memref.cast %yhm : memref<3x2xf16> to memref<*xf16>
  call @printMemrefF16(%yhu) : (memref<*xf16>) -> ()

  vector.print str "w4a4\n"
  %xq = fp4.quantize %x : tensor<3x32xbf16> -> !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y4 = fp4.matmul %xq, %wq : !fp4.tensor<3x32xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<3x2xf32>
  %y4d = tensor.cast %y4 : tensor<3x2xf32> to tensor<?x?xf32>
  call @print_f32(%y4d) : (tensor<?x?xf32>) -> ()

  vector.print str "batched\n"
  %xf = arith.extf %x : tensor<3x32xbf16> to tensor<3x32xf32>
  %x2 = arith.addf %xf, %xf : tensor<3x32xf32>
  %xb0 = tensor.expand_shape %xf [[0, 1], [2]] output_shape [1, 3, 32] : tensor<3x32xf32> into tensor<1x3x32xf32>
  %xb1 = tensor.expand_shape %x2 [[0, 1], [2]] output_shape [1, 3, 32] : tensor<3x32xf32> into tensor<1x3x32xf32>
  %xb = tensor.concat dim(0) %xb0, %xb1 : (tensor<1x3x32xf32>, tensor<1x3x32xf32>) -> tensor<2x3x32xf32>
  %yb2 = fp4.matmul %xb, %wq : tensor<2x3x32xf32>, !fp4.tensor<2x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<2x3x2xf32>
  call @print3(%yb2) : (tensor<2x3x2xf32>) -> ()
  %wn = arith.negf %w : tensor<2x32xf32>
  %wb0 = tensor.expand_shape %w [[0, 1], [2]] output_shape [1, 2, 32] : tensor<2x32xf32> into tensor<1x2x32xf32>
  %wb1 = tensor.expand_shape %wn [[0, 1], [2]] output_shape [1, 2, 32] : tensor<2x32xf32> into tensor<1x2x32xf32>
  %wb = tensor.concat dim(0) %wb0, %wb1 : (tensor<1x2x32xf32>, tensor<1x2x32xf32>) -> tensor<2x2x32xf32>
  %wbq = fp4.quantize %wb : tensor<2x2x32xf32> -> !fp4.tensor<2x2x32xf4E2M1FN, #fp4.mxfp4, axis = 2>
  %yb3 = fp4.matmul %xb, %wbq : tensor<2x3x32xf32>, !fp4.tensor<2x2x32xf4E2M1FN, #fp4.mxfp4, axis = 2> -> tensor<2x3x2xf32>
  call @print3(%yb3) : (tensor<2x3x2xf32>) -> ()
  return
}
