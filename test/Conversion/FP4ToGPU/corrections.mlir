// The accuracy-recipe ops on the GPU (CorrectionToGPU.h): rotate + block
// top-2 outliers on both operands + the 2:4 residual (the full recipe of
// docs/Accuracy.md, W4A4), and calibrated static channels (W4A16): every fp4
// op becomes a launch, none stays on the host. The full recipe's product
// terms are every activation part times every weight part, so they lower as
// one fused plan (FusedCorrectionChain.h): the stacker writes Q(x_rest) with
// its outliers (one bf16 row group) and the dense 2:4 residual (a second),
// one W4A16 decode launch over the 32 stacked rows streams the quantized
// weight once, and the warp-per-row epilogue sums the two row groups with
// the weight outliers' product.
// corrections-terms.mlir has the per-term kernels.
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90" -verify-diagnostics | FileCheck %s

// CHECK: module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [
// CHECK-SAME: <op = "fp4.rotate", {{[^@]*}}launches = [<@fp4_kernels::@fp4_rotate_0, variant = "rotate", {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.split_outliers", {{[^@]*}}launches = [<@fp4_kernels::@fp4_split_outliers_1, variant = "split_outliers", {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.residual", inputs = ["input" : memref<16x256xf32>, "quantized.codes" : memref<16x128xi8>, "quantized.scales" : memref<16x8xi8>], outputs = ["values" : memref<16x64x2xbf16>, "indices" : memref<16x64x2xi8>], scratch = [], launches = [<@fp4_kernels::@fp4_residual_2, variant = "residual_topk", grid = [8, 1, 1], block = [128, 1, 1], shared_bytes = 0, args = ["input", "quantized.codes", "quantized.scales", "values", "indices"]>]>
// CHECK-SAME: <op = "fp4.correction_matmul", inputs = ["group0.dense.codes" : memref<16x128xi8>, "group0.dense.scales" : memref<16x8xi8>, "group0.values" : memref<16x8x2xbf16>, "group0.indices" : memref<16x8x2xi8>, "group1.values" : memref<16x64x2xbf16>, "group1.indices" : memref<16x64x2xi8>], outputs = ["stacked0" : memref<32x256xbf16>, "summed_t" : memref<256x16xf32>], scratch = [], launches = [<@fp4_kernels::@fp4_stack_activations_5, variant = "stack_activations", {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.correction_matmul", inputs = ["stacked0" : memref<32x256xbf16>, "weight.codes" : memref<96x128xi8>, "weight.scales" : memref<96x8xi8>], outputs = ["product0" : memref<32x96xf32>], scratch = [], launches = [<@fp4_kernels::@fp4_matmul_6, variant = "decode_w4a16", {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_stacked_epilogue_7, variant = "stacked_epilogue_warp", grid = [24, 1, 1], block = [128, 1, 1], shared_bytes = 0, {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.split_channels", {{[^@]*}}launches = [<@fp4_kernels::@fp4_split_channels_8, variant = "split_channels", {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.correction_matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_correction_10, variant = "correction_gather", {{[^>]*}}>]>
// CHECK-SAME: <op = "fp4.matmul", {{[^@]*}}launches = [<@fp4_kernels::@fp4_matmul_14, variant = "prefill_w4a16_smem", grid = [1, 2, 1], block = [256, 1, 1], shared_bytes = {{[0-9]+}}, {{[^>]*}}>]>]>
// CHECK-LABEL: func.func @full(
// CHECK-NOT: fp4.{{rotate|split_outliers|residual|quantize|matmul|correction_matmul}}
// CHECK: call @fp4_rotate_0_launch(
// CHECK: call @fp4_split_outliers_1_launch(
// CHECK: call @fp4_quantize_11_launch(
// CHECK: call @fp4_residual_2_launch(
// CHECK: call @fp4_rotate_3_launch(
// CHECK: call @fp4_split_outliers_4_launch(
// CHECK: call @fp4_quantize_12_launch(
// CHECK: call @fp4_stack_activations_5_launch({{.*}}) : (memref<16x128xi8>, memref<16x8xi8>, memref<16x8x2xbf16>, memref<16x8x2xi8>, memref<16x64x2xbf16>, memref<16x64x2xi8>, memref<32x256xbf16>, memref<256x16xf32>)
// CHECK: call @fp4_matmul_6_launch({{.*}}) : (memref<32x256xbf16>, memref<96x128xi8>, memref<96x8xi8>, memref<32x96xf32>)
// CHECK: call @fp4_stacked_epilogue_7_launch({{.*}}) : (memref<32x96xf32>, memref<256x16xf32>, memref<96x8x2xbf16>, memref<96x8x2xi8>, memref<16x96xbf16>)
// CHECK-NOT: fp4.{{rotate|split_outliers|residual|quantize|matmul|correction_matmul}}
// CHECK: return

