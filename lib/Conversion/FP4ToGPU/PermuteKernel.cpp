//===- PermuteKernel.cpp - fp4.permute on the GPU -------------------------===//
//
// result[r, i] = input[r, permutation[i]] along the last axis of a rank-2
// tensor: one thread per result element, a copy (exact for every element
// type). The permutation (two-level rotation's block balancing, thousands of
// entries) is too long for a compare chain, so it is a read-only i32
// argument the host passes from a constant; neighbouring threads read
// neighbouring table entries and, for balanced blocks, mostly nearby input
// elements.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

FailureOr<KernelPlan> mlir::fp4::buildPermuteKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const PermuteKernelSpec &spec, std::string &reason) {
  if (spec.rows <= 0 || spec.cols <= 0) {
    reason = "the permutation kernel needs a non-empty tensor";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  ThreadPerItem kernel = createThreadPerItemKernel(
      builder, loc, module, name, spec.args, spec.rows * spec.cols, "permute");
  OpBuilder &b = builder;
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value input = args[0], permutation = args[1], result = args[2];
  Value row, col;
  std::tie(row, col) = splitItem(b, loc, kernel.gid, spec.cols);
  Value source = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, permutation, ValueRange{col}));
  // The verifier guarantees a permutation; clamp anyway so that a corrupt
  // table cannot address outside the row.
  source =
      arith::MinUIOp::create(b, loc, source, indexConst(b, loc, spec.cols - 1));
  Value v = memref::LoadOp::create(b, loc, input, ValueRange{row, source});
  memref::StoreOp::create(b, loc, v, result, ValueRange{row, col});
  return KernelPlan{{kernel.launch}, {}};
}
