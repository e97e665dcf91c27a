//===- StackActivationsKernel.cpp - a fused chain's activation rows -------===//
//
// The first kernel of a fused correction chain (FusedCorrectionChain.h):
// every activation part becomes bf16 rows that one W4A16 product then
// multiplies by the quantized weight, so the weight streams once for all
// terms. One thread per element (row, col) computes each group's value
// in f32 (the dense part through CorrectionOperandReader, i.e. the
// scheme's dequantizer, plus the sparse entries stored at col) and stores
// it rounded to bf16; the chain analysis only groups parts whose sum is
// exact in bf16, so the rounding is the identity. The optional transposed
// f32 sum over the groups feeds the weight-outlier epilogue, whose lanes
// then read one contiguous row of it per entry.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "CorrectionOperandReader.h"
#include "ElementAccess.h"
#include "ElementwiseKernel.h"
#include "TransposedSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

/// The f32 value of (row, col) of `sparse` (0 where it stores nothing):
/// every slot whose clamped column is col contributes, as in the product.
static Value sparseElement(OpBuilder &b, Location loc,
                           const CorrectionOperandReader &sparse, Value row,
                           Value col, Value init) {
  Value blockSize = indexConst(b, loc, sparse.spec.blockSize);
  Value block = arith::DivUIOp::create(b, loc, col, blockSize);
  Value sum = init;
  for (int64_t s = 0; s < sparse.spec.k; ++s) {
    auto [value, index] =
        sparse.entry(b, loc, row, block, indexConst(b, loc, s));
    Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      sparse.column(b, loc, block, index), col);
    Value next = arith::AddFOp::create(b, loc, sum, value);
    sum = arith::SelectOp::create(b, loc, hit, next, sum);
  }
  return sum;
}

FailureOr<KernelPlan> mlir::fp4::buildStackActivationsKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const StackActivationsKernelSpec &spec, std::string &reason) {
  int64_t stacked = 0;
  for (int64_t g : spec.outputGroups)
    stacked += g;
  if (spec.groups.empty() ||
      stacked != static_cast<int64_t>(spec.groups.size())) {
    reason = "the stacked outputs must hold every activation group once";
    return failure();
  }
  for (const StackedActivationGroup &group : spec.groups)
    if (group.dense.quantized &&
        !isGPUReadableQuantizedType(group.dense.quantized, reason))
      return failure();
  OpBuilder::InsertionGuard guard(builder);
  ThreadPerItem kernel = createThreadPerItemKernel(
      builder, loc, module, name, spec.args, spec.rows * spec.cols,
      "stack_activations");
  OpBuilder &b = builder;
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value row, col;
  std::tie(row, col) = splitItem(b, loc, kernel.gid, spec.cols);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)).getResult();
  Value total = zero;
  size_t next = 0, output = 0;
  int64_t slot = 0;
  ValueRange outputs = args.slice(args.size() - spec.outputGroups.size() -
                                      (spec.transposedSum ? 1 : 0),
                                  spec.outputGroups.size());
  for (const StackedActivationGroup &group : spec.groups) {
    Value value = zero;
    bool hasDense = group.dense.quantized || group.dense.floatType;
    if (hasDense) {
      CorrectionOperandReader dense{group.dense,
                                    args.slice(next, group.dense.numArgs())};
      value = dense.dense(b, loc, row, col);
      next += group.dense.numArgs();
    }
    if (group.sparse.isSparse()) {
      CorrectionOperandReader sparse{group.sparse, args.slice(next, 2)};
      value = sparseElement(b, loc, sparse, row, col, value);
      next += 2;
    }
    Value outRow = arith::AddIOp::create(
        b, loc, row, indexConst(b, loc, slot * spec.rows));
    memref::StoreOp::create(b, loc,
                            roundFromF32(b, loc, value, b.getBF16Type()),
                            outputs[output], ValueRange{outRow, col});
    if (spec.transposedSum)
      total = arith::AddFOp::create(b, loc, total, value);
    if (++slot == spec.outputGroups[output]) {
      slot = 0;
      ++output;
    }
  }
  if (spec.transposedSum)
    memref::StoreOp::create(
        b, loc, total, args.back(),
        transposedSumIndices(b, loc, col, row, spec.sumBankColumns));
  return KernelPlan{{kernel.launch}, {}};
}
