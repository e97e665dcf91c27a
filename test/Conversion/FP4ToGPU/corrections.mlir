// The accuracy-recipe ops on the GPU (CorrectionToGPU.h): rotate + block
// top-2 outliers on both operands + the 2:4 residual (the full recipe of
// docs/Accuracy.md, W4A4), and calibrated static channels (W4A16): every fp4
// op becomes a launch, none stays on the host. The full recipe's product
// terms are every activation part times every weight part, so they lower as
// one fused plan (FusedCorrectionChain.h): the stacker writes Q(x_rest) with
// its outliers (one bf16 row group) and the dense 2:4 residual (a second),
// and one W4A16 decode launch over the 32 stacked rows streams the quantized
// weight once and does the epilogue itself (decode_w4a16_epilogue): the
// weight outliers' product from the [K, M] activation sum staged in its
// shared memory, the sum of the two row groups, the rounding to bf16.
// Where only the fused ops read x_rest and
// the rotated x (@full), one activation-prep kernel (FusedActivationPrep.h)
// computes the whole activation side from x in place of the rotate, split,
// quantize, residual and stacker launches (@full_rest_used keeps them).
// corrections-terms.mlir has the per-term kernels. decode-max-m=16 keeps
// these 16-row chains on the decode plans (what M <= 8 and unproven weight
// outliers take by default); without it they go to the prefill kernel's
// medium class (corrections-medium.mlir).
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90 decode-max-m=16 decode-outliers=loop" -verify-diagnostics | FileCheck %s
// By default a chain with at most 2 weight-outlier entries per 32-element
// unit multiplies them in the decode kernel's tail, the CTA's entries
// copied to shared memory (one 16-row group per CTA, K = 256 gives one K
// warp: 16 rows x 16 entries x 3 bytes; with the sum and the stages,
// 20224 bytes of dynamic shared memory).
// RUN: fp4-opt %s -convert-fp4-to-gpu="chip=sm_90 decode-max-m=16" | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: <@fp4_kernels::@fp4_matmul_6, variant = "decode_w4a16_epilogue_tail", grid = [6, 1, 1], block = [32, 1, 1], shared_bytes = 20224
// DEFAULT: <@fp4_kernels::@fp4_matmul_10, variant = "decode_w4a16_epilogue_tail", grid = [6, 1, 1], block = [32, 1, 1], shared_bytes = 20224

// CHECK: module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [
// CHECK-SAME: <@fp4_kernels::@fp4_rotate_0, variant = "rotate"
// CHECK-SAME: <@fp4_kernels::@fp4_split_outliers_1, variant = "split_outliers"
// CHECK-SAME: <@fp4_kernels::@fp4_residual_2, variant = "residual_topk"
// CHECK-SAME: <@fp4_kernels::@fp4_stack_activations_5, variant = "stack_activations"
// CHECK-SAME: <@fp4_kernels::@fp4_matmul_6, variant = "decode_w4a16_epilogue"
// CHECK-NOT: stacked_epilogue
// CHECK-SAME: <@fp4_kernels::@fp4_activation_prep_9, variant = "activation_prep_mxfp4_hadamard32_top2_residual"
// CHECK-SAME: <@fp4_kernels::@fp4_matmul_10, variant = "decode_w4a16_epilogue"
// CHECK-SAME: <@fp4_kernels::@fp4_split_channels_11, variant = "split_channels"
// CHECK-SAME: <@fp4_kernels::@fp4_correction_13, variant = "correction_gather"
// CHECK-SAME: <@fp4_kernels::@fp4_matmul_18, variant = "prefill_w4a16_smem"

// CHECK-LABEL: func.func @full_rest_used(
// CHECK-NOT: fp4.{{rotate|split_outliers|residual|quantize|matmul|correction_matmul}}
// CHECK: call @fp4_rotate_0_launch(
// CHECK: call @fp4_split_outliers_1_launch(
// CHECK: call @fp4_quantize_14_launch(
// CHECK: call @fp4_residual_2_launch(
// CHECK: call @fp4_rotate_3_launch(
// CHECK: call @fp4_split_outliers_4_launch(
// CHECK: call @fp4_quantize_15_launch(
// CHECK: call @fp4_stack_activations_5_launch({{.*}}) : (memref<16x128xi8>, memref<16x8xi8>, memref<16x8x2xbf16>, memref<16x8x2xi8>, memref<16x64x2xbf16>, memref<16x64x2xi8>, memref<32x256xbf16>, memref<256x16xf32>)
// CHECK: call @fp4_matmul_6_launch({{.*}}) : (memref<32x256xbf16>, memref<96x128xi8>, memref<96x8xi8>, memref<256x16xf32>, memref<96x8x2xbf16>, memref<96x8x2xi8>, memref<16x96xbf16>)
// CHECK-NOT: fp4.{{rotate|split_outliers|residual|quantize|matmul|correction_matmul}}
// CHECK: return

