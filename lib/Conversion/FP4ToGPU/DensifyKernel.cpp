//===- DensifyKernel.cpp - block-sparse pair to a dense tensor ------------===//
//
// One thread per block: zeros, then each slot's value at its (clamped)
// column. It lets a sparse correction operand ride the tensor-core W4A16
// matmul families instead of the gather kernel (CorrectionToGPU.cpp says
// when); bf16 values are stored exactly. The accumulate kernel then adds
// that product to the chain's accumulator (one f32 add, one rounding),
// transposing it when the sparse side was the weight.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

FailureOr<KernelPlan> mlir::fp4::buildDensifyKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const DensifyKernelSpec &spec, std::string &reason) {
  if (spec.valuesElementType != spec.resultElementType) {
    reason = "densify stores the values exactly (same element type)";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  const int64_t blocksPerRow = spec.cols / spec.blockSize;
  ThreadPerItem kernel = createThreadPerItemKernel(
      builder, loc, module, name, spec.args, spec.rows * blocksPerRow,
      "densify");
  OpBuilder &b = builder;
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value row, block;
  std::tie(row, block) = splitItem(b, loc, kernel.gid, blocksPerRow);
  Value base =
      arith::MulIOp::create(b, loc, block, indexConst(b, loc, spec.blockSize));
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(spec.resultElementType, 0.0));
  for (int64_t i = 0; i < spec.blockSize; ++i)
    memref::StoreOp::create(
        b, loc, zero, args[2],
        ValueRange{row, arith::AddIOp::create(b, loc, base,
                                              indexConst(b, loc, i))});
  for (int64_t s = 0; s < spec.k; ++s) {
    Value at[] = {row, block, indexConst(b, loc, s)};
    Value value = memref::LoadOp::create(b, loc, args[0], at);
    Value index = arith::IndexCastOp::create(
        b, loc, b.getIndexType(), memref::LoadOp::create(b, loc, args[1], at));
    index = arith::MaxSIOp::create(b, loc, index, indexConst(b, loc, 0));
    index = arith::MinSIOp::create(b, loc, index,
                                   indexConst(b, loc, spec.blockSize - 1));
    memref::StoreOp::create(b, loc, value, args[2],
                            ValueRange{row, arith::AddIOp::create(b, loc, base,
                                                                  index)});
  }
  return KernelPlan{{kernel.launch}, {}};
}

FailureOr<KernelPlan> mlir::fp4::buildAccumulateKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const AccumulateKernelSpec &spec, std::string &reason) {
  OpBuilder::InsertionGuard guard(builder);
  ThreadPerItem kernel =
      createThreadPerItemKernel(builder, loc, module, name, spec.args,
                                spec.rows * spec.cols, "accumulate");
  OpBuilder &b = builder;
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value row, col;
  std::tie(row, col) = splitItem(b, loc, kernel.gid, spec.cols);
  bool hasAcc = static_cast<bool>(spec.accElementType);
  Value product = loadAsF32(b, loc, args[hasAcc ? 1 : 0],
                            spec.transposedProduct ? ValueRange{col, row}
                                                   : ValueRange{row, col});
  Value sum = hasAcc ? arith::AddFOp::create(
                           b, loc, loadAsF32(b, loc, args[0], {row, col}),
                           product)
                           .getResult()
                     : product;
  memref::StoreOp::create(b, loc,
                          roundFromF32(b, loc, sum, spec.resultElementType),
                          args.back(), ValueRange{row, col});
  return KernelPlan{{kernel.launch}, {}};
}
