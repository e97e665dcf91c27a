//===- Passes.td - dialect-independent fp4-mlir passes -----*- tablegen -*-===//

#ifndef FP4_TRANSFORMS_PASSES_TD
#define FP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4ReproducibleOutput
    : Pass<"fp4-reproducible-output", "::mlir::ModuleOp"> {
  let summary = "Make pipeline output a function of its input alone";
  let description = [{
    Removes the two sources of run-to-run differences in lowered modules,
    so the same input gives the same bytes on every run, threaded or not:

    - Constant globals that one-shot bufferization creates for tensor
      constants (`memref.global`, later `llvm.mlir.global`, named
      `__constant_<type>[_<n>]`) are named and placed in an order that
      depends on the address-ordered traversal of functions inside upstream
      bufferization. This pass renames every such global to
      `__constant_<type>` plus `_<n>` for the n-th distinct global of that
      type in the order of first use (a walk of the module in program
      order; unused ones after, by their contents), and moves them, in that
      order, to the start of the module.
    - `gpu-module-to-binary` records compile times (`LLVMIRToISATimeInMs`,
      `ISAToBinaryTimeInMs`) in the properties of every `#gpu.object`. They
      are removed unless `keep-compile-times` is set.

    Other symbols are not touched. fp4-pipeline-cpu and fp4-pipeline-nvvm
    run this pass last.

    ```mlir
    // before                                 // after
    memref.global "private" constant           memref.global "private" constant
        @__constant_4xf32_0 : ... = dense<2.0>     @__constant_4xf32 : ... = dense<1.0>
    memref.global "private" constant           memref.global "private" constant
        @__constant_4xf32 : ... = dense<1.0>       @__constant_4xf32_0 : ... = dense<2.0>
    func.func @f() {                           func.func @f() {
      memref.get_global @__constant_4xf32        memref.get_global @__constant_4xf32
      memref.get_global @__constant_4xf32_0      memref.get_global @__constant_4xf32_0
    ```
  }];
  let options = [
    Option<"keepCompileTimes", "keep-compile-times", "bool",
           /*default=*/"false",
           "Keep the compile times gpu-module-to-binary records">,
  ];
  let statistics = [
    Statistic<"numRenamed", "renamed-globals",
              "Constant globals given their canonical name">,
    Statistic<"numTimesRemoved", "removed-compile-times",
              "Compile-time properties removed from gpu.object attributes">,
  ];
}

#endif // FP4_TRANSFORMS_PASSES_TD
