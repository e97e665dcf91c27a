// --version names fp4-mlir's version (the VERSION file), the git revision
// when built from a checkout, and the LLVM/MLIR it was built with, after
// LLVM's own lines.
// RUN: cp %fp4_src_root/VERSION %t.opt && fp4-opt --version >> %t.opt
// RUN: FileCheck %s --input-file=%t.opt
// RUN: cp %fp4_src_root/VERSION %t.quant && fp4-quant --version >> %t.quant
// RUN: FileCheck %s --input-file=%t.quant

// CHECK: [[VERSION:[0-9]+\.[0-9]+\.[0-9]+]]
// CHECK: LLVM version [[LLVM:22\.[0-9]+\.[0-9]+]]
// CHECK: fp4-mlir version [[VERSION]]{{( \(git [0-9a-f]+\))?$}}
// CHECK-NEXT: built with LLVM/MLIR [[LLVM]]
