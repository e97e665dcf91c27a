// The launch plan attributes (FP4LaunchPlanAttr.td) print and parse back to
// the same attribute, in the custom and the generic form; the nested
// buffers and launches use their short forms, the long ones parse too.
// RUN: fp4-opt %s | FileCheck %s
// RUN: fp4-opt %s | fp4-opt | FileCheck %s
// RUN: fp4-opt %s --mlir-print-op-generic | fp4-opt | FileCheck %s

// CHECK: module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [<op = "fp4.matmul", inputs = ["lhs" : memref<4x64xbf16>, "rhs.codes" : memref<40x32xi8>, "rhs.scales" : memref<40x2xi8>], outputs = ["result" : memref<4x40xf32>], scratch = ["scratch.partial" : memref<2x4x40xf32>], launches = [<@fp4_kernels::@mm_0, variant = "decode_w4a16_splitk", grid = [4, 2, 1], block = [128, 1, 1], shared_bytes = 0, args = ["lhs", "rhs.codes", "rhs.scales", "scratch.partial"]>, <@fp4_kernels::@mm_1, variant = "splitk_reduce", grid = [1, 1, 1], block = [256, 1, 1], shared_bytes = 64, args = ["scratch.partial", "result"]>]>, <op = "fp4.quantize", inputs = ["input" : memref<16x64xbf16>], outputs = ["result.codes" : memref<16x32xi8>, "result.scales" : memref<16x4xi8>, "result.tensor_scale" : memref<f32>], scratch = [], launches = [<@fp4_kernels::@q_0, variant = "nvfp4", grid = [16, 1, 1], block = [256, 1, 1], shared_bytes = 0, args = ["input", "result.codes", "result.scales", "result.tensor_scale"]>]>]>}
module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [
  <op = "fp4.matmul",
   inputs = ["lhs" : memref<4x64xbf16>, "rhs.codes" : memref<40x32xi8>,
             "rhs.scales" : memref<40x2xi8>],
   outputs = ["result" : memref<4x40xf32>],
   scratch = ["scratch.partial" : memref<2x4x40xf32>],
   launches = [
     <@fp4_kernels::@mm_0, variant = "decode_w4a16_splitk", grid = [4, 2, 1],
      block = [128, 1, 1], shared_bytes = 0,
      args = ["lhs", "rhs.codes", "rhs.scales", "scratch.partial"]>,
     #fp4.kernel_launch<@fp4_kernels::@mm_1, variant = "splitk_reduce",
      grid = [1, 1, 1], block = [256, 1, 1], shared_bytes = 64,
      args = ["scratch.partial", "result"]>]>,
  #fp4.launch_plan<op = "fp4.quantize",
   inputs = ["input" : memref<16x64xbf16>],
   outputs = ["result.codes" : memref<16x32xi8>, "result.scales" : memref<16x4xi8>,
              "result.tensor_scale" : memref<f32>],
   scratch = [],
   launches = [<@fp4_kernels::@q_0, variant = "nvfp4", grid = [16, 1, 1],
                block = [256, 1, 1], shared_bytes = 0,
                args = ["input", "result.codes", "result.scales", "result.tensor_scale"]>]>]>} {

  // On a launch function: the arguments are the inputs, then the outputs.
  // CHECK: func.func private @q_0_launch(memref<16x64xbf16>, memref<16x32xi8>, memref<16x4xi8>, memref<f32>) attributes {fp4.launch_plan = #fp4.launch_plan<op = "fp4.quantize", inputs = ["input" : memref<16x64xbf16>], outputs = ["result.codes" : memref<16x32xi8>, "result.scales" : memref<16x4xi8>, "result.tensor_scale" : memref<f32>], scratch = [], launches = [<@fp4_kernels::@q_0, variant = "nvfp4", grid = [16, 1, 1], block = [256, 1, 1], shared_bytes = 0, args = ["input", "result.codes", "result.scales", "result.tensor_scale"]>]>}
  func.func private @q_0_launch(memref<16x64xbf16>, memref<16x32xi8>, memref<16x4xi8>, memref<f32>)
      attributes {fp4.launch_plan = #fp4.launch_plan<op = "fp4.quantize",
   inputs = ["input" : memref<16x64xbf16>],
   outputs = ["result.codes" : memref<16x32xi8>, "result.scales" : memref<16x4xi8>,
              "result.tensor_scale" : memref<f32>],
   scratch = [],
   launches = [<@fp4_kernels::@q_0, variant = "nvfp4", grid = [16, 1, 1],
                block = [256, 1, 1], shared_bytes = 0,
                args = ["input", "result.codes", "result.scales", "result.tensor_scale"]>]>}

  // The parts on their own.
  // CHECK: func.func private @parts() attributes {buffer = #fp4.launch_buffer<"rhs.codes" : memref<40x32xi8>>, launch = #fp4.kernel_launch<@m::@k, variant = "reference", grid = [1, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["a"]>}
  func.func private @parts() attributes {
    buffer = #fp4.launch_buffer<"rhs.codes" : memref<40x32xi8>>,
    launch = #fp4.kernel_launch<@m::@k, variant = "reference", grid = [1, 1, 1],
                                block = [32, 1, 1], shared_bytes = 0, args = ["a"]>}
}
