//===- StackedEpilogueKernel.cpp - the end of a fused correction chain ----===//
//
// Sums what the fused chain's W4A16 products left in their row groups,
// the chain's outer accumulator and, when the weight has outliers, their
// product with the activations, rounding once into the result.
//
// The weight-outlier product is where the per-term gather kernel spent
// its time (one thread per output, 32-byte sectors for 1- to 3-byte
// entries, every entry re-read by every m). Here one warp owns weight
// row n: its lanes split into `rowLanes` (M rounded up to a power of two)
// rows by 32 / rowLanes block slots, so one load instruction reads the
// entries of 32 / rowLanes consecutive blocks (coalesced, each read once
// per row n) and the activation each lane needs is one element of a
// contiguous row of the transposed activation sum [K, M] that the stacker
// wrote. A butterfly over the slot lanes sums each m; slot 0 stores it.
// The order differs from the chain's per-term order (f32, each product
// rounded the same way), which the check's 1e-5 relative tolerance allows
// (bench/gpu_check.py).
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "CorrectionOperandReader.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp4;

static constexpr int64_t kWarpsPerCTA = 4;
/// Loop steps (block slots per lane) unrolled per iteration.
static constexpr int64_t kUnrollSteps = 8;

namespace {

/// The stored sum for output (m, n): acc + every product's groups + extra.
struct EpilogueSum {
  const StackedEpilogueKernelSpec &spec;
  ValueRange args;

  void store(OpBuilder &b, Location loc, Value m, Value n, Value extra) const {
    bool hasAcc = static_cast<bool>(spec.accElementType);
    Value sum = hasAcc ? loadAsF32(b, loc, args[args.size() - 2], {m, n})
                       : Value();
    for (auto [p, groups] : llvm::enumerate(spec.productGroups))
      for (int64_t j = 0; j < groups; ++j) {
        Value row =
            arith::AddIOp::create(b, loc, m, indexConst(b, loc, j * spec.m));
        Value part = loadAsF32(b, loc, args[p], {row, n});
        sum = sum ? arith::AddFOp::create(b, loc, sum, part).getResult() : part;
      }
    if (extra)
      sum = arith::AddFOp::create(b, loc, sum, extra);
    memref::StoreOp::create(b, loc,
                            roundFromF32(b, loc, sum, spec.resultElementType),
                            args.back(), ValueRange{m, n});
  }
};

} // namespace

