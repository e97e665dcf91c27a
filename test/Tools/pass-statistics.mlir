// Debian's MLIR counts no pass statistics (LLVM_ENABLE_STATS=0); fp4-opt
// answers -mlir-pass-statistics with fp4's own record, in MLIR's list
// format (tools/fp4-opt/PassStatisticsFlag.h).
// RUN: fp4-opt %s -fp4-reproducible-output -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s
// Without the flag, no report.
// RUN: fp4-opt %s -fp4-reproducible-output -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty
// Threads: the clones' counts add up (one module here, the same total).
// RUN: fp4-opt %s -fp4-reproducible-output -mlir-pass-statistics -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s

// CHECK:      Pass statistics report (fp4)
// CHECK:      FP4ReproducibleOutput
// CHECK-NEXT:   (S) 3 renamed-globals - Constant globals given their canonical name
// NONE-NOT:   Pass statistics report

module {
  memref.global "private" constant @__constant_4xf32_1 : memref<4xf32> = dense<2.0>
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<4.0>
  memref.global "private" constant @__constant_4xf32_0 : memref<4xf32> = dense<1.0>
  func.func @f() {
    %a = memref.get_global @__constant_4xf32_0 : memref<4xf32>
    %b = memref.get_global @__constant_4xf32_1 : memref<4xf32>
    %d = memref.get_global @__constant_4xf32 : memref<4xf32>
    return
  }
}
