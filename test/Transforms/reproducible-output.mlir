// RUN: fp4-opt %s -split-input-file -fp4-reproducible-output | FileCheck %s

// Constant globals are renamed by first use (program order) and moved, in
// that order, to the start of the module; other symbols stay as they are.
// CHECK-LABEL: module @first_use
// CHECK-NEXT:  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.000000e+00>
// CHECK-NEXT:  memref.global "private" constant @__constant_4xf32_0 : memref<4xf32> = dense<2.000000e+00>
// CHECK-NEXT:  memref.global "private" constant @__constant_2xi8 : memref<2xi8> = dense<3>
// CHECK-NEXT:  memref.global "private" constant @__constant_4xf32_1 : memref<4xf32> = dense<4.000000e+00>
// CHECK-NEXT:  memref.global "private" @state : memref<4xf32>
// CHECK:       func.func @f
// CHECK-NEXT:    memref.get_global @__constant_4xf32 :
// CHECK-NEXT:    memref.get_global @__constant_4xf32_0 :
// CHECK-NEXT:    memref.get_global @__constant_2xi8 :
// CHECK:       func.func @g
// CHECK-NEXT:    memref.get_global @__constant_4xf32_0 :
// CHECK-NEXT:    memref.get_global @__constant_4xf32_1 :
module @first_use {
  memref.global "private" constant @__constant_4xf32_1 : memref<4xf32> = dense<2.0>
  memref.global "private" @state : memref<4xf32>
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<4.0>
  memref.global "private" constant @__constant_2xi8 : memref<2xi8> = dense<3>
  memref.global "private" constant @__constant_4xf32_0 : memref<4xf32> = dense<1.0>
  func.func @f() {
    %a = memref.get_global @__constant_4xf32_0 : memref<4xf32>
    %b = memref.get_global @__constant_4xf32_1 : memref<4xf32>
    %c = memref.get_global @__constant_2xi8 : memref<2xi8>
    return
  }
  func.func @g() {
    %b = memref.get_global @__constant_4xf32_1 : memref<4xf32>
    %d = memref.get_global @__constant_4xf32 : memref<4xf32>
    return
  }
}

// -----

// Unused constant globals go last, ordered by their contents; a public or
// non-`__constant_` global is not renamed.
// CHECK-LABEL: module @unused
// CHECK-NEXT:  memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<5.000000e+00>
// CHECK-NEXT:  memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<6.000000e+00>
// CHECK-NEXT:  memref.global "private" constant @__constant_2xf32_1 : memref<2xf32> = dense<7.000000e+00>
// CHECK-NEXT:  memref.global constant @__constant_public : memref<2xf32> = dense<0.000000e+00>
module @unused {
  memref.global constant @__constant_public : memref<2xf32> = dense<0.0>
  memref.global "private" constant @__constant_2xf32_9 : memref<2xf32> = dense<7.0>
  memref.global "private" constant @__constant_2xf32_3 : memref<2xf32> = dense<6.0>
  memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<5.0>
  func.func @h() {
    %a = memref.get_global @__constant_2xf32 : memref<2xf32>
    return
  }
}

// -----

// LLVM-dialect globals (after the pipelines' LLVM lowering) too.
// CHECK-LABEL: module @llvm
// CHECK-NEXT:  llvm.mlir.global private constant @__constant_3xi32(dense<[4, 5, 6]>
// CHECK-NEXT:  llvm.mlir.global private constant @__constant_3xi32_0(dense<[1, 2, 3]>
// CHECK:       llvm.mlir.addressof @__constant_3xi32 : !llvm.ptr
module @llvm {
  llvm.mlir.global private constant @__constant_3xi32(dense<[1, 2, 3]> : tensor<3xi32>) {addr_space = 0 : i32} : !llvm.array<3 x i32>
  llvm.mlir.global private constant @__constant_3xi32_0(dense<[4, 5, 6]> : tensor<3xi32>) {addr_space = 0 : i32} : !llvm.array<3 x i32>
  llvm.func @k() -> !llvm.ptr {
    %p = llvm.mlir.addressof @__constant_3xi32_0 : !llvm.ptr
    llvm.return %p : !llvm.ptr
  }
}

// -----

// Compile times are removed from gpu.object properties; other properties
// stay.
// CHECK-LABEL: module @times
// CHECK:       gpu.binary @kernels  [#gpu.object<#nvvm.target<chip = "sm_90">, properties = {O = 3 : i32}, "PTX">]
// CHECK-NOT:   TimeInMs
module @times attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, properties = {LLVMIRToISATimeInMs = 12 : i64, O = 3 : i32, ISAToBinaryTimeInMs = 7 : i64}, "PTX">]
}
