// RUN: fp4-opt %s -fp4-fold-constants -fp4-pipeline-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs | FileCheck %s
// RUN: fp4-opt %s -fp4-pipeline-nvvm="chip=sm_90 format=isa" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU

// fp4 ops with K = 0 written by hand (fp4-quantize leaves such contractions
// to linalg): the constant folder keeps the empty weight, the CPU pipeline
// computes the empty product (all zeros), and convert-fp4-to-gpu keeps them
// on the host instead of building kernels with an empty K loop.
// GPU: remark: stays on the host: the input has an empty dimension (nothing to compute)
// GPU: remark: stays on the host: an operand has an empty dimension (nothing to compute)
// GPU-NOT: error

func.func private @printMemrefF32(memref<*xf32>)

func.func @k0(%x: tensor<4x0xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<1.0> : tensor<8x0xf32>
  %q = fp4.quantize %w : tensor<8x0xf32> -> !fp4.tensor<8x0xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %qx = fp4.quantize %x : tensor<4x0xf32> -> !fp4.tensor<4x0xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %qx, %q : !fp4.tensor<4x0xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x0xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func @main() {
  %x = arith.constant dense<> : tensor<4x0xf32>
  %y = call @k0(%x) : (tensor<4x0xf32>) -> tensor<4x8xf32>
  %m = bufferization.to_buffer %y : tensor<4x8xf32> to memref<4x8xf32>
  %u = memref.cast %m : memref<4x8xf32> to memref<*xf32>
  // CHECK: rank = 2 offset = 0 sizes = [4, 8]
  // CHECK-COUNT-4: [0,   0,   0,   0,   0,   0,   0,   0]
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
