// fp4-run build without ptxas: one line naming the tool, where it looked and
// how to set it, before any compilation step runs.
// REQUIRES: fp4-cuda-runtime
// RUN: rm -rf %t && mkdir -p %t/empty
// `%python fp4-run`: with PATH emptied, `env python3` in its shebang would fail.
// RUN: not env CUDA_ROOT=%t/empty PATH=%t/empty %python fp4-run build %s -o %t/model.so 2> %t/err
// RUN: FileCheck %s --input-file=%t/err
// RUN: count 1 < %t/err
// CHECK: fp4-run: error: building needs 'ptxas' from the CUDA toolkit: not found in {{.*}}empty/bin (from $CUDA_ROOT) nor on PATH; install the CUDA toolkit and set CUDA_ROOT=DIR or --pipeline-opts cuda-path=DIR (DIR/bin/ptxas)
// RUN: not env CUDA_ROOT=/usr/local/cuda PATH=%t/empty %python fp4-run build %s -o %t/model.so \
// RUN:   --pipeline-opts "cuda-path=%t/empty" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: not found in {{.*}}empty/bin (from cuda-path)

func.func @f(%a: memref<64xf32>) attributes {llvm.emit_c_interface} {
  return
}
