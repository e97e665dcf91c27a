// fp4-pipeline-nvvm end to end without a GPU: LLVM-dialect host code that
// launches a gpu.binary, the exported manifest + PTX, and the PTX assembled
// by ptxas for sm_90 with no spills.
// REQUIRES: ptxas
// RUN: rm -rf %t && fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa export-dir=%t" | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/kernels.json
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/fp4_kernels.ptx
// RUN: %ptxas -arch=sm_90 -v %t/fp4_kernels.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=bin cuda-path=%cuda_toolkit" | FileCheck %s --check-prefix=BIN
// ptxas on PATH is enough when the toolkit directory lacks it (the check of
// missing-toolkit.mlir and the serializer both fall back to PATH).
// RUN: mkdir -p %t/empty %t/path && ln -sf %ptxas %t/path/ptxas
// RUN: env CUDA_ROOT=%t/empty PATH=%t/path fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=bin" | FileCheck %s --check-prefix=BIN

// The host code: an llvm.func per function, the launch function calling the
// kernel of the embedded binary; no gpu/memref/fp4 ops are left.
// CHECK-NOT: = fp4.
// CHECK-DAG: gpu.binary @fp4_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx85">, properties = {{.*}}, assembly = "
// CHECK-DAG: llvm.func @fp4_matmul_0_launch(
// CHECK-DAG: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp4_kernels::@fp4_matmul_0 blocks in
// CHECK-DAG: llvm.func @w4a16(

// JSON: "chip": "sm_90"
// JSON: "image": "fp4_kernels.ptx"
// JSON: "name": "fp4_matmul_0"
// JSON: "op": "fp4.matmul"

// PTX: .version 8.5
// PTX: .target sm_90
// PTX: .visible .entry fp4_matmul_0(
// PTX: .maxntid 128, 1, 1

// PTXAS: Compiling entry function 'fp4_matmul_0' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// The compile times gpu-module-to-binary records (its only properties here)
// are removed: the output is reproducible (fp4-reproducible-output).
// BIN: gpu.binary @fp4_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx85">, bin = "

!w = !fp4.tensor<37x64x!fp4.s1p2, #fp4.hif4, axis = 1>
func.func @w4a16(%a: tensor<3x64xbf16>, %w: !w) -> tensor<3x37xf32>
    attributes {llvm.emit_c_interface} {
  %y = fp4.matmul %a, %w : tensor<3x64xbf16>, !w -> tensor<3x37xf32>
  return %y : tensor<3x37xf32>
}
