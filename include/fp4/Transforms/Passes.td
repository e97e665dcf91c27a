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

def FP4ContractionToRuntimeCall
    : Pass<"fp4-contraction-to-runtime-call", "::mlir::ModuleOp"> {
  let summary = "Replace f32 contractions on buffers by calls to fp4's CPU "
                "contraction kernel (libfp4_cpu_runtime)";
  let description = [{
    Rewrites every linalg op on memrefs that is an f32 contraction with
    one M, one N, one K and at most one batch dimension (`linalg.matmul`,
    `linalg.batch_matmul`, transposed variants, and the `linalg.generic`
    forms convert-fp4-to-linalg and frontends emit, including an operand
    broadcast over the batch) whose body is `out + lhs * rhs` into

    ```mlir
    func.call @fp4_cpu_contract_f32(%a, %b, %c)
        : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, ...) -> ()
    ```

    on strided views `a[b, m, k]`, `b[b, k, n]`, `c[b, m, n]` of the
    operands' buffers (`memref.reinterpret_cast` of their strided metadata;
    an operand without the batch dimension gets stride 0). The callee,
    `_mlir_ciface_fp4_cpu_contract_f32` in libfp4_cpu_runtime.so, is a
    packed, register-tiled, multi-threaded kernel in which every output
    element does exactly what the loops do: `acc = c`, then for k in order
    `acc = acc + a * b`, one rounding per operation, no FMA. So the result
    is bit-identical to linalg-to-loops (NaN payloads aside, which
    neither order fixes).

    The block-sparse forms of `fp4.correction_matmul`, which
    convert-fp4-to-linalg lowers to gather loops tagged
    `fp4.sparse_product` (sparse x dense, dense x sparse, sparse x
    sparse), become calls to `fp4_cpu_sparse_dense_f32` /
    `fp4_cpu_sparse_sparse_f32` (CPUSparseProduct.h) on strided views of
    the values, indices, the gathered operand and the output; those
    kernels sum every output element's terms in the loops' order (blocks,
    then slots), one multiply and one add each (`sparse-converted`). A
    tagged op whose buffers no longer have the tagged form is left as
    loops and counted as skipped, with the reason under `report-skipped`.

    Contractions of another element type, with several M/N/K/batch
    dimensions, non-permutation indexing maps or another body stay as they
    are; `skipped` counts them and `report-skipped` emits a remark naming
    the reason on each. fp4-pipeline-cpu runs this pass with `fast`
    (option `microkernels`).
  }];
  let options = [
    Option<"reportSkipped", "report-skipped", "bool", /*default=*/"false",
           "Emit a remark on each contraction left as it is, with the "
           "reason">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numConverted", "converted",
              "Contractions replaced by a runtime call">,
    Statistic<"numSparseConverted", "sparse-converted",
              "Block-sparse correction products replaced by a runtime call">,
    Statistic<"numSkipped", "skipped",
              "Contractions left as linalg ops (see report-skipped)">,
  ];
}

def FP4FlattenConstantGlobals
    : Pass<"fp4-flatten-constant-globals", "::mlir::ModuleOp"> {
  let summary = "Store multi-dimensional constant memref.globals as 1-D "
                "arrays";
  let description = [{
    memref-to-llvm gives a global of type `memref<30522x384xf32>` the LLVM
    type `[30522 x [384 x float]]`, whose initializer LLVM builds as 30522
    uniqued row constants: for a model's weights (a BERT encoder's 22M
    parameters) translating, optimizing and emitting those nested constants
    was most of the JIT's time. This pass gives every constant global of
    rank > 1 with an initial value (`dense` or `dense_resource`, the latter
    keeping its blob, so nothing is copied) the 1-D type of the same
    elements, and rewrites each `memref.get_global` of it to the 1-D global
    plus a `memref.expand_shape` back to the original shape: the same bytes
    in the same order, one flat `[N x float]` array in LLVM.

    Globals that are not constant, have no initializer, or are used other
    than by `memref.get_global` are left as they are (statistic
    `not-flattened`). fp4-pipeline-cpu runs it after bufferization.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numFlattened", "flattened",
              "Constant globals given a 1-D type">,
    Statistic<"numNotFlattened", "not-flattened",
              "Multi-dimensional globals left as they are">,
  ];
}

def FP4FuseElementwise
    : Pass<"fp4-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg.generic ops on tensors";
  let description = [{
    Frontend IR spells one expression as a chain of elementwise ops (torch-
    mlir: exact GELU is 5 `linalg.generic`s, LayerNorm's normalize 4), each
    a loop nest and a buffer once lowered. This pass merges an elementwise
    producer with a single use into its elementwise consumer (upstream
    `populateElementwiseOpsFusionPatterns`, restricted by its control
    function to all-parallel producers and consumers), so the expression
    becomes one loop with the intermediate values in registers. Every
    element still sees the same operations in the same order, each rounded
    once, so results are bit-identical; reductions and contractions are
    never fused into (their bodies stay recognizable to
    fp4-contraction-to-runtime-call). fp4-pipeline-cpu runs it with `fast`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numFused", "fused", "Producer ops fused into a consumer">,
  ];
}

def FP4OutlineLoopNests
    : Pass<"fp4-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Move each top-level loop nest of a big function into its "
                "own function";
  let description = [{
    A whole model lowered to loops is one function with hundreds of loop
    nests. LLVM's loop passes are not linear in the loops of one function:
    on the MiniLM encoder with HiF4 W4A4, IndVarSimplify alone took 30 of
    the 36 seconds of `opt -O1`. This pass gives every top-level `scf.for`
    / `scf.parallel` nest of a function that has at least
    `min-loop-nests` of them its own private function (marked `noinline`
    through `passthrough`, so LLVM does not merge them back) and calls it
    in place. Values the nest uses from outside become arguments, except
    operand-free side-effect-free ops (constants, `memref.get_global`) and
    pure ops built only from such values, which are cloned in so the
    outlined code keeps static bounds and global addresses. Nothing is
    computed differently. Nests that outline to the same function (the same
    ops on the same argument types and constants, as a model's repeated
    layers give) share one: LLVM optimizes and compiles it once
    (`shared` counts the calls that reuse one). fp4-pipeline-cpu runs it
    with `fast`.
  }];
  let options = [
    Option<"minLoopNests", "min-loop-nests", "int64_t", /*default=*/"16",
           "Outline only functions with at least this many top-level loop "
           "nests">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numOutlined", "outlined", "Loop nests outlined">,
    Statistic<"numShared", "shared",
              "Outlined loop nests that reuse an identical function">,
  ];
}

#endif // FP4_TRANSFORMS_PASSES_TD
