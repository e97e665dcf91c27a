// REQUIRES: ptxas
// Every quantize/dequantize kernel family through fp4-pipeline-nvvm to PTX,
// assembled for sm_90 with no spills. The PTX must keep the numerics
// templates' arithmetic exact: every f32/f64 add, sub, mul and div rounds to
// nearest (.rn), nothing is contracted into an FMA, flushed to zero or
// approximated. The fast path (MXFP4 after Hadamard-32, large activation)
// moves 16-byte vectors and stays under 64 registers (4 CTAs of 256 threads
// per SM).
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/fp4_kernels.ptx
// RUN: FileCheck %s --check-prefix=EXACT < %t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=JSON < %t/kernels.json

// EXACT-NOT: {{fma\.|\.ftz|\.approx|add\.f32|mul\.f32|sub\.f32|add\.f64|mul\.f64}}
// EXACT: mul.rn.f32
// EXACT-NOT: {{fma\.|\.ftz|\.approx|add\.f32|mul\.f32|sub\.f32|add\.f64|mul\.f64}}

// PTX-LABEL: .entry fp4_quantize_0(
// PTX: .maxntid 256, 1, 1
// PTX-COUNT-4: ld.global.nc.v4.b32
// PTX-NOT: shfl.sync
// PTX: st.global.v4.b32
// PTX: st.global.b8
// PTX-LABEL: .entry fp4_quantize_1(
// PTX: .maxntid 64, 1, 1
// PTX: ld.global.nc.v4.b32
// PTX: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX: st.global.b32
// PTX-LABEL: .entry fp4_quantize_5_amax(
// PTX: shfl.sync.bfly.b32
// PTX: atom.global.max.u32
// PTX-LABEL: .entry fp4_quantize_5(
// PTX: ld.global.nc.b32
// PTX: div.rn.f32
// PTX: add.rn.f64
// PTX: st.global.v2.b32
// PTX-LABEL: .entry fp4_quantize_6(
// PTX-DAG: st.shared.v2.b64
// PTX-DAG: bar.sync 0;
// PTX-DAG: ld.shared.b64
// PTX-DAG: shfl.sync.idx.b32
// PTX-LABEL: .entry fp4_quantize_9(
// PTX: st.shared.b32
// PTX: bar.sync 0;
// PTX: ld.shared.{{(v4.)?}}b32
// PTX: st.global.b16
// PTX-LABEL: .entry fp4_dequantize_10(
// PTX: ld.global.nc.v2.b32
// PTX: st.global.v4.b32
// PTX: st.global.v4.b32

// JSON: "variant": "quantize_mxfp4_hadamard32"
// JSON: "variant": "tensor_amax_hadamard16"
// JSON: "variant": "quantize_nvfp4_4over6_hadamard16"
// JSON: "variant": "quantize_nvfp4_4over6_tile2d"
// JSON: "variant": "dequantize_macro"

// ptxas lists the entries last to first.
// PTXAS: Compiling entry function 'fp4_dequantize_13' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_dequantize_12' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_dequantize_11' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_dequantize_10' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_9' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_8' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_7' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_6' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_6_amax' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_5' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_5_amax' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_4' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_3' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_2' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_1' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fp4_quantize_0' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{([1-5]?[0-9]|6[0-4])}} registers

!a = !fp4.tensor<512x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @mx_hadamard32(%x: tensor<512x4096xbf16>) -> !a {
  %r = fp4.rotate %x hadamard 32 axis 1 : tensor<512x4096xbf16> -> tensor<512x4096xbf16>
  %q = fp4.quantize %r : tensor<512x4096xbf16> -> !a
  return %q : !a
}
!b = !fp4.tensor<16x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
func.func @mx_hadamard32_small(%x: tensor<16x4096xbf16>) -> !b {
  %r = fp4.rotate %x hadamard 32 seed 7 axis 1 : tensor<16x4096xbf16> -> tensor<16x4096xf32>
  %q = fp4.quantize %r : tensor<16x4096xf32> -> !b
  return %q : !b
}
!c = !fp4.tensor<33x1024xf4E2M1FN, #fp4.mxfp4<scale_rounding = rceil, rounding = stochastic, seed = 3>, axis = 1>
func.func @mx_stochastic(%x: tensor<33x1024xf16>) -> !c {
  %q = fp4.quantize %x : tensor<33x1024xf16> -> !c
  return %q : !c
}
!d = !fp4.tensor<5x2048xf4E2M1FN, #fp4.mxfp4<block_size = 1024>, axis = 1>
func.func @mx_block1024(%x: tensor<5x2048xf32>) -> !d {
  %q = fp4.quantize %x : tensor<5x2048xf32> -> !d
  return %q : !d
}
!e = !fp4.tensor<9x256xf4E2M1FN, #fp4.mxfp4<block_size = 2>, axis = 1>
func.func @mx_block2(%x: tensor<9x256xbf16>) -> !e {
  %q = fp4.quantize %x : tensor<9x256xbf16> -> !e
  return %q : !e
}
!f = !fp4.tensor<256x4096xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>
func.func @nvfp4_hadamard16(%x: tensor<256x4096xbf16>) -> !f {
  %r = fp4.rotate %x hadamard 16 seed 1 axis 1 : tensor<256x4096xbf16> -> tensor<256x4096xbf16>
  %q = fp4.quantize %r : tensor<256x4096xbf16> -> !f
  return %q : !f
}
!g = !fp4.tensor<48x256xf4E2M1FN, #fp4.nvfp4<four_over_six = true, tile2d = true>, axis = 1>
func.func @nvfp4_tiles(%x: tensor<48x256xbf16>) -> !g {
  %q = fp4.quantize %x : tensor<48x256xbf16> -> !g
  return %q : !g
}
!h = !fp4.tensor<21x1024x!fp4.s1p2, #fp4.hif4, axis = 1>
func.func @hif4(%x: tensor<21x1024xbf16>) -> !h {
  %q = fp4.quantize %x : tensor<21x1024xbf16> -> !h
  return %q : !h
}
!i = !fp4.tensor<21x1024xf4E2M1FN, #fp4.mxfp4_macro, axis = 1>
func.func @macro(%x: tensor<21x1024xbf16>) -> !i {
  %q = fp4.quantize %x : tensor<21x1024xbf16> -> !i
  return %q : !i
}
!j = !fp4.tensor<9x4096xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 0>, axis = 1>
func.func @macro_row(%x: tensor<9x4096xbf16>) -> !j {
  %q = fp4.quantize %x : tensor<9x4096xbf16> -> !j
  return %q : !j
}
func.func @dq_mxfp4(%q: !a) -> tensor<512x4096xbf16> {
  %x = fp4.dequantize %q : !a -> tensor<512x4096xbf16>
  return %x : tensor<512x4096xbf16>
}
func.func @dq_nvfp4(%q: !f) -> tensor<256x4096xf16> {
  %x = fp4.dequantize %q : !f -> tensor<256x4096xf16>
  return %x : tensor<256x4096xf16>
}
func.func @dq_hif4(%q: !h) -> tensor<21x1024xf32> {
  %x = fp4.dequantize %q : !h -> tensor<21x1024xf32>
  return %x : tensor<21x1024xf32>
}
func.func @dq_macro(%q: !j) -> tensor<9x4096xbf16> {
  %x = fp4.dequantize %q : !j -> tensor<9x4096xbf16>
  return %x : tensor<9x4096xbf16>
}
