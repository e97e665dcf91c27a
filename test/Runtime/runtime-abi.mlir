// The host code of every GPU operation the project's pipelines can emit,
// lowered the way fp4-pipeline-nvvm does (gpu-to-llvm, LLVM IR translation
// of gpu.launch_func and gpu.binary, nvgpu TMA descriptors), once with a PTX
// image (mgpuModuleLoadJIT) and once with a cubin (mgpuModuleLoad). The
// checker then requires every mgpu* function the translated modules declare
// to be exported by libfp4_cuda_runtime.so with the same LLVM signature as
// its prototype in fp4-c/CudaRuntime.h (which the runtime's definitions are
// compiled against): a function MLIR adds or changes fails here, not at run
// time on the GPU machine.
//
// REQUIRES: fp4-cuda-runtime
// RUN: mlir-opt %s -pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3 features=+ptx80},convert-nvgpu-to-nvvm,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),gpu-to-llvm{use-bare-pointers-for-kernels=1},gpu-module-to-binary{format=isa},convert-to-llvm,reconcile-unrealized-casts)" \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.isa.ll
// RUN: mlir-opt %s -pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3 features=+ptx80},convert-nvgpu-to-nvvm,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),gpu-to-llvm{use-bare-pointers-for-kernels=1},gpu-module-to-binary{format=bin toolkit=%cuda_root},convert-to-llvm,reconcile-unrealized-casts)" \
// RUN:   | mlir-translate --mlir-to-llvmir -o %t.bin.ll
// RUN: %python %S/check_runtime_abi.py --header %fp4_src_root/include/fp4-c/CudaRuntime.h \
// RUN:   --library %fp4_lib_dir/libfp4_cuda_runtime.so %t.isa.ll %t.bin.ll | FileCheck %s

// The checker lists each declaration it matched; these are the calls the
// two translations must contain at least.
// CHECK-DAG: ok mgpuModuleLoad(ptr, i64) -> ptr
// CHECK-DAG: ok mgpuModuleLoadJIT(ptr, i32) -> ptr
// CHECK-DAG: ok mgpuModuleUnload(ptr) -> void
// CHECK-DAG: ok mgpuModuleGetFunction(ptr, ptr) -> ptr
// CHECK-DAG: ok mgpuLaunchKernel(ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64) -> void
// CHECK-DAG: ok mgpuLaunchClusterKernel(ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr) -> void
// CHECK-DAG: ok mgpuStreamCreate() -> ptr
// CHECK-DAG: ok mgpuStreamDestroy(ptr) -> void
// CHECK-DAG: ok mgpuStreamSynchronize(ptr) -> void
// CHECK-DAG: ok mgpuStreamWaitEvent(ptr, ptr) -> void
// CHECK-DAG: ok mgpuEventCreate() -> ptr
// CHECK-DAG: ok mgpuEventDestroy(ptr) -> void
// CHECK-DAG: ok mgpuEventRecord(ptr, ptr) -> void
// CHECK-DAG: ok mgpuEventSynchronize(ptr) -> void
// CHECK-DAG: ok mgpuMemAlloc(i64, ptr, i8) -> ptr
// CHECK-DAG: ok mgpuMemFree(ptr, ptr) -> void
// CHECK-DAG: ok mgpuMemcpy(ptr, ptr, i64, ptr) -> void
// CHECK-DAG: ok mgpuMemset32(ptr, i32, i64, ptr) -> void
// CHECK-DAG: ok mgpuMemset16(ptr, i16, i64, ptr) -> void
// CHECK-DAG: ok mgpuMemHostRegisterMemRef(i64, ptr, i64) -> void
// CHECK-DAG: ok mgpuMemHostUnregisterMemRef(i64, ptr, i64) -> void
// CHECK-DAG: ok mgpuSetDefaultDevice(i32) -> void
// CHECK-DAG: ok mgpuTensorMapEncodeTiledMemref(i64, ptr, i64, i64, i64, i64, i64, ptr) -> ptr
// CHECK: all {{[0-9]+}} mgpu* declarations are exported with matching signatures

!tmap = !nvgpu.tensormap.descriptor<tensor = memref<64x64xbf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a: memref<256xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<256xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%i] : memref<256xf32>
      gpu.return
    }
  }

  // Synchronous and asynchronous launches (with dynamic shared memory and
  // clusters), allocation, copies, memsets, host registration, token joins.
  func.func @host(%h: memref<256xf32>) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 65536 : i32
    %zero = arith.constant 0.0 : f32
    %zero16 = arith.constant 0 : i16
    %dev = arith.constant 0 : i32
    gpu.set_default_device %dev
    %unranked = memref.cast %h : memref<256xf32> to memref<*xf32>
    gpu.host_register %unranked : memref<*xf32>
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%h : memref<256xf32>)
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<256xf32>
    %t2 = gpu.memcpy async [%t1] %d, %h : memref<256xf32>, memref<256xf32>
    %t3 = gpu.memset async [%t2] %d, %zero : memref<256xf32>, f32
    %d16, %t4 = gpu.alloc async [%t3] () : memref<256xi16>
    %t5 = gpu.memset async [%t4] %d16, %zero16 : memref<256xi16>, i16
    %t6 = gpu.launch_func async [%t5] @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%d : memref<256xf32>)
    %t7 = gpu.launch_func async [%t6] @kernels::@scale clusters in (%c2, %c1, %c1) blocks in (%c2, %c1, %c1) threads in (%c128, %c1, %c1) args(%d : memref<256xf32>)
    %t8 = gpu.memcpy async [%t7] %h, %d : memref<256xf32>, memref<256xf32>
    %t9 = gpu.dealloc async [%t8] %d : memref<256xf32>
    %t10 = gpu.dealloc async [%t8] %d16 : memref<256xi16>
    // Joining tokens of two streams records and waits on events.
    %t11 = gpu.wait async [%t9]
    %t12 = gpu.wait async [%t10, %t11]
    gpu.wait [%t12]
    gpu.host_unregister %unranked : memref<*xf32>
    return
  }

  // A token that does not come from a stream created here (an argument,
  // as across control flow) is waited on as an event.
  func.func @wait_event(%token: !gpu.async.token) {
    gpu.wait [%token]
    return
  }

  // A TMA descriptor for a wgmma kernel's operand, created on the host.
  func.func @tma(%d: memref<256x256xbf16>) {
    %c64 = arith.constant 64 : index
    %u = memref.cast %d : memref<256x256xbf16> to memref<*xbf16>
    %t = nvgpu.tma.create.descriptor %u box[%c64, %c64] : memref<*xbf16> -> !tmap
    return
  }
}
