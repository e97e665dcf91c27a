// RUN: fp4-opt %s -split-input-file -verify-diagnostics

func.func @k_too_large(%x: tensor<4x64xf32>) {
  // expected-error @below {{k = 5 is outside [1, 4] (the block size)}}
  %r, %v, %i = fp4.split_outliers %x block 4 top 5 : tensor<4x64xf32> -> tensor<4x16x5xbf16>, tensor<4x16x5xi8>
  return
}

// -----

func.func @k_zero(%x: tensor<4x64xf32>) {
  // expected-error @below {{k = 0 is outside [1, 32] (the block size)}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 0 : tensor<4x64xf32> -> tensor<4x2x0xbf16>, tensor<4x2x0xi8>
  return
}

// -----

func.func @block_too_large(%x: tensor<4x256xf32>) {
  // expected-error @below {{block size 256 is outside [1, 128] (in-block indices are i8)}}
  %r, %v, %i = fp4.split_outliers %x block 256 top 2 : tensor<4x256xf32> -> tensor<4x1x2xbf16>, tensor<4x1x2xi8>
  return
}

// -----

func.func @block_not_dividing(%x: tensor<4x48xf32>) {
  // expected-error @below {{input last axis 48 is not a multiple of the block size 32}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<4x48xf32> -> tensor<4x1x2xbf16>, tensor<4x1x2xi8>
  return
}

// -----

func.func @dynamic_axis(%x: tensor<4x?xf32>) {
  // expected-error @below {{input must have a static last axis (the blocked axis)}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<4x?xf32> -> tensor<4x?x2xbf16>, tensor<4x?x2xi8>
  return
}

// -----

func.func @wrong_values_shape(%x: tensor<4x64xf32>) {
  // expected-error @below {{outlier values [4, 4, 2] do not match the expected shape [4, 2, 2] (blocks of 32 along the last axis of [4, 64])}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<4x64xf32> -> tensor<4x4x2xbf16>, tensor<4x4x2xi8>
  return
}

// -----

func.func @wrong_k(%x: tensor<4x64xf32>) {
  // expected-error @below {{outlier values [4, 2, 1] must have k = 2 entries per block (last dimension)}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<4x64xf32> -> tensor<4x2x1xbf16>, tensor<4x2x1xi8>
  return
}

// -----

func.func @wrong_rank(%x: tensor<4x64xf32>) {
  // expected-error @below {{outlier values [8, 2] must have rank 3 ([.., rows, blocks, k] for a tensor of shape [4, 64])}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<4x64xf32> -> tensor<8x2xbf16>, tensor<8x2xi8>
  return
}

// -----

func.func @values_indices_mismatch(%x: tensor<4x64xf32>) {
  // expected-error @below {{all of {values, indices} have same shape}}
  %r, %v, %i = "fp4.split_outliers"(%x) {block_size = 32 : i64, k = 2 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x2x2xbf16>, tensor<4x2x1xi8>)
  return
}

// -----

func.func @wrong_index_type(%x: tensor<4x64xf32>) {
  // expected-error @below {{result #2 must be ranked tensor of 8-bit signless integer values}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<4x64xf32> -> tensor<4x2x2xbf16>, tensor<4x2x2xi32>
  return
}

// -----

func.func @residual_shape(%x: tensor<4x64xf32>, %q: !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @below {{input shape [4, 64] does not match quantized shape [4, 32]}}
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<4x64xf32>, !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x16x2xbf16>, tensor<4x16x2xi8>
  return
}

// -----

func.func @residual_k(%x: tensor<4x64xf32>, %q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @below {{k = 3 is outside [1, 2] (the block size)}}
  %v, %i = fp4.residual %x, %q block 2 top 3 : tensor<4x64xf32>, !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x32x3xbf16>, tensor<4x32x3xi8>
  return
}

// -----

func.func @residual_values(%x: tensor<4x64xf32>, %q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) {
  // expected-error @below {{residual values [4, 32, 2] do not match the expected shape [4, 16, 2] (blocks of 4 along the last axis of [4, 64])}}
  %v, %i = fp4.residual %x, %q block 4 top 2 : tensor<4x64xf32>, !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x32x2xbf16>, tensor<4x32x2xi8>
  return
}