/// The warp-per-row form (sparse weights).
static KernelLaunch buildWarpPerRow(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module, StringRef name,
                                    const StackedEpilogueKernelSpec &spec) {
  const CorrectionOperand &weights = spec.sparseWeights;
  const int64_t rowLanes = static_cast<int64_t>(llvm::PowerOf2Ceil(spec.m));
  const int64_t slots = 32 / rowLanes;
  const int64_t blocks = spec.k / weights.blockSize;
  const int64_t steps =
      static_cast<int64_t>(llvm::divideCeil(blocks, slots));
  KernelLaunch launch;
  launch.block = {32 * kWarpsPerCTA, 1, 1};
  launch.grid = {static_cast<int64_t>(llvm::divideCeil(spec.n, kWarpsPerCTA)),
                 1, 1};
  launch.variant = "stacked_epilogue_warp";
  for (const KernelArg &arg : spec.args)
    launch.argNames.push_back(arg.name);
  launch.func = createKernelShell(b, loc, module, name, spec.args, launch.block);
  b.setInsertionPoint(launch.func.getBody().front().getTerminator());
  ValueRange args = launch.func.getBody().front().getArguments();
  const size_t numProducts = spec.productGroups.size();
  Value summedT = args[numProducts];
  CorrectionOperandReader reader{weights, args.slice(numProducts + 1, 2)};

  Value gid = emitGlobalThreadId(b, loc, launch.block[0]);
  Value warp = arith::DivUIOp::create(b, loc, gid, indexConst(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, gid, indexConst(b, loc, 32));
  // Every lane runs the loop and the butterfly; rows past N and M are
  // clamped for the loads and masked at the store.
  Value n = arith::MinUIOp::create(b, loc, warp, indexConst(b, loc, spec.n - 1));
  Value mLane = arith::RemUIOp::create(b, loc, lane, indexConst(b, loc, rowLanes));
  Value m = arith::MinUIOp::create(b, loc, mLane, indexConst(b, loc, spec.m - 1));
  Value slot = arith::DivUIOp::create(b, loc, lane, indexConst(b, loc, rowLanes));
  Value zero =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)).getResult();
  // Each iteration covers `unroll` steps: their entry loads are issued
  // first, then the gathers, then the sums, so a warp has all its loads in
  // flight at once (one step at a time was load-latency bound).
  const int64_t unroll = std::min<int64_t>(steps, kUnrollSteps);
  const int64_t iterations = llvm::divideCeil(steps, unroll);
  const bool masked = iterations * unroll * slots != blocks;
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, iterations),
      indexConst(b, loc, 1), ValueRange{zero},
      [&](OpBuilder &lb, Location l, Value iteration, ValueRange iter) {
        SmallVector<Value> values, columns, inRange;
        for (int64_t u = 0; u < unroll; ++u) {
          Value step = arith::AddIOp::create(
              lb, l,
              arith::MulIOp::create(lb, l, iteration,
                                    indexConst(lb, l, unroll)),
              indexConst(lb, l, u));
          Value block = arith::AddIOp::create(
              lb, l,
              arith::MulIOp::create(lb, l, step, indexConst(lb, l, slots)),
              slot);
          Value safeBlock = arith::MinUIOp::create(
              lb, l, block, indexConst(lb, l, blocks - 1));
          for (int64_t s = 0; s < weights.k; ++s) {
            auto [value, index] =
                reader.entry(lb, l, n, safeBlock, indexConst(lb, l, s));
            values.push_back(value);
            columns.push_back(reader.column(lb, l, safeBlock, index));
            inRange.push_back(
                masked ? arith::CmpIOp::create(lb, l, arith::CmpIPredicate::ult,
                                               block,
                                               indexConst(lb, l, blocks))
                             .getResult()
                       : Value());
          }
        }
        SmallVector<Value> activations;
        for (Value col : columns)
          activations.push_back(loadAsF32(lb, l, summedT, {col, m}));
        Value acc = iter[0];
        for (auto [x, value, ok] : llvm::zip(activations, values, inRange)) {
          Value next = arith::AddFOp::create(
              lb, l, acc, arith::MulFOp::create(lb, l, x, value));
          acc = ok ? arith::SelectOp::create(lb, l, ok, next, acc).getResult()
                   : next;
        }
        scf::YieldOp::create(lb, l, ValueRange{acc});
      });
  Value sum = loop.getResult(0);
  for (int64_t offset = rowLanes; offset < 32; offset *= 2)
    sum = arith::AddFOp::create(b, loc, sum, shuffleXor(b, loc, sum, offset));
  Value store = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot,
                            indexConst(b, loc, 0)),
      arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, mLane,
                                indexConst(b, loc, spec.m)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warp,
                                indexConst(b, loc, spec.n))));
  auto ifOp = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  EpilogueSum{spec, args}.store(b, loc, m, n, sum);
  return launch;
}

FailureOr<KernelPlan> mlir::fp4::buildStackedEpilogueKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const StackedEpilogueKernelSpec &spec, std::string &reason) {
  if (spec.productGroups.empty()) {
    reason = "the stacked epilogue needs at least one product";
    return failure();
  }
  if (spec.sparseWeights.isSparse() &&
      (spec.m > 32 || spec.k % spec.sparseWeights.blockSize != 0)) {
    reason = "the weight-outlier epilogue takes M <= 32 activation rows "
             "(one warp) and whole blocks";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  if (spec.sparseWeights.isSparse())
    return KernelPlan{{buildWarpPerRow(builder, loc, module, name, spec)}, {}};
  ThreadPerItem kernel =
      createThreadPerItemKernel(builder, loc, module, name, spec.args,
                                spec.m * spec.n, "stacked_epilogue");
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value m, n;
  std::tie(m, n) = splitItem(builder, loc, kernel.gid, spec.n);
  EpilogueSum{spec, args}.store(builder, loc, m, n, Value());
  return KernelPlan{{kernel.launch}, {}};
}
