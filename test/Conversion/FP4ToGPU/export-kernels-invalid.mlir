// RUN: rm -rf %t && not fp4-opt %s -fp4-export-gpu-kernels="dir=%t" 2>&1 | FileCheck %s

// A plan whose kernels are in a module without a gpu.binary (export before
// gpu-module-to-binary) is an error naming the module, without the module
// attached.
// CHECK: error: fp4-export-gpu-kernels: no gpu.binary for kernel module 'other_kernels' (run after gpu-module-to-binary)
// CHECK-NOT: see current operation
module attributes {gpu.container_module, fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [
  <op = "fp4.dequantize", inputs = [], outputs = ["result" : memref<4xf32>], scratch = [],
   launches = [<@other_kernels::@k, variant = "reference", grid = [1, 1, 1],
                block = [32, 1, 1], shared_bytes = 0, args = ["result"]>]>]>} {
  gpu.binary @fp4_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "// the kernels\n">]
}
