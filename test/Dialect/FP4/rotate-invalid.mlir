// RUN: fp4-opt %s -split-input-file -verify-diagnostics

func.func @not_power_of_two(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op size 24 is not a power of two}}
  %0 = fp4.rotate %x hadamard 24 axis 1 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @not_dividing(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op size 64 does not divide axis 1 of size 96}}
  %0 = fp4.rotate %x hadamard 64 axis 1 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @stride_not_dividing(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op size 4 x stride 32 = 128 does not divide axis 1 of size 96}}
  %0 = fp4.rotate %x hadamard 4 stride 32 axis 1 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @too_small(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op size 8 is outside [16, 256] (block rotation)}}
  %0 = fp4.rotate %x hadamard 8 axis 1 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @too_large(%x: tensor<4x512xf32>) {
  // expected-error @below {{'fp4.rotate' op size 512 is outside [16, 256] (block rotation)}}
  %0 = fp4.rotate %x hadamard 512 axis 1 : tensor<4x512xf32> -> tensor<4x512xf32>
  return
}

// -----

func.func @strided_too_small(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op size 1 is outside [2, 256]}}
  %0 = fp4.rotate %x hadamard 1 stride 32 axis 1 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @zero_stride(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op stride 0 must be at least 1}}
  %0 = fp4.rotate %x hadamard 16 stride 0 axis 1 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @axis_out_of_range(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op axis 2 is out of range for a tensor of rank 2}}
  %0 = fp4.rotate %x hadamard 16 axis 2 : tensor<4x96xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @dynamic_axis(%x: tensor<4x?xf32>) {
  // expected-error @below {{'fp4.rotate' op axis 1 must have a static size}}
  %0 = fp4.rotate %x hadamard 16 axis 1 : tensor<4x?xf32> -> tensor<4x?xf32>
  return
}

// -----

func.func @shape_mismatch(%x: tensor<4x96xf32>) {
  // expected-error @below {{'fp4.rotate' op result shape must match the input shape}}
  %0 = fp4.rotate %x hadamard 16 axis 1 : tensor<4x96xf32> -> tensor<8x96xf32>
  return
}

// -----

func.func @integer_input(%x: tensor<4x96xi32>) {
  // expected-error @below {{'fp4.rotate' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = fp4.rotate %x hadamard 16 axis 1 : tensor<4x96xi32> -> tensor<4x96xf32>
  return
}

// -----

func.func @permutation_length(%x: tensor<8x4xf32>) {
  // expected-error @below {{'fp4.permute' op permutation has 3 entries, but axis 1 has size 4}}
  %0 = fp4.permute %x axis 1 permutation [2, 0, 1] : tensor<8x4xf32>
  return
}

// -----

func.func @permutation_range(%x: tensor<8x4xf32>) {
  // expected-error @below {{'fp4.permute' op permutation entry 2 is 4, outside [0, 4)}}
  %0 = fp4.permute %x axis 1 permutation [2, 0, 4, 1] : tensor<8x4xf32>
  return
}

// -----

func.func @permutation_repeat(%x: tensor<8x4xf32>) {
  // expected-error @below {{'fp4.permute' op permutation is not a permutation: 2 appears twice}}
  %0 = fp4.permute %x axis 1 permutation [2, 0, 2, 1] : tensor<8x4xf32>
  return
}

// -----

func.func @permute_axis(%x: tensor<8x4xf32>) {
  // expected-error @below {{'fp4.permute' op axis -1 is out of range for a tensor of rank 2}}
  %0 = fp4.permute %x axis -1 permutation [0, 1, 2, 3] : tensor<8x4xf32>
  return
}

// -----

func.func @permute_dynamic_axis(%x: tensor<8x?xf32>) {
  // expected-error @below {{'fp4.permute' op axis 1 must have a static size}}
  %0 = fp4.permute %x axis 1 permutation [0, 1] : tensor<8x?xf32>
  return
}
