// The host side of convert-fp4-to-gpu: each op becomes a call to a private
// launch function over its buffers (inputs, then outputs), declared with the
// plan; fp4-gpu-materialize-launches writes its body after bufferization.
// Ops the GPU kernels cannot take stay on the host with a remark.
// RUN: fp4-opt %s -convert-fp4-to-gpu -verify-diagnostics | FileCheck %s
// RUN: fp4-opt %s -convert-fp4-to-gpu -fp4-gpu-materialize-launches | FileCheck %s --check-prefix=BODY

!w = !fp4.tensor<40x256xf4E2M1FN, #fp4.mxfp4<block_size = 32>, axis = 1>

// The plan, typed (#fp4.launch_plan): on the launch function, and in the
// module's manifest (#fp4.gpu_manifest) that kernels.json is derived from.
// CHECK: module attributes {fp4.gpu_manifest = #fp4.gpu_manifest<chip = "sm_90", plans = [<op = "fp4.matmul", inputs = ["lhs" : memref<3x256xbf16>, "rhs.codes" : memref<40x128xi8>, "rhs.scales" : memref<40x8xi8>], outputs = ["result" : memref<3x40xf32>], scratch = [], launches = [<@fp4_kernels::@fp4_matmul_0, variant = "decode_w4a16", grid = [3, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["lhs", "rhs.codes", "rhs.scales", "result"]>]>]>
// CHECK-SAME: gpu.container_module
// CHECK: func.func private @fp4_matmul_0_launch(memref<3x256xbf16>, memref<40x128xi8>, memref<40x8xi8>, memref<3x40xf32>)
// CHECK-SAME: attributes {fp4.launch_plan = #fp4.launch_plan<op = "fp4.matmul", inputs = ["lhs" : memref<3x256xbf16>, "rhs.codes" : memref<40x128xi8>, "rhs.scales" : memref<40x8xi8>], outputs = ["result" : memref<3x40xf32>], scratch = [], launches = [<@fp4_kernels::@fp4_matmul_0, variant = "decode_w4a16", grid = [3, 1, 1], block = [32, 1, 1], shared_bytes = 0, args = ["lhs", "rhs.codes", "rhs.scales", "result"]>]>}
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:.*]]: tensor<3x256xbf16>, %[[W:.*]]: !fp4.tensor
// CHECK: %[[C:.*]]:2 = fp4.unpack %[[W]]
// CHECK-DAG: %[[AB:.*]] = bufferization.to_buffer %[[A]] read_only
// CHECK-DAG: %[[CB:.*]] = bufferization.to_buffer %[[C]]#0 read_only
// CHECK-DAG: %[[SB:.*]] = bufferization.to_buffer %[[C]]#1 read_only
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<3x40xf32>
// CHECK: call @fp4_matmul_0_launch(%[[AB]], %[[CB]], %[[SB]], %[[OUT]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK: gpu.module @fp4_kernels
// CHECK: gpu.func @fp4_matmul_0(%{{.*}}: memref<3x256xbf16> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<40x128xi8> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<40x8xi8> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<3x40xf32> {llvm.noalias}) kernel

// BODY-LABEL: func.func private @fp4_matmul_0_launch(
// BODY-SAME: %[[A:.*]]: memref<3x256xbf16>, %[[C:.*]]: memref<40x128xi8>, %[[S:.*]]: memref<40x8xi8>, %[[O:.*]]: memref<3x40xf32>)
// BODY: %[[T0:.*]] = gpu.wait async
// BODY: %[[DA:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<3x256xbf16>
// BODY: %[[T2:.*]] = gpu.memcpy async [%[[T1]]] %[[DA]], %[[A]]
// BODY: %[[DO:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<3x40xf32>
// BODY-NOT: gpu.memcpy
// BODY: %[[TL:.*]] = gpu.launch_func async [%{{.*}}] @fp4_kernels::@fp4_matmul_0 blocks in
// BODY: %[[TC:.*]] = gpu.memcpy async [%[[TL]]] %[[O]], %[[DO]]
// BODY-COUNT-4: gpu.dealloc async
// BODY: gpu.wait [%{{.*}}]
// BODY-NEXT: return
func.func @matmul(%a: tensor<3x256xbf16>, %w: !w) -> tensor<3x40xf32> {
  %y = fp4.matmul %a, %w : tensor<3x256xbf16>, !w -> tensor<3x40xf32>
  return %y : tensor<3x40xf32>
}

// Dynamic shapes stay on the host.
func.func @dynamic(%a: tensor<?x256xbf16>, %w: !w) -> tensor<?x40xf32> {
  // expected-remark @below {{stays on the host: the GPU kernels need static rank-2 operands}}
  %y = fp4.matmul %a, %w : tensor<?x256xbf16>, !w -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}
