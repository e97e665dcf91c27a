//===- SplitChannelsKernel.cpp - fp4.split_channels on the GPU ------------===//
//
// One thread per element (r, c) of the input: it writes rest[r, c] (+0.0
// at the split channels, x elsewhere, exact in x's type) and, when c is
// channel j of the list, gathered[r, j] (rounded to gathered's type). The
// channel list is a compile-time constant, so membership is a chain of
// compares that ptxas turns into predicates; lists longer than
// kMaxChannels stay on the host (calibration keeps a handful of channels).
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

static constexpr int64_t kMaxChannels = 256;

FailureOr<KernelPlan> mlir::fp4::buildSplitChannelsKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const SplitChannelsKernelSpec &spec, std::string &reason) {
  if (spec.channels.empty() ||
      static_cast<int64_t>(spec.channels.size()) > kMaxChannels) {
    reason = "the channel-split kernel takes 1 to 256 channels";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  ThreadPerItem kernel =
      createThreadPerItemKernel(builder, loc, module, name, spec.args,
                                spec.rows * spec.cols, "split_channels");
  OpBuilder &b = builder;
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value input = args[0], rest = args[1], gathered = args[2];
  Value row, col;
  std::tie(row, col) = splitItem(b, loc, kernel.gid, spec.cols);
  Value isChannel = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  Value slot = indexConst(b, loc, 0);
  for (auto [j, c] : llvm::enumerate(spec.channels)) {
    Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, col,
                                      indexConst(b, loc, c));
    isChannel = arith::OrIOp::create(b, loc, isChannel, hit);
    slot = arith::SelectOp::create(b, loc, hit, indexConst(b, loc, j), slot);
  }
  Value x = memref::LoadOp::create(b, loc, input, ValueRange{row, col});
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(spec.inputElementType, 0.0));
  memref::StoreOp::create(b, loc,
                          arith::SelectOp::create(b, loc, isChannel, zero, x),
                          rest, ValueRange{row, col});
  emitIf(b, loc, isChannel, [&](OpBuilder &ib, Location l) {
    Value xf = x.getType().isF32()
                   ? x
                   : arith::ExtFOp::create(ib, l, ib.getF32Type(), x).getResult();
    memref::StoreOp::create(ib, l,
                            roundFromF32(ib, l, xf, spec.gatheredElementType),
                            gathered, ValueRange{row, slot});
  });
  return KernelPlan{{kernel.launch}, {}};
}
