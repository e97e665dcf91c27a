// fp4-run exec on a machine without an NVIDIA driver (CI) fails with a clear
// message (and exit status 3: test/python/test_gpu_runtime.py).
//
// REQUIRES: fp4-cuda-runtime
// UNSUPPORTED: cuda-driver
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp4-run build %s -o %t/model.so --fp4-opt mlir-opt \
// RUN:   --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3 features=+ptx80},gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),gpu-to-llvm{use-bare-pointers-for-kernels=1},gpu-module-to-binary{format=isa},convert-to-llvm,reconcile-unrealized-casts)"
// `python3`, not %python: fp4-run runs under the python3 on PATH, which has numpy.
// RUN: python3 -c "import numpy; numpy.save(r'%t/a.npy', numpy.ones(64, numpy.float32))"
// RUN: not fp4-run exec %t/model.so --entry fill --input %t/a.npy --output-dir %t/out 2>&1 | FileCheck %s
// CHECK: fp4-run: error: no NVIDIA driver: libcuda.so.1 cannot be loaded

// Building needs no GPU, and neither does an input without
// llvm.emit_c_interface being refused.
// RUN: echo "func.func @f() { return }" > %t/plain.mlir
// RUN: not fp4-run build %t/plain.mlir -o %t/plain.so 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: fp4-run: error: {{.*}}plain.mlir: no func.func carries llvm.emit_c_interface

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%a: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%i] : memref<64xf32>
      gpu.return
    }
  }
  func.func @fill(%a: memref<64xf32>) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
}
