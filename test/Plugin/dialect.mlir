// The plugin is loaded by upstream mlir-opt, which carries no sanitizer
// runtime: not in the ASan + UBSan build.
// UNSUPPORTED: sanitized
// A stock mlir-opt parses and prints fp4 IR once lib/FP4Plugin.so is loaded
// as a dialect plugin; without it the same input is rejected.
// RUN: %mlir_opt --load-dialect-plugin=%fp4_plugin %s \
// RUN:   | %mlir_opt --load-dialect-plugin=%fp4_plugin | FileCheck %s
// RUN: not %mlir_opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
// NOPLUGIN: error: `!"fp4"<"tensor<8x64xf4E2M1FN, #fp4.nvfp4, axis = 1>">` type created with unregistered dialect

// The plugin links the libMLIR.so mlir-opt runs on (one MLIR per process),
// not the static MLIR libraries.
// RUN: llvm-readelf --dynamic %fp4_plugin | FileCheck %s --check-prefix=ELF
// ELF-DAG: (NEEDED) Shared library: [libMLIR.so.22.1]
// ELF-DAG: (NEEDED) Shared library: [libLLVM.so.22.1]
// It exports both entry points and defines no MLIR core code of its own.
// RUN: llvm-nm -D --defined-only %fp4_plugin | FileCheck %s --check-prefix=ENTRY
// ENTRY-DAG: mlirGetDialectPluginInfo
// ENTRY-DAG: mlirGetPassPluginInfo
// RUN: llvm-nm --defined-only --demangle %fp4_plugin | not grep -E "mlir::(MLIRContext::MLIRContext|PassManager::run)\("

// CHECK-LABEL: func.func @roundtrip
// CHECK-SAME: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: %[[Q:.*]] = fp4.quantize %{{.*}} : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
// CHECK: fp4.matmul %[[Q]], %{{.*}} : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>, !fp4.tensor<8x64xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<4x8xf32>
func.func @roundtrip(%x: tensor<4x64xf32>,
                     %w: !fp4.tensor<8x64xf4E2M1FN, #fp4.nvfp4, axis = 1>,
                     %p: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>)
    -> tensor<4x8xf32> {
  %q = fp4.quantize %x : tensor<4x64xf32>
      -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %q, %w : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>,
      !fp4.tensor<8x64xf4E2M1FN, #fp4.nvfp4, axis = 1> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
