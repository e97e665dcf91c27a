// The pipelines' output is a function of the input: three runs, threaded
// and not, give identical bytes (upstream bufferization alone names and
// orders the __constant_* globals differently from run to run, and
// gpu-module-to-binary records compile times).
// RUN: fp4-opt %s -fp4-pipeline-cpu -o %t.cpu1
// RUN: fp4-opt %s -fp4-pipeline-cpu -o %t.cpu2
// RUN: fp4-opt %s -fp4-pipeline-cpu -mlir-disable-threading -o %t.cpu3
// RUN: cmp %t.cpu1 %t.cpu2
// RUN: cmp %t.cpu1 %t.cpu3
// RUN: FileCheck %s --check-prefix=CPU < %t.cpu1
// RUN: fp4-opt %s -fp4-quantize -fp4-fold-constants -fp4-pipeline-nvvm="chip=sm_90 format=isa" -o %t.gpu1
// RUN: fp4-opt %s -fp4-quantize -fp4-fold-constants -fp4-pipeline-nvvm="chip=sm_90 format=isa" -o %t.gpu2
// RUN: fp4-opt %s -fp4-quantize -fp4-fold-constants -fp4-pipeline-nvvm="chip=sm_90 format=isa" -mlir-disable-threading -o %t.gpu3
// RUN: cmp %t.gpu1 %t.gpu2
// RUN: cmp %t.gpu1 %t.gpu3
// RUN: FileCheck %s --check-prefix=GPU < %t.gpu1
// keep-compile-times brings the times back.
// RUN: fp4-opt %s -fp4-quantize -fp4-fold-constants -fp4-pipeline-nvvm="chip=sm_90 format=isa keep-compile-times=true" | FileCheck %s --check-prefix=TIMES

// Globals in the order their first use appears: @a's constants, then @b's.
// CPU:     llvm.mlir.global private constant @__constant_4xf32(dense<1.000000e+00>
// CPU-NEXT: llvm.mlir.global private constant @__constant_4xf32_0(dense<2.000000e+00>
// CPU-NEXT: llvm.mlir.global private constant @__constant_4xf32_1(dense<3.000000e+00>
// CPU-NEXT: llvm.mlir.global private constant @__constant_4xf32_2(dense<4.000000e+00>
// GPU:     gpu.binary
// GPU-NOT: TimeInMs
// TIMES:   LLVMIRToISATimeInMs

func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant dense<1.0> : tensor<4xf32>
  %c2 = arith.constant dense<2.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.add ins(%x, %c1 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = linalg.mul ins(%y, %c2 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}

func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c3 = arith.constant dense<3.0> : tensor<4xf32>
  %c4 = arith.constant dense<4.0> : tensor<4xf32>
  %c1 = arith.constant dense<1.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.add ins(%x, %c3 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %z = linalg.mul ins(%y, %c4 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %w = linalg.sub ins(%z, %c1 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}

func.func @mm(%x: tensor<16x64xf32>) -> tensor<16x32xf32> {
  %w = arith.constant dense<0.5> : tensor<64x32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
