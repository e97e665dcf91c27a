// The host side of fp4-pipeline-nvvm lowers the math a real model's host
// code holds (exact GELU's erf, LayerNorm's rsqrt, tanh) as the CPU
// pipeline does (erf to libm, rsqrt as 1 / sqrt, tanh an LLVM intrinsic);
// before, math.erf survived into the LLVM-dialect output and
// only mlir-translate failed ("Dialect `math' not found"). Device math in a
// kernel keeps its libdevice lowering.
// RUN: fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa" | FileCheck %s

// CHECK-NOT: math.
// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-LABEL: llvm.func @gelu_norm(
// CHECK: llvm.call @erff(
// CHECK: llvm.intr.sqrt
// CHECK: llvm.fdiv
// CHECK: llvm.intr.tanh
// The kernel's erf is libdevice's, inlined into the PTX (no libm call):
// CHECK: gpu.binary @device_math
// CHECK-SAME: fma.rn.f32
// CHECK-NOT: erff
// CHECK-NOT: math.
module attributes {gpu.container_module} {
  func.func @gelu_norm(%x: f32) -> f32 attributes {llvm.emit_c_interface} {
    %e = math.erf %x : f32
    %r = math.rsqrt %e : f32
    %t = math.tanh %r : f32
    return %t : f32
  }
  gpu.module @device_math {
    gpu.func @k(%p: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %p[%i] : memref<4xf32>
      %e = math.erf %v : f32
      memref.store %e, %p[%i] : memref<4xf32>
      gpu.return
    }
  }
}
