// RUN: fp4-opt %s -fp4-pipeline-cpu | FileCheck %s
// RUN: fp4-opt %s -fp4-pipeline-cpu | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM
// RUN: fp4-opt %s -fp4-pipeline-cpu=lower-to-llvm=false | FileCheck %s --check-prefix=LOOPS

// Every fp4 op, every scheme, a dense_resource weight, dynamic shapes and
// the memref ABI used by JIT callers go through the whole CPU pipeline to
// the LLVM dialect and then to LLVM IR.

// CHECK-NOT: fp4.
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-NOT: bufferization.
// CHECK-NOT: unrealized_conversion_cast
// The weight stays a resource, flattened to one 1-D array
// (fp4-flatten-constant-globals): the same bytes, one LLVM array.
// CHECK-DAG: llvm.mlir.global private constant @{{.*}}(dense_resource<weight> : tensor<256xf32>) {{.*}} : !llvm.array<256 x f32>
// CHECK-DAG: llvm.func @quantize_to_buffers(
// CHECK-DAG: llvm.func @_mlir_ciface_quantize_to_buffers(
// CHECK-DAG: llvm.func @every_scheme(
// CHECK-DAG: llvm.func @resource_matmul(

// LLVM: @[[W:.*]] = private constant [256 x float]
// LLVM-SAME: [float 1.250000e-01, float 2.500000e-01, float 3.750000e-01,
// LLVM: define void @quantize_to_buffers(
// LLVM: define void @_mlir_ciface_quantize_to_buffers(ptr
// LLVM: define {{.*}} @every_scheme(
// LLVM: define {{.*}} @resource_matmul(
// LLVM: getelementptr {{.*}}@[[W]]

// LOOPS-LABEL: func.func @quantize_to_buffers
// LOOPS-SAME: memref<?x64xf32>
// LOOPS: scf.for
// LOOPS-NOT: fp4.
// LOOPS-NOT: linalg.
// LOOPS: return

// The ABI a JIT caller uses: memrefs in, components written in place.
func.func @quantize_to_buffers(%in: memref<?x64xf32>, %codes: memref<?x32xi8>,
                               %scales: memref<?x4xi8>, %deq: memref<?x64xbf16>)
    attributes {llvm.emit_c_interface} {
  %t = bufferization.to_tensor %in restrict : memref<?x64xf32> to tensor<?x64xf32>
  %q = fp4.quantize %t : tensor<?x64xf32> -> !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
  %c, %s, %g = fp4.unpack %q : !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1> -> tensor<?x32xi8>, tensor<?x4xi8>, tensor<f32>
  bufferization.materialize_in_destination %c in restrict writable %codes : (tensor<?x32xi8>, memref<?x32xi8>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %scales : (tensor<?x4xi8>, memref<?x4xi8>) -> ()
  %d = fp4.dequantize %q : !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1> -> tensor<?x64xbf16>
  bufferization.materialize_in_destination %d in restrict writable %deq : (tensor<?x64xbf16>, memref<?x64xbf16>) -> ()
  return
}

// Functions taking and returning quantized tensors, f16 input, non-last axis.
func.func @every_scheme(%x: tensor<64x?xf16>, %y: tensor<2x256xf32>)
    -> (!fp4.tensor<64x?xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 3>, axis = 0>,
        !fp4.tensor<64x?x!fp4.s1p2, #fp4.hif4, axis = 0>,
        !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro<search = 4>, axis = 1>,
        !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>) {
  %0 = fp4.quantize %x : tensor<64x?xf16> -> !fp4.tensor<64x?xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 3>, axis = 0>
  %1 = fp4.quantize %x : tensor<64x?xf16> -> !fp4.tensor<64x?x!fp4.s1p2, #fp4.hif4, axis = 0>
  %2 = fp4.quantize %y : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro<search = 4>, axis = 1>
  %3 = fp4.quantize %y : tensor<2x256xf32> -> !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
  return %0, %1, %2, %3 : !fp4.tensor<64x?xf4E2M1FN, #fp4.mxfp4<rounding = stochastic, seed = 3>, axis = 0>,
      !fp4.tensor<64x?x!fp4.s1p2, #fp4.hif4, axis = 0>,
      !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro<search = 4>, axis = 1>,
      !fp4.tensor<2x256xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
}

// A dense_resource weight quantized and used by a W4A4 matmul, plus pack.
func.func @resource_matmul(%x: tensor<?x64xbf16>, %c: tensor<4x32xi8>, %m: tensor<4x1xi32>)
    -> (tensor<?x4xbf16>, tensor<?x4xf32>) {
  %w = arith.constant dense_resource<weight> : tensor<4x64xf32>
  %wq = fp4.quantize %w : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1>
  %xq = fp4.quantize %x : tensor<?x64xbf16> -> !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %y = fp4.matmul %xq, %wq : !fp4.tensor<?x64xf4E2M1FN, #fp4.nvfp4, axis = 1>, !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil>, axis = 1> -> tensor<?x4xbf16>
  %h = fp4.pack %c, %m : tensor<4x32xi8>, tensor<4x1xi32> -> !fp4.tensor<4x64x!fp4.s1p2, #fp4.hif4, axis = 1>
  %z = fp4.matmul %x, %h : tensor<?x64xbf16>, !fp4.tensor<4x64x!fp4.s1p2, #fp4.hif4, axis = 1> -> tensor<?x4xf32>
  return %y, %z : tensor<?x4xbf16>, tensor<?x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000003E0000803E0000C03E0000003F0000203F0000403F0000603F0000803F0000903F0000A03F0000B03F0000C03F0000D03F0000E03F0000F03F00000040000008400000104000001840000020400000284000003040000038400000404000004840000050400000584000006040000068400000704000007840000080400000844000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000040C09EE739C03DCF33C0DBB62DC07A9E27C0188621C0B76D1BC0555515C0F43C0FC0922409C0310C03C09EE7F9BFDBB6EDBF1886E1BF5555D5BF9224C9BFCFF3BCBF0CC3B0BF4992A4BF866198BFC3308CBF000080BF7A9E67BFF43C4FBF6EDB36BFE8791EBF621806BFB76DDBBEABAAAABE3DCF73BE254912BE310C43BD310C433D2549123E3DCF733EABAAAA3EB76DDB3E6218063FE8791E3F6EDB363FF43C4F3F7A9E673F0000803FC3308C3F8661983F4992A43F0CC3B03FCFF3BC3F9224C93F5555D53F1886E13FDBB6ED3F9EE7F93F310C034092240940F43C0F4055551540B76D1B40188621407A9E2740DBB62D403DCF33409EE73940000040400000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000C0BF00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}
