// REQUIRES: ptxas
// The two-level activation side (fp4.permute, the cross-block rotation and
// a wide rotation) through fp4-pipeline-nvvm to PTX, assembled for sm_90
// with no spills. The butterflies stay exact: .rn adds,
// subtracts and the normalizing multiply, nothing contracted into an FMA or
// flushed; the host passes the permutation table (memcpy of a constant).
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t/two" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/two/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=EXACT < %t/two/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/two/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS

// EXACT-NOT: {{fma\.|\.ftz|\.approx|add\.f32|mul\.f32|sub\.f32}}

// PTX-LABEL: .entry fp4_permute_0(
// PTX: .maxntid 128, 1, 1
// PTX: ld.global.nc.b32
// PTX-LABEL: .entry fp4_rotate_1(
// PTX: .maxntid 128, 1, 1
// PTX: .shared .align {{[0-9]+}} .b8 {{.*}}[1024];
// PTX: bar.sync 0;
// PTX: add.rn.f32
// PTX: sub.rn.f32
// PTX: mul.rn.f32
// PTX-LABEL: .entry fp4_rotate_2(
// PTX: mul.rn.f32

// PTXAS-COUNT-3: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: spill stores

// The two-level activation side as fp4-rotate leaves it (permute, then the
// cross-block Hadamard, then a randomized Hadamard-32 that the quantizer
// would fuse; here it is read twice, so it has its own kernel).
func.func @two_level(%x: tensor<16x256xbf16>) -> (tensor<16x256xf32>, tensor<16x256xf32>) {
  %p = fp4.permute %x axis 1 permutation [12, 225, 235, 29, 206, 43, 111, 109, 59, 54, 216, 156, 101, 153, 38, 112, 121, 41, 56, 125, 163, 232, 164, 186, 8, 124, 36, 15, 177, 197, 208, 159, 127, 73, 181, 49, 48, 149, 190, 180, 192, 157, 126, 142, 133, 170, 162, 237, 17, 136, 161, 172, 221, 31, 183, 239, 34, 82, 24, 218, 245, 57, 25, 60, 200, 213, 141, 165, 227, 85, 66, 234, 179, 155, 129, 100, 108, 114, 167, 252, 21, 238, 194, 151, 174, 72, 175, 228, 185, 226, 117, 81, 244, 214, 132, 83, 58, 209, 44, 105, 137, 147, 211, 51, 68, 248, 116, 6, 210, 20, 61, 242, 144, 255, 19, 168, 10, 102, 22, 122, 217, 128, 39, 178, 69, 89, 229, 70, 143, 184, 224, 87, 205, 23, 110, 9, 75, 94, 27, 145, 64, 134, 171, 131, 88, 118, 62, 30, 191, 193, 11, 115, 2, 148, 96, 93, 107, 140, 4, 103, 253, 188, 65, 14, 45, 233, 169, 47, 199, 123, 78, 90, 79, 182, 86, 219, 152, 207, 150, 154, 77, 84, 16, 67, 37, 201, 106, 92, 5, 76, 98, 243, 251, 220, 52, 160, 173, 138, 50, 80, 74, 202, 42, 223, 250, 53, 1, 0, 33, 32, 113, 212, 158, 35, 18, 204, 195, 246, 99, 196, 46, 71, 104, 55, 187, 3, 231, 146, 26, 139, 97, 240, 222, 120, 95, 28, 40, 230, 13, 247, 63, 198, 119, 249, 7, 135, 236, 166, 254, 215, 241, 176, 203, 91, 189, 130] : tensor<16x256xbf16>
  %c = fp4.rotate %p hadamard 8 stride 32 axis 1 : tensor<16x256xbf16> -> tensor<16x256xf32>
  %r = fp4.rotate %c hadamard 128 seed 7 axis 1 : tensor<16x256xf32> -> tensor<16x256xf32>
  return %r, %r : tensor<16x256xf32>, tensor<16x256xf32>
}
