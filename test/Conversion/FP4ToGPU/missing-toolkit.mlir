// Without the CUDA toolkit, format=bin fails with one line that names the
// missing tool, where it was looked for and how to set it (not the serializer's
// error, which prints the whole kernel module), and exit status 1.
// RUN: rm -rf %t && mkdir -p %t/empty
// RUN: not env CUDA_ROOT=%t/empty PATH=%t/empty fp4-opt %s \
// RUN:   -fp4-pipeline-nvvm="chip=sm_90 format=bin" -o %t/out.mlir 2> %t/root.err
// RUN: FileCheck %s --check-prefix=ROOT --input-file=%t/root.err
// RUN: count 1 < %t/root.err
// ROOT: missing-toolkit.mlir:0:0: error: format=bin needs 'ptxas' from the CUDA toolkit: not found in {{.*}}empty/bin (from $CUDA_ROOT) nor on PATH; install the CUDA toolkit and set the pipeline option cuda-path=DIR or CUDA_ROOT=DIR (DIR/bin/ptxas), or use format=isa for PTX

// The pipeline option wins over the environment.
// RUN: not env CUDA_ROOT=/usr/local/cuda PATH=%t/empty fp4-opt %s \
// RUN:   -fp4-pipeline-nvvm="chip=sm_90 format=fatbin cuda-path=%t/empty" 2> %t/option.err
// RUN: FileCheck %s --check-prefix=OPTION --input-file=%t/option.err
// RUN: count 1 < %t/option.err
// OPTION: error: format=fatbin needs 'ptxas' from the CUDA toolkit: not found in {{.*}}empty/bin (from cuda-path) nor on PATH

// Kernels calling CUDA math functions need libdevice, even for PTX.
// RUN: not env CUDA_ROOT=%t/empty PATH=%t/empty fp4-opt %fp4_src_root/examples/quickstart.mlir \
// RUN:   -fp4-quantize -fp4-pipeline-nvvm="chip=sm_90 format=isa" -o %t/q.mlir 2> %t/libdevice.err
// RUN: FileCheck %s --check-prefix=LIBDEVICE --input-file=%t/libdevice.err
// RUN: count 1 < %t/libdevice.err
// LIBDEVICE: quickstart.mlir:0:0: error: the kernels call __nv_{{[a-z]+}}, which needs libdevice from the CUDA toolkit: {{.*}}empty/nvvm/libdevice/libdevice.10.bc not found (from $CUDA_ROOT); install the CUDA toolkit and set the pipeline option cuda-path=DIR or CUDA_ROOT=DIR (DIR/nvvm/libdevice/libdevice.10.bc)

// PTX of kernels without such calls needs no toolkit; neither does a module
// without kernels.
// RUN: env CUDA_ROOT=%t/empty PATH=%t/empty fp4-opt %s \
// RUN:   -fp4-pipeline-nvvm="chip=sm_90 format=isa" | FileCheck %s --check-prefix=ISA
// ISA: gpu.binary @fp4_kernels
// RUN: echo "func.func @f() { return }" > %t/plain.mlir
// RUN: env CUDA_ROOT=%t/empty PATH=%t/empty fp4-opt %t/plain.mlir \
// RUN:   -fp4-pipeline-nvvm="chip=sm_90 format=bin" | FileCheck %s --check-prefix=PLAIN
// PLAIN: llvm.func @f()

func.func @w4a16(%a: tensor<4x64xbf16>,
                 %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1>)
    -> tensor<4x8xf32> attributes {llvm.emit_c_interface} {
  %y = fp4.matmul %a, %w : tensor<4x64xbf16>,
      !fp4.tensor<8x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
