// RUN: fp4-opt %s -split-input-file | FileCheck %s
// Round trip: parse, print, parse again, print again must be identical.
// RUN: fp4-opt %s -split-input-file | fp4-opt -split-input-file | FileCheck %s
// The generic form must also round-trip.
// RUN: fp4-opt %s -split-input-file -mlir-print-op-generic | fp4-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @rotate_forms
func.func @rotate_forms(%x: tensor<16x256xbf16>, %y: tensor<?x64xf32>, %z: tensor<64x8xf16>) {
  // CHECK: fp4.rotate %{{.*}} hadamard 32 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  %0 = fp4.rotate %x hadamard 32 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  // The default stride 1 is elided.
  // CHECK: fp4.rotate %{{.*}} hadamard 16 seed 7 axis 1 : tensor<16x256xbf16> -> tensor<16x256xbf16>
  %1 = fp4.rotate %x hadamard 16 stride 1 seed 7 axis 1 : tensor<16x256xbf16> -> tensor<16x256xbf16>
  // CHECK: fp4.rotate %{{.*}} hadamard 256 seed 4294967295 axis 1 inverse : tensor<16x256xbf16> -> tensor<16x256xf32>
  %2 = fp4.rotate %x hadamard 256 seed 4294967295 axis 1 inverse : tensor<16x256xbf16> -> tensor<16x256xf32>
  // CHECK: fp4.rotate %{{.*}} hadamard 8 stride 32 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  %3 = fp4.rotate %x hadamard 8 stride 32 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  // Dynamic dimensions other than the axis; any axis.
  // CHECK: fp4.rotate %{{.*}} hadamard 64 axis 1 : tensor<?x64xf32> -> tensor<?x64xf32>
  %4 = fp4.rotate %y hadamard 64 axis 1 : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: fp4.rotate %{{.*}} hadamard 64 axis 0 : tensor<64x8xf16> -> tensor<64x8xf16>
  %5 = fp4.rotate %z hadamard 64 axis 0 : tensor<64x8xf16> -> tensor<64x8xf16>
  return
}

// -----

// CHECK-LABEL: func @permute_forms
func.func @permute_forms(%x: tensor<8x4xf32>, %y: tensor<4x?xbf16>) {
  // CHECK: fp4.permute %{{.*}} axis 1 permutation [2, 0, 3, 1] : tensor<8x4xf32>
  %0 = fp4.permute %x axis 1 permutation [2, 0, 3, 1] : tensor<8x4xf32>
  // CHECK: fp4.permute %{{.*}} axis 0 permutation [3, 2, 1, 0] : tensor<4x?xbf16>
  %1 = fp4.permute %y axis 0 permutation [3, 2, 1, 0] : tensor<4x?xbf16>
  return
}