// CHECK-LABEL: func.func @channels(
// CHECK-NOT: fp4.{{split_channels|quantize|matmul|correction_matmul}}
// CHECK: call @fp4_split_channels_8_launch(
// CHECK: call @fp4_split_channels_9_launch(
// CHECK: call @fp4_quantize_13_launch(
// CHECK: call @fp4_matmul_14_launch(
// CHECK: call @fp4_correction_10_launch({{.*}}) : (memref<130x3xbf16>, memref<77x3xbf16>, memref<130x77xf32>, memref<130x77xf32>)
// CHECK-NOT: fp4.{{split_channels|quantize|matmul|correction_matmul}}
// CHECK: return

// The kernels: one thread per block (top-k: k passes of scf.for over the
// block), per group (rotation, unrolled butterflies), per element (the
// stacker), a warp per weight row (the epilogue: a loop over the row's
// block slots, then a butterfly over the slot lanes).
// CHECK: gpu.module @fp4_kernels
// CHECK: gpu.func @fp4_rotate_0(%{{.*}}: memref<16x256xbf16> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<16x256xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.func @fp4_split_outliers_1(
// CHECK-COUNT-2: scf.for
// CHECK: gpu.func @fp4_residual_2(
// CHECK: gpu.func @fp4_stack_activations_5(
// CHECK: gpu.func @fp4_stacked_epilogue_7(
// CHECK: scf.for
// CHECK-COUNT-1: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.func

!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @full(%x: tensor<16x256xbf16>, %w: tensor<96x256xbf16>) -> tensor<16x96xbf16> {
  %xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  %rest, %xv, %xi = fp4.split_outliers %xr block 32 top 2 : tensor<16x256xf32> -> tensor<16x8x2xbf16>, tensor<16x8x2xi8>
  %qx = fp4.quantize %rest : tensor<16x256xf32> -> !qx
  %rv, %ri = fp4.residual %rest, %qx block 4 top 2 : tensor<16x256xf32>, !qx -> tensor<16x64x2xbf16>, tensor<16x64x2xi8>
  %wr = fp4.rotate %w hadamard 32 seed 0 axis 1 : tensor<96x256xbf16> -> tensor<96x256xf32>
  %wrest, %wv, %wi = fp4.split_outliers %wr block 32 top 2 : tensor<96x256xf32> -> tensor<96x8x2xbf16>, tensor<96x8x2xi8>
  %qw = fp4.quantize %wrest : tensor<96x256xf32> -> !qw
  %y0 = fp4.matmul %qx, %qw : !qx, !qw -> tensor<16x96xf32>
  %y1 = fp4.correction_matmul (%xv, %xi block 32), (%qw) acc %y0 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y2 = fp4.correction_matmul (%qx), (%wv, %wi block 32) acc %y1 : (!qx), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y3 = fp4.correction_matmul (%xv, %xi block 32), (%wv, %wi block 32) acc %y2 : (tensor<16x8x2xbf16>, tensor<16x8x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xf32>
  %y4 = fp4.correction_matmul (%rv, %ri block 4), (%qw) acc %y3 : (tensor<16x64x2xbf16>, tensor<16x64x2xi8>), (!qw), tensor<16x96xf32> -> tensor<16x96xf32>
  %y5 = fp4.correction_matmul (%rv, %ri block 4), (%wv, %wi block 32) acc %y4 : (tensor<16x64x2xbf16>, tensor<16x64x2xi8>), (tensor<96x8x2xbf16>, tensor<96x8x2xi8>), tensor<16x96xf32> -> tensor<16x96xbf16>
  return %y5 : tensor<16x96xbf16>
}

// Static channels (W4A16 on the rest): the gathered channels meet in bf16.
func.func @channels(%x: tensor<130x224xbf16>, %w: tensor<77x224xbf16>) -> tensor<130x77xf32> {
  %rest, %g = fp4.split_channels %x channels [5, 70, 131] : tensor<130x224xbf16> -> tensor<130x3xbf16>
  %wrest, %wg = fp4.split_channels %w channels [5, 70, 131] : tensor<77x224xbf16> -> tensor<77x3xbf16>
  %qw = fp4.quantize %wrest : tensor<77x224xbf16> -> !fp4.tensor<77x224xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y0 = fp4.matmul %rest, %qw : tensor<130x224xbf16>, !fp4.tensor<77x224xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<130x77xf32>
  %y = fp4.correction_matmul (%g), (%wg) acc %y0 : (tensor<130x3xbf16>), (tensor<77x3xbf16>), tensor<130x77xf32> -> tensor<130x77xf32>
  return %y : tensor<130x77xf32>
}
