//===- Passes.td - fp4 conversion passes -------------------*- tablegen -*-===//

#ifndef FP4_CONVERSION_PASSES_TD
#define FP4_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFP4ToLinalg : Pass<"convert-fp4-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower fp4 ops to linalg/arith on packed codes and scales";
  let description = [{
    The CPU reference lowering. Every `!fp4.tensor` becomes its component
    tensors (docs/ABI.md; a 1:N type conversion through function signatures,
    calls and returns), and every fp4 op becomes `linalg.generic`s whose
    bodies are the project's scalar encoders emitted as arith ops, bit for bit
    the same rules the constant folder runs in C++. `fp4.matmul` becomes
    dequantization to f32 plus a linalg contraction with f32 accumulation.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect"
  ];
}

#endif // FP4_CONVERSION_PASSES_TD
