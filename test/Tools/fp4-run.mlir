// fp4-run build: a module with a kernel and a host function (llvm.emit_c_interface)
// becomes model.so, linked against libfp4_cuda_runtime.so (copied next to it,
// found through RUNPATH $ORIGIN), with the entry's signature in model.so.json.
// Until fp4-pipeline-nvvm lowers fp4 ops this uses the equivalent upstream
// pipeline on a hand-written gpu.launch_func module.
//
// REQUIRES: fp4-cuda-runtime
// RUN: rm -rf %t && mkdir -p %t
// RUN: fp4-run build %s -o %t/model.so --fp4-opt mlir-opt \
// RUN:   --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3 features=+ptx80},gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),gpu-to-llvm{use-bare-pointers-for-kernels=1},gpu-module-to-binary{format=bin toolkit=%cuda_root},convert-to-llvm,reconcile-unrealized-casts)" \
// RUN:   | FileCheck %s --check-prefix=BUILD
// BUILD: fp4-run: wrote {{.*}}model.so (entries: double) and {{.*}}libfp4_cuda_runtime.so

// RUN: llvm-nm -D --defined-only %t/model.so | FileCheck %s --check-prefix=DEFINED
// DEFINED: T _mlir_ciface_double
// RUN: llvm-nm -D --undefined-only %t/model.so | FileCheck %s --check-prefix=UNDEFINED
// UNDEFINED-DAG: U mgpuLaunchKernel
// UNDEFINED-DAG: U mgpuModuleLoad
// UNDEFINED-DAG: U mgpuModuleGetFunction
// RUN: llvm-readelf -d %t/model.so | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC-DAG: (NEEDED) {{.*}} [libfp4_cuda_runtime.so]
// DYNAMIC-DAG: (RUNPATH) {{.*}} [$ORIGIN]
// RUN: llvm-nm -D --defined-only %t/libfp4_cuda_runtime.so | FileCheck %s --check-prefix=RUNTIME
// RUNTIME: T mgpuLaunchKernel
// RUN: FileCheck %s --check-prefix=SIGNATURE < %t/model.so.json
// SIGNATURE: "double"
// SIGNATURE: "dtype": "float32"

// exec checks its inputs against the recorded signature before it touches
// the driver, so these errors are the same with and without a GPU.
// `python3`, not %python: fp4-run runs under the python3 on PATH, which has numpy.
// RUN: python3 -c "import numpy; numpy.save(r'%t/a.npy', numpy.arange(256, dtype=numpy.float32)); numpy.save(r'%t/d.npy', numpy.zeros(256)); numpy.save(r'%t/s.npy', numpy.zeros(8, numpy.float32))"
// RUN: not fp4-run exec %t/model.so --entry nothing --input %t/a.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: fp4-run: error: no entry 'nothing' in {{.*}}model.so (entries: double; functions need llvm.emit_c_interface)
// RUN: not fp4-run exec %t/model.so --entry double --input %t/d.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: fp4-run: error: 'double' argument 0 ({{.*}}d.npy): expected dtype float32, got float64
// RUN: not fp4-run exec %t/model.so --entry double --input %t/s.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: fp4-run: error: 'double' argument 0 ({{.*}}s.npy): expected shape [256], got [8]
// RUN: not fp4-run exec %t/model.so --entry double --input %t/a.npy --input %t/a.npy --input %t/a.npy --output-dir %t/out 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: fp4-run: error: 'double' takes 2 arguments, 3 inputs given

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a: memref<256xf32>, %b: memref<256xf32>) kernel {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %t = arith.muli %bid, %bdim : index
      %i = arith.addi %t, %tid : index
      %v = memref.load %a[%i] : memref<256xf32>
      %two = arith.constant 2.0 : f32
      %w = arith.mulf %v, %two : f32
      memref.store %w, %b[%i] : memref<256xf32>
      gpu.return
    }
  }
  // b = 2 * a; `b` is a destination-passing output (exec allocates it).
  func.func @double(%a: memref<256xf32>, %b: memref<256xf32>) attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@scale blocks in (%c2, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : memref<256xf32>, %b : memref<256xf32>)
    return
  }
  // Not an entry: no llvm.emit_c_interface.
  func.func @helper() {
    return
  }
}
