//===- BlockTopKKernel.cpp - fp4.split_outliers / fp4.residual on the GPU -===//
//
// One thread per block of B elements along the last axis. The element of
// rank j (Outliers.h: the one with exactly j predecessors under
// outlierPrecedes) is found by one pass over the block per slot: it is the
// first, under the selection order, of the elements that come after the
// element of rank j - 1. The order is total, so this gives the reference's
// slots exactly (its k passes of argmax), with k * B comparisons and no
// per-element state. fp4.split_outliers then writes the rest (selected
// elements, i.e. those not after the element of rank k - 1, become +0.0);
// fp4.residual selects on r = x - deq(Q(x)) (residualValue, the scheme's
// dequantization through ElementAccess) instead of x.
//
// Loads are scalar and strided across threads (thread t reads block t);
// the blocks a warp touches are contiguous, so L1 serves the k passes.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementAccess.h"
#include "ElementwiseKernel.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Numerics/Outliers.h"
#include "fp4/Numerics/Residual.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {
/// The element a pass has chosen so far: |x| bits, in-block index (i32),
/// exact f32 value.
struct Candidate {
  Value bits, index, value;
};
} // namespace

FailureOr<KernelPlan> mlir::fp4::buildBlockTopKKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const BlockTopKKernelSpec &spec, std::string &reason) {
  if (spec.quantized &&
      !isGPUReadableQuantizedType(spec.quantized, reason))
    return failure();
  if (spec.cols % spec.blockSize != 0 || spec.k < 1 ||
      spec.k > spec.blockSize || spec.blockSize > numerics::kMaxSparseBlock) {
    reason = "block top-k needs 1 <= k <= block <= 128 dividing the last axis";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  const int64_t blocksPerRow = spec.cols / spec.blockSize;
  const bool residual = static_cast<bool>(spec.quantized);
  ThreadPerItem kernel = createThreadPerItemKernel(
      builder, loc, module, name, spec.args, spec.rows * blocksPerRow,
      residual ? "residual_topk" : "split_outliers");
  OpBuilder &b = builder;
  ArithOps ops(b, loc);
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value input = args.front();
  int64_t numQuantized =
      residual ? static_cast<int64_t>(spec.quantized.getComponentTypes().size())
               : 0;
  ValueRange quantized = args.slice(1, numQuantized);
  Value rest = residual ? Value() : args[1];
  Value values = args[args.size() - 2], indices = args.back();

  Value row, block;
  std::tie(row, block) = splitItem(b, loc, kernel.gid, blocksPerRow);
  Value base =
      arith::MulIOp::create(b, loc, block, indexConst(b, loc, spec.blockSize));
  // The selection key of in-block element i: x, or its residual.
  auto key = [&](OpBuilder &lb, Location l, Value i) -> Value {
    ArithOps lops(lb, l);
    Value col = arith::AddIOp::create(lb, l, base, i);
    Value x = loadAsF32(lb, l, input, {row, col});
    if (!residual)
      return x;
    Value deq =
        loadDequantizedElement(lb, l, spec.quantized, quantized, row, col);
    return numerics::residualValue(lops, x, deq);
  };
  auto magnitudeBits = [](ArithOps &o, Value v) {
    return o.andi(o.bitcastToI32(v), o.i32(0x7FFFFFFF));
  };

  SmallVector<Candidate> slots;
  for (int64_t j = 0; j < spec.k; ++j) {
    Value falseV = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    SmallVector<Value> init = {falseV, ops.i32(0), ops.i32(0), ops.f32(0.0f)};
    auto loop = scf::ForOp::create(
        b, loc, indexConst(b, loc, 0), indexConst(b, loc, spec.blockSize),
        indexConst(b, loc, 1), init,
        [&](OpBuilder &lb, Location l, Value i, ValueRange iter) {
          ArithOps lops(lb, l);
          Value v = key(lb, l, i);
          Value bits = magnitudeBits(lops, v);
          Value index = arith::IndexCastUIOp::create(lb, l, lb.getI32Type(), i);
          Value eligible =
              j == 0 ? arith::ConstantIntOp::create(lb, l, lb.getI1Type(), 1)
                           .getResult()
                     : numerics::outlierPrecedes(lops, slots.back().bits,
                                                 slots.back().index, bits,
                                                 index);
          Value better = lops.orb(
              lops.notb(iter[0]),
              numerics::outlierPrecedes(lops, bits, index, iter[1], iter[2]));
          Value take = lops.andb(eligible, better);
          scf::YieldOp::create(
              lb, l,
              ValueRange{lops.orb(iter[0], take),
                         lops.selecti(take, bits, iter[1]),
                         lops.selecti(take, index, iter[2]),
                         lops.selectf(take, v, iter[3])});
        });
    slots.push_back(
        {loop.getResult(1), loop.getResult(2), loop.getResult(3)});
  }
  for (auto [j, slot] : llvm::enumerate(slots)) {
    Value at[] = {row, block, indexConst(b, loc, j)};
    memref::StoreOp::create(
        b, loc, roundFromF32(b, loc, slot.value, spec.valuesElementType),
        values, at);
    memref::StoreOp::create(
        b, loc, arith::TruncIOp::create(b, loc, b.getI8Type(), slot.index),
        indices, at);
  }
  if (residual)
    return KernelPlan{{kernel.launch}, {}};

  // rest: +0.0 where the element does not come after the rank k-1 one.
  const Candidate &last = slots.back();
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, spec.blockSize),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &lb, Location l, Value i, ValueRange) {
        ArithOps lops(lb, l);
        Value col = arith::AddIOp::create(lb, l, base, i);
        Value x = memref::LoadOp::create(lb, l, input, ValueRange{row, col});
        Value bits = magnitudeBits(
            lops, x.getType().isF32()
                      ? x
                      : arith::ExtFOp::create(lb, l, lb.getF32Type(), x)
                            .getResult());
        Value index = arith::IndexCastUIOp::create(lb, l, lb.getI32Type(), i);
        Value after = numerics::outlierPrecedes(lops, last.bits, last.index,
                                                bits, index);
        Value zero = arith::ConstantOp::create(
            lb, l, lb.getFloatAttr(spec.inputElementType, 0.0));
        memref::StoreOp::create(
            lb, l, arith::SelectOp::create(lb, l, after, x, zero), rest,
            ValueRange{row, col});
        scf::YieldOp::create(lb, l);
      });
  return KernelPlan{{kernel.launch}, {}};
}
