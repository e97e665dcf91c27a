// The per-term kernels of fp4.correction_matmul (CorrectionToGPU.cpp): a
// product that is not part of a fusable chain (here each term adds to an
// argument, so there is nothing to fuse) lowers on its own. The 2:4
// residual against the quantized weight is dense enough for the W4A16
// family (densify + matmul + accumulate); the other terms are gathers.
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90" -verify-diagnostics | FileCheck %s

// CHECK: module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_correction_0, variant = "correction_gather", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_correction_1, variant = "correction_gather", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_correction_2, variant = "correction_gather", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_densify_3, variant = "densify", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_accumulate_4, variant = "accumulate", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_correction_5, variant = "correction_gather", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-SAME: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_6, variant = "decode_w4a16", {{[^>]*}}shared_bytes = 0, args = [{{[^]]*}}]>]>
// CHECK-LABEL: func.func @terms(
// CHECK-NOT: fp4.{{matmul|correction_matmul}}
// CHECK: call @fp4_correction_0_launch(
// CHECK: call @fp4_correction_1_launch(
// CHECK: call @fp4_correction_2_launch(
// CHECK: call @fp4_densify_3_launch(%{{.*}}, %{{.*}}, %[[D:.*]]) : (memref<16x64x2xbf16>, memref<16x64x2xi8>, memref<16x256xbf16>)
// CHECK: call @fp4_matmul_6_launch(%{{.*}}, %{{.*}}, %{{.*}}, %[[P:.*]]) : (memref<16x256xbf16>, memref<96x128xi8>, memref<96x8xi8>, memref<16x96xf32>)
// CHECK: call @fp4_accumulate_4_launch(
// CHECK: call @fp4_correction_5_launch({{.*}}) : (memref<16x64x2xbf16>, memref<16x64x2xi8>, memref<96x8x2xbf16>, memref<96x8x2xi8>, memref<16x96xf32>, memref<16x96xbf16>)
// CHECK-NOT: fp4.{{matmul|correction_matmul}}
// CHECK: return

// CHECK: gpu.module @fp4_kernels
// CHECK: gpu.func @fp4_correction_0(
// CHECK: gpu.func @fp4_densify_3(

!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!sx = tensor<16x8x2xbf16>
!ix = tensor<16x8x2xi8>
!sw = tensor<96x8x2xbf16>
!iw = tensor<96x8x2xi8>
!rv = tensor<16x64x2xbf16>
!ri = tensor<16x64x2xi8>
!y = tensor<16x96xf32>
func.func @terms(%qx: !qx, %qw: !qw, %xv: !sx, %xi: !ix, %wv: !sw, %wi: !iw,
                 %rv: !rv, %ri: !ri, %acc: !y)
    -> (!y, !y, !y, !y, tensor<16x96xbf16>) {
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %acc : (!sx, !ix), (!qw), !y -> !y
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %acc : (!qx), (!sw, !iw), !y -> !y
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %acc : (!sx, !ix), (!sw, !iw), !y -> !y
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %acc : (!rv, !ri), (!qw), !y -> !y
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %acc : (!rv, !ri), (!sw, !iw), !y -> tensor<16x96xbf16>
  return %y1, %y2, %y3, %y4, %y5 : !y, !y, !y, !y, tensor<16x96xbf16>
}
