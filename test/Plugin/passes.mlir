// The plugin is loaded by upstream mlir-opt, which carries no sanitizer
// runtime: not in the ASan + UBSan build.
// UNSUPPORTED: sanitized
// A stock mlir-opt runs the fp4 passes and pipelines from lib/FP4Plugin.so
// (one library for both flags). Passes go in --pass-pipeline / -p: mlir-opt
// builds its pass flags before it loads plugins, so `-fp4-quantize` as a flag
// stays unknown to it.
// RUN: %mlir_opt --load-dialect-plugin=%fp4_plugin --load-pass-plugin=%fp4_plugin \
// RUN:   %s --pass-pipeline="builtin.module(fp4-quantize)" | FileCheck %s --check-prefix=QUANT
// RUN: %mlir_opt --load-dialect-plugin=%fp4_plugin --load-pass-plugin=%fp4_plugin \
// RUN:   %s -p "builtin.module(fp4-quantize{scheme=nvfp4},fp4-fold-constants)" \
// RUN:   | FileCheck %s --check-prefix=FOLD
// RUN: %mlir_opt --load-dialect-plugin=%fp4_plugin --load-pass-plugin=%fp4_plugin %s \
// RUN:   --pass-pipeline="builtin.module(fp4-quantize,fp4-fold-constants,fp4-pipeline-cpu)" \
// RUN:   | FileCheck %s --check-prefix=CPU
// RUN: %mlir_opt --load-dialect-plugin=%fp4_plugin --load-pass-plugin=%fp4_plugin %s \
// RUN:   --pass-pipeline="builtin.module(fp4-quantize,fp4-pipeline-nvvm{chip=sm_90 format=isa})" \
// RUN:   | FileCheck %s --check-prefix=NVVM
// Pass errors are the passes' own diagnostics.
// RUN: not %mlir_opt --load-dialect-plugin=%fp4_plugin --load-pass-plugin=%fp4_plugin %s \
// RUN:   --pass-pipeline="builtin.module(fp4-quantize{scheme=bogus})" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: fp4-quantize: invalid scheme 'bogus'
// The passes and pipelines are listed in --help like upstream's.
// RUN: %mlir_opt --load-pass-plugin=%fp4_plugin --help | FileCheck %s --check-prefix=HELP

// QUANT-LABEL: func.func @linear
// QUANT: fp4.quantize %{{.*}} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// QUANT: fp4.matmul

// FOLD-LABEL: func.func @linear
// FOLD: fp4.pack
// FOLD-SAME: #fp4.nvfp4

// CPU: llvm.func @linear(
// CPU-NOT: fp4.

// NVVM-DAG: llvm.func @linear(
// NVVM-DAG: gpu.binary @fp4_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx85">, properties = {{.*}}, assembly = "

// HELP-DAG: --fp4-quantize
// HELP-DAG: --fp4-fold-constants
// HELP-DAG: --convert-fp4-to-gpu
// HELP-DAG: --fp4-pipeline-cpu
// HELP-DAG: --fp4-pipeline-nvvm

func.func @linear(%x: tensor<4x64xf32>) -> tensor<4x8xf32>
    attributes {llvm.emit_c_interface} {
  %w = arith.constant dense<0.5> : tensor<64x8xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