// The weight side keeps its kernels; the activation side is one launch
// reading x (bf16) and writing the quantized codes and scales (the chain
// alone reads the split's and the residual's results, so they are not
// written) and the stacker's outputs.
// CHECK-LABEL: func.func @full(
// CHECK-NOT: fp4.{{rotate|split_outliers|residual|quantize|matmul|correction_matmul}}
// CHECK: call @fp4_rotate_7_launch(
// CHECK: call @fp4_split_outliers_8_launch(
// CHECK: call @fp4_quantize_16_launch(
// CHECK-NOT: fp4_{{rotate|split_outliers|quantize|residual|stack_activations}}
// CHECK: call @fp4_activation_prep_9_launch({{.*}}) : (memref<16x256xbf16>, memref<16x128xi8>, memref<16x8xi8>, memref<32x256xbf16>, memref<256x16xf32>)
// CHECK: call @fp4_matmul_10_launch({{.*}}) : (memref<32x256xbf16>, memref<96x128xi8>, memref<96x8xi8>, memref<256x16xf32>, memref<96x8x2xbf16>, memref<96x8x2xi8>, memref<16x96xbf16>)
// CHECK-NOT: fp4.{{rotate|split_outliers|residual|quantize|matmul|correction_matmul}}
// CHECK: return

// CHECK-LABEL: func.func @channels(
// CHECK-NOT: fp4.{{split_channels|quantize|matmul|correction_matmul}}
// CHECK: call @fp4_split_channels_11_launch(
// CHECK: call @fp4_split_channels_12_launch(
// CHECK: call @fp4_quantize_17_launch(
// CHECK: call @fp4_matmul_18_launch(
// CHECK: call @fp4_correction_13_launch({{.*}}) : (memref<130x3xbf16>, memref<77x3xbf16>, memref<130x77xf32>, memref<130x77xf32>)
// CHECK-NOT: fp4.{{split_channels|quantize|matmul|correction_matmul}}
// CHECK: return

// The kernels: one thread per block (top-k: k passes of scf.for over the
// block), per group (rotation, unrolled butterflies), per element (the
// stacker), and the decode kernel with its epilogue: the [K, M] activation
// sum copied into shared memory (256 x 16 f32, 16-byte pieces, a barrier),
// per lane unit its rows' outlier entries (one vector load of values and
// one of indices per weight row) times the staged sum's rows at their
// columns, the quad's butterfly (xor 1, 2) for each of the 2 rows x 16 sums,
// then the [32 stacked rows][64 weight rows] stage and a pass summing the
// two row groups into the bf16 result.
// CHECK: gpu.module @fp4_kernels
// CHECK: gpu.func @fp4_rotate_0(%{{.*}}: memref<16x256xbf16> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<16x256xf32> {llvm.noalias}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.func @fp4_split_outliers_1(
// CHECK-COUNT-2: scf.for
// CHECK: gpu.func @fp4_residual_2(
// CHECK: gpu.func @fp4_stack_activations_5(
// CHECK: gpu.func @fp4_matmul_6(
// CHECK-SAME: workgroup(%{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.load {{.*}} : memref<4096xf32>, vector<4xf32>
// CHECK: vector.store {{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK: vector.load {{.*}} : memref<96x8x2xbf16>, vector<2xbf16>
// CHECK: vector.load {{.*}} : memref<96x8x2xi8>, vector<2xi8>
// CHECK: nvvm.mma.sync
// CHECK: vector.load {{.*}} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-64: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: memref.store {{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<2048xf32, #gpu.address_space<workgroup>>
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: memref.store {{.*}} : memref<16x96xbf16>
// CHECK: gpu.func
// The activation prep: four lanes per 32-element block (chunks of 8), so
// the rotation's last two butterfly stages (16 shuffles), the block amax
// (2) and each top-2 slot (2 ranks x 2 steps x |x| bits, index and value:
// every lane has a candidate for ranks below its 8 elements, so no found
// flag) cross lanes by xor shuffles; after the barrier (scale bytes stored
// by a block's first lane, read back by all) the 2:4 residual's blocks sit
// inside one thread: no shuffle.
// CHECK: gpu.func @fp4_activation_prep_9(%{{.*}}: memref<16x256xbf16> {llvm.noalias, llvm.readonly}
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-COUNT-30: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.barrier
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return

!qx = !fp4.tensor<16x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
!qw = !fp4.tensor<96x256xf4E2M1FN, #fp4.mxfp4, axis = 1>
// x_rest is returned as well: the activation prep cannot produce it, so
// the activation ops run as their own kernels and the stacker reads their
// results.
func.func @full_rest_used(%x: tensor<16x256xbf16>, %w: tensor<96x256xbf16>) -> (tensor<16x96xbf16>, tensor<16x256xf32>) {
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
  return %y5, %rest : tensor<16x96xbf16>, tensor<16x256xf32>
}

// The same recipe where only the fused ops read x_rest and the rotated x:
// one activation-prep kernel computes the activation side from x.
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