// -----

func.func @matmul_missing_block(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{block-sparse lhs needs 'lhs_block_size'}}
  %0 = "fp4.correction_matmul"(%v, %i, %w) {operandSegmentSizes = array<i32: 2, 1, 0>} : (tensor<4x2x2xbf16>, tensor<4x2x2xi8>, tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_block_on_dense(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) {
  // expected-error @below {{'rhs_block_size' is only valid with a block-sparse rhs}}
  %0 = "fp4.correction_matmul"(%x, %w) {operandSegmentSizes = array<i32: 1, 1, 0>, rhs_block_size = 32 : i64} : (tensor<4x64xf32>, tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_three_operands(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>) {
  // expected-error @below {{lhs must be one dense tensor or a (values, indices) pair, got 3 operands}}
  %0 = fp4.correction_matmul (%x, %x, %x), (%w) : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_k_mismatch(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xi8>, %w: tensor<8x128xf32>) {
  // expected-error @below {{contraction sizes differ: lhs [4, 64] has K = 64, rhs [8, 128] has K = 128}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<4x2x2xbf16>, tensor<4x2x2xi8>), (tensor<8x128xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_indices_type(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xbf16>, %w: tensor<8x64xf32>) {
  // expected-error @below {{lhs indices must be i8, got 'bf16'}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<4x2x2xbf16>, tensor<4x2x2xbf16>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_dense_indices(%i: tensor<4x64xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{dense lhs must be a float or quantized tensor, got 'tensor<4x64xi8>'}}
  %0 = fp4.correction_matmul (%i), (%w) : (tensor<4x64xi8>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_k_per_block(%v: tensor<4x16x8xbf16>, %i: tensor<4x16x8xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{block-sparse lhs has k = 8 entries per block of 4}}
  %0 = fp4.correction_matmul (%v, %i block 4), (%w) : (tensor<4x16x8xbf16>, tensor<4x16x8xi8>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_sparse_rank(%v: tensor<2x2xbf16>, %i: tensor<2x2xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{block-sparse lhs values [2, 2] must have rank 3 or 4 ([B?, rows, blocks, k])}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<2x2xbf16>, tensor<2x2xi8>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_result(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{result shape [4, 4] does not match the expected shape [4, 8] (lhs [4, 64] times rhs^T, rhs [8, 64])}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<4x2x2xbf16>, tensor<4x2x2xi8>), (tensor<8x64xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @matmul_acc(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xi8>, %w: tensor<8x64xf32>, %acc: tensor<8x4xf32>) {
  // expected-error @below {{accumulator shape [8, 4] does not match the result shape [4, 8]}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) acc %acc : (tensor<4x2x2xbf16>, tensor<4x2x2xi8>), (tensor<8x64xf32>), tensor<8x4xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_batched_rhs(%x: tensor<4x64xf32>, %v: tensor<2x8x2x2xbf16>, %i: tensor<2x8x2x2xi8>) {
  // expected-error @below {{a batched rhs [B, N, K] needs a batched lhs [B, M, K]}}
  %0 = fp4.correction_matmul (%x), (%v, %i block 32) : (tensor<4x64xf32>), (tensor<2x8x2x2xbf16>, tensor<2x8x2x2xi8>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_batch(%v: tensor<3x4x2x2xbf16>, %i: tensor<3x4x2x2xi8>, %w: tensor<2x8x64xf32>) {
  // expected-error @below {{batch sizes differ: lhs 3, rhs 2}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<3x4x2x2xbf16>, tensor<3x4x2x2xi8>), (tensor<2x8x64xf32>) -> tensor<3x4x8xf32>
  return
}

// -----

func.func @matmul_axis(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xi8>, %w: !fp4.tensor<64x8xf4E2M1FN, #fp4.mxfp4, axis = 0>) {
  // expected-error @below {{rhs is quantized along axis 0, but the product contracts its last axis (K)}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<4x2x2xbf16>, tensor<4x2x2xi8>), (!fp4.tensor<64x8xf4E2M1FN, #fp4.mxfp4, axis = 0>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_block_size(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x2xi8>, %w: tensor<8x512xf32>) {
  // expected-error @below {{block size 256 is outside [1, 128] (in-block indices are i8)}}
  %0 = fp4.correction_matmul (%v, %i block 256), (%w) : (tensor<4x2x2xbf16>, tensor<4x2x2xi8>), (tensor<8x512xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @channels_unsorted(%x: tensor<4x64xf32>) {
  // expected-error @below {{channels must be strictly increasing, got 17 before 3}}
  %r, %g = fp4.split_channels %x channels [17, 3] : tensor<4x64xf32> -> tensor<4x2xbf16>
  return
}

// -----

func.func @channels_duplicate(%x: tensor<4x64xf32>) {
  // expected-error @below {{channels must be strictly increasing, got 3 before 3}}
  %r, %g = fp4.split_channels %x channels [3, 3] : tensor<4x64xf32> -> tensor<4x2xbf16>
  return
}

// -----

func.func @channel_out_of_range(%x: tensor<4x64xf32>) {
  // expected-error @below {{channel 64 is outside [0, 64)}}
  %r, %g = fp4.split_channels %x channels [1, 64] : tensor<4x64xf32> -> tensor<4x2xbf16>
  return
}

// -----

func.func @no_channels(%x: tensor<4x64xf32>) {
  // expected-error @below {{needs at least one channel}}
  %r, %g = fp4.split_channels %x channels [] : tensor<4x64xf32> -> tensor<4x0xbf16>
  return
}

// -----

func.func @gathered_shape(%x: tensor<4x64xf32>) {
  // expected-error @below {{gathered shape [4, 3] does not match the expected shape [4, 2] (2 channels of [4, 64])}}
  %r, %g = fp4.split_channels %x channels [1, 2] : tensor<4x64xf32> -> tensor<4x3xbf16>
  return
}

// -----

func.func @channels_dynamic_axis(%x: tensor<4x?xf32>) {
  // expected-error @below {{input must have a static last axis (the channel axis)}}
  %r, %g = fp4.split_channels %x channels [1] : tensor<4x?xf32> -> tensor<4x1xbf16>
  return
}

// -----

func.func @split_rank0(%x: tensor<f32>) {
  // expected-error @below {{input must have rank >= 1}}
  %r, %v, %i = fp4.split_outliers %x block 32 top 2 : tensor<f32> -> tensor<1x2xbf16>, tensor<1x2xi8>
  return
}

// -----

func.func @channels_rank0(%x: tensor<f32>) {
  // expected-error @below {{input must have rank >= 1}}
  %r, %g = fp4.split_channels %x channels [0] : tensor<f32> -> tensor<1xbf16>
  return
}

// -----

func.func @matmul_pair_shapes(%v: tensor<4x2x2xbf16>, %i: tensor<4x2x1xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{lhs values [4, 2, 2] and indices [4, 2, 1] must have the same shape}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<4x2x2xbf16>, tensor<4x2x1xi8>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_integer_values(%i: tensor<4x2x2xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{lhs values must be floats, got 'i8'}}
  %0 = fp4.correction_matmul (%i, %i block 32), (%w) : (tensor<4x2x2xi8>, tensor<4x2x2xi8>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_dynamic_k(%v: tensor<4x2x?xbf16>, %i: tensor<4x2x?xi8>, %w: tensor<8x64xf32>) {
  // expected-error @below {{lhs values must have a static k (last dimension)}}
  %0 = fp4.correction_matmul (%v, %i block 32), (%w) : (tensor<4x2x?xbf16>, tensor<4x2x?xi8>), (tensor<8x64xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @matmul_lhs_rank(%x: tensor<2x2x4x64xf32>, %w: tensor<8x64xf32>) {
  // expected-error @below {{lhs must be [M, K] or [B, M, K], got [2, 2, 4, 64]}}
  %0 = fp4.correction_matmul (%x), (%w) : (tensor<2x2x4x64xf32>), (tensor<8x64xf32>) -> tensor<2x2x4x8xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%x: tensor<4x64xf32>, %v: tensor<64xf32>) {
  // expected-error @below {{rhs must be [N, K] or [B, N, K], got [64]}}
  %0 = "fp4.correction_matmul"(%x, %v) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x8xf32>
  return
}
