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

def FP4ContractionLoopOrder
    : Pass<"fp4-contraction-loop-order", "::mlir::func::FuncOp"> {
  let summary = "Put a contraction's reduction loops outside its innermost "
                "output dimension, for vectorizable loops";
  let description = [{
    Generalizes and interchanges contractions (linalg ops whose innermost
    loop is a reduction, e.g. `linalg.matmul`'s `(i, j, k)`) so that the
    parallel loop indexing the output's last, unit-stride dimension becomes
    the innermost one: `(i, k, j)`. Lowered to loops, the innermost loop
    then updates consecutive output elements without a loop-carried
    dependence, which LLVM's loop vectorizer turns into SIMD code without
    any fast-math flag: every output element still accumulates its products
    in the same order, one rounding per operation, so the results are
    bit-identical to the loops of the original order.

    An op is moved only if every operand that the moved dimension indexes
    has it as its last (unit-stride) dimension, so no access becomes
    strided (a softmax's row sum, `(d0, d1, d2) -> (d0, d1)` reading
    `(d0, d1, d2)`, is left as it is). Works on tensors and buffers.
    fp4-pipeline-cpu runs it with `fast`.

    ```mlir
    // before: linalg.matmul ins(%a, %b) outs(%c)     (i, j, k)
    // after:  linalg.generic {iterator_types = ["parallel", "reduction",
    //                          "parallel"]}          (i, k, j)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numInterchanged", "interchanged",
              "Contractions whose loops were reordered">,
  ];
}

#endif // FP4_TRANSFORMS_PASSES_TD
