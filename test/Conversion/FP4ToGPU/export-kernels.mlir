// fp4-export-gpu-kernels derives kernels.json from the typed manifest
// (#fp4.gpu_manifest): one entry per kernel launch of every plan, in plan
// order, with the image of its gpu.binary, the op of its plan and each
// argument's dtype / shape from the plan's buffer (scratch marked), then
// removes the manifest so that the module has no fp4 attribute left.
// RUN: rm -rf %t && fp4-opt %s -fp4-export-gpu-kernels="dir=%t" | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/kernels.json
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/fp4_kernels.ptx
// Without a directory nothing is written, the manifest is still consumed.
// RUN: fp4-opt %s -fp4-export-gpu-kernels | FileCheck %s

// CHECK-NOT: fp4.gpu_manifest
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.binary @fp4_kernels

// JSON:      "chip": "sm_90",
// JSON-NEXT: "kernels": [
// JSON-NEXT:   {
// JSON-NEXT:     "args": [
// JSON-NEXT:       {
// JSON-NEXT:         "dtype": "bfloat16",
// JSON-NEXT:         "name": "lhs",
// JSON-NEXT:         "scratch": false,
// JSON-NEXT:         "shape": [
// JSON-NEXT:           4,
// JSON-NEXT:           64
// JSON-NEXT:         ]
// JSON-NEXT:       },
// JSON:            "dtype": "uint8",
// JSON-NEXT:       "name": "rhs.codes",
// JSON:            "dtype": "float32",
// JSON-NEXT:       "name": "scratch.partial",
// JSON-NEXT:       "scratch": true,
// JSON-NEXT:       "shape": [
// JSON-NEXT:         2,
// JSON-NEXT:         4,
// JSON-NEXT:         40
// JSON-NEXT:       ]
// JSON:          "block": [
// JSON-NEXT:       128,
// JSON-NEXT:       1,
// JSON-NEXT:       1
// JSON-NEXT:     ],
// JSON-NEXT:     "grid": [
// JSON-NEXT:       4,
// JSON-NEXT:       2,
// JSON-NEXT:       1
// JSON-NEXT:     ],
// JSON-NEXT:     "image": "fp4_kernels.ptx",
// JSON-NEXT:     "module": "fp4_kernels",
// JSON-NEXT:     "name": "mm_0",
// JSON-NEXT:     "op": "fp4.matmul",
// JSON-NEXT:     "shared_bytes": 0,
// JSON-NEXT:     "variant": "decode_w4a16_splitk"
// JSON-NEXT:   },
// The second launch of the same plan reads the scratch buffer.
// JSON:            "name": "scratch.partial",
// JSON-NEXT:       "scratch": true,
// JSON:            "name": "result",
// JSON-NEXT:       "scratch": false,
// JSON:          "name": "mm_1",
// JSON-NEXT:     "op": "fp4.matmul",
// JSON-NEXT:     "shared_bytes": 64,
// JSON-NEXT:     "variant": "splitk_reduce"
// A rank-0 buffer has an empty shape.
// JSON:            "name": "result.tensor_scale",
// JSON-NEXT:       "scratch": false,
// JSON-NEXT:       "shape": []
// JSON:          "name": "q_0",
// JSON-NEXT:     "op": "fp4.quantize",
// JSON-NEXT:     "shared_bytes": 0,
// JSON-NEXT:     "variant": "nvfp4"
// JSON-NEXT:   }
// JSON-NEXT: ]

// PTX: // the kernels

module attributes {gpu.container_module, fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [
  <op = "fp4.matmul",
   inputs = ["lhs" : memref<4x64xbf16>, "rhs.codes" : memref<40x32xi8>,
             "rhs.scales" : memref<40x2xi8>],
   outputs = ["result" : memref<4x40xf32>],
   scratch = ["scratch.partial" : memref<2x4x40xf32>],
   launches = [
     <@fp4_kernels::@mm_0, variant = "decode_w4a16_splitk", grid = [4, 2, 1],
      block = [128, 1, 1], shared_bytes = 0,
      args = ["lhs", "rhs.codes", "rhs.scales", "scratch.partial"]>,
     <@fp4_kernels::@mm_1, variant = "splitk_reduce", grid = [1, 1, 1],
      block = [256, 1, 1], shared_bytes = 64,
      args = ["scratch.partial", "result"]>]>,
  <op = "fp4.quantize",
   inputs = ["input" : memref<16x64xbf16>],
   outputs = ["result.codes" : memref<16x32xi8>, "result.scales" : memref<16x4xi8>,
              "result.tensor_scale" : memref<f32>],
   scratch = [],
   launches = [<@fp4_kernels::@q_0, variant = "nvfp4", grid = [16, 1, 1],
                block = [256, 1, 1], shared_bytes = 0,
                args = ["input", "result.codes", "result.scales", "result.tensor_scale"]>]>]>} {
  gpu.binary @fp4_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "// the kernels\n">]
}
