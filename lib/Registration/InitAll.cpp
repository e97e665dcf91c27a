//===- InitAll.cpp - register every fp4 dialect, pass and pipeline --------===//

#include "fp4/InitAll.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::fp4::registerAllDialects(DialectRegistry &registry) {
  registry.insert<fp4::FP4Dialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, tensor::TensorDialect>();
}

void mlir::fp4::registerAllPasses() {}
