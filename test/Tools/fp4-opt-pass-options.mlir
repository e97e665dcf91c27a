// A mistyped or invalid pass option names the pass and lists its options
// (upstream says only "<Pass-Options-Parser>: no such option ...").
// RUN: not fp4-opt %s -fp4-quantize=schem=nvfp4 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: fp4-opt: error: invalid options for pass 'fp4-quantize' (`schem=nvfp4`): no such option schem; its options (with defaults): activation-products=false operands=both recipe= remarks=false scheme=#fp4.mxfp4
// RUN: not fp4-opt %s --fp4-rotate="size=abc" 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: fp4-opt: error: invalid options for pass 'fp4-rotate' (`size=abc`): for the --size option: 'abc' value invalid for long argument!; its options (with defaults): {{.*}}size=32
// RUN: not fp4-opt %s -fp4-pipeline-cpu=lower-to-llvm=maybe 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: fp4-opt: error: invalid options for pipeline 'fp4-pipeline-cpu' (`lower-to-llvm=maybe`): {{.*}}maybe{{.*}}; `fp4-opt --help` lists its options
// Upstream passes get the same treatment.
// RUN: not fp4-opt %s -canonicalize=max-iteration=3 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM: fp4-opt: error: invalid options for pass 'canonicalize' (`max-iteration=3`): no such option max-iteration; its options (with defaults): {{.*}}max-iterations=
// Valid options still run.
// RUN: fp4-opt %s -fp4-quantize=scheme=nvfp4 | FileCheck %s --check-prefix=OK
// OK: fp4.matmul

func.func @f(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x64xf32>, tensor<64x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
