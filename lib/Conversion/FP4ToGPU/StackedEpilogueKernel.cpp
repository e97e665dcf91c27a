//===- StackedEpilogueKernel.cpp - the end of a fused correction chain ----===//
//
// Sums what the fused chain's W4A16 products left in their row groups,
// the chain's outer accumulator and, when the weight has outliers, their
// product with the activations, rounding once into the result.
//
// The weight-outlier product is where the per-term gather kernel spent
// its time (one thread per output, 32-byte sectors for 1- to 3-byte
// entries, every entry re-read by every m). Here one warp owns weight
// row n and every lane reads a run of consecutive blocks of it (4 blocks
// of top-2: one 16-byte load of bf16 values, one 8-byte load of indices;
// a warp's two loads cover 128 blocks, each entry read once), and for
// each entry the contiguous row of the transposed activation sum [K, M]
// the stacker wrote at the entry's column, so that one lane accumulates
// all M sums; a butterfly over the 32 lanes then sums each m and lane m
// stores output (m, n). (The form before, lanes split into M rows by
// 32 / M block slots with scalar entry loads, measured 13.0 us at M = 1
// and 42.9 us at M = 16 on 1 x 14336 x 4096 with top-2 of 32:
// docs/perf/gpu_bench_2026-12-02_prep.txt, breakdown.)
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "fp4/Numerics/IR/ArithOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp4;

static constexpr int64_t kWarpsPerCTA = 4;

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

/// Entries of one weight row a lane reads per load: 16 bytes of bf16
/// values (8 entries: 4 blocks of top-2), 8 bytes of i8 indices.
static constexpr int64_t kEntriesPerLoad = 8;

/// `count` elements of the contiguous [N, blocks, k] memref from (n, block,
/// 0) on, in loads of up to 16 bytes (a vector of one row n spans several
/// consecutive blocks: the memref has the identity layout).
static SmallVector<Value> loadEntries(OpBuilder &b, Location loc, Value memref,
                                      Value n, Value block, int64_t count) {
  Type elt = cast<MemRefType>(memref.getType()).getElementType();
  int64_t width = elt.getIntOrFloatBitWidth() / 8;
  int64_t pieceBytes = naturalAlignment(count * width);
  int64_t perPiece = pieceBytes / width;
  int64_t k = cast<MemRefType>(memref.getType()).getDimSize(2);
  SmallVector<Value> out;
  for (int64_t p = 0; p < count / perPiece; ++p) {
    // Piece p starts at entry p * perPiece of the run: block + that / k.
    int64_t first = p * perPiece;
    Value blk = first / k == 0
                    ? block
                    : arith::AddIOp::create(b, loc, block,
                                            indexConst(b, loc, first / k))
                          .getResult();
    Value v = vector::LoadOp::create(
        b, loc, VectorType::get({perPiece}, elt), memref,
        ValueRange{n, blk, indexConst(b, loc, first % k)},
        /*nontemporal=*/false, llvm::MaybeAlign(pieceBytes));
    for (int64_t i = 0; i < perPiece; ++i)
      out.push_back(vector::ExtractOp::create(b, loc, v, i));
  }
  return out;
}

/// The warp-per-row form (sparse weights): warp n owns weight row n; each
/// lane reads the entries of `run` consecutive blocks of the row with
/// vector loads (a warp's load covers 32 * run blocks, each entry read
/// once), multiplies each by the contiguous row of the transposed
/// activation sum [K, M] at its column, for every m, and a butterfly over
/// the 32 lanes sums each m; lane m stores output (m, n).
static KernelLaunch buildWarpPerRow(OpBuilder &b, Location loc,
                                    gpu::GPUModuleOp module, StringRef name,
                                    const StackedEpilogueKernelSpec &spec) {
  const CorrectionOperand &weights = spec.sparseWeights;
  const int64_t blocks = spec.k / weights.blockSize;
  // Runs divide the row's blocks, so a run is wholly in range or not.
  int64_t run =
      kEntriesPerLoad % weights.k == 0 ? kEntriesPerLoad / weights.k : 1;
  while (blocks % run != 0)
    run /= 2;
  const int64_t perIteration = 32 * run;
  const int64_t iterations = llvm::divideCeil(blocks, perIteration);
  const bool masked = iterations * perIteration != blocks;
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
  Value values = args[numProducts + 1], indices = args[numProducts + 2];
  ArithOps ops(b, loc);

  Value gid = emitGlobalThreadId(b, loc, launch.block[0]);
  Value warp = arith::DivUIOp::create(b, loc, gid, indexConst(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, gid, indexConst(b, loc, 32));
  // Every lane runs the loop and the butterfly; rows past N are clamped for
  // the loads and masked at the store.
  Value n = arith::MinUIOp::create(b, loc, warp, indexConst(b, loc, spec.n - 1));
  Value zero = ops.f32(0.0f);
  SmallVector<Value> init(spec.m, zero);
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, iterations),
      indexConst(b, loc, 1), init,
      [&](OpBuilder &lb, Location l, Value iteration, ValueRange iter) {
        ArithOps lops(lb, l);
        Value first = arith::MulIOp::create(
            lb, l,
            arith::AddIOp::create(
                lb, l,
                arith::MulIOp::create(lb, l, iteration, indexConst(lb, l, 32)),
                lane),
            indexConst(lb, l, run));
        Value inRange =
            masked ? arith::CmpIOp::create(lb, l, arith::CmpIPredicate::ult,
                                           first, indexConst(lb, l, blocks))
                         .getResult()
                   : Value();
        Value safe = masked ? arith::MinUIOp::create(
                                  lb, l, first,
                                  indexConst(lb, l, blocks - run))
                                  .getResult()
                            : first;
        // All loads of the run first (entries, then the activation rows),
        // then the sums, so that they are in flight together.
        SmallVector<Value> entryValues =
            loadEntries(lb, l, values, n, safe, run * weights.k);
        SmallVector<Value> entryIndices =
            loadEntries(lb, l, indices, n, safe, run * weights.k);
        SmallVector<SmallVector<Value>> activations;
        for (int64_t e = 0; e < run * weights.k; ++e) {
          Value block = arith::AddIOp::create(lb, l, safe,
                                              indexConst(lb, l, e / weights.k));
          Value index =
              arith::IndexCastOp::create(lb, l, lb.getIndexType(),
                                         entryIndices[e]);
          Value clamped =
              arith::MaxSIOp::create(lb, l, index, indexConst(lb, l, 0));
          clamped = arith::MinSIOp::create(
              lb, l, clamped, indexConst(lb, l, weights.blockSize - 1));
          Value col = arith::AddIOp::create(
              lb, l,
              arith::MulIOp::create(lb, l, block,
                                    indexConst(lb, l, weights.blockSize)),
              clamped);
          activations.push_back(loadFloatsAsF32(lb, l, summedT, col,
                                                indexConst(lb, l, 0), spec.m));
        }
        SmallVector<Value> acc(iter);
        for (int64_t e = 0; e < run * weights.k; ++e) {
          Value w = entryValues[e].getType().isF32()
                        ? entryValues[e]
                        : arith::ExtFOp::create(lb, l, lb.getF32Type(),
                                                entryValues[e])
                              .getResult();
          for (int64_t m = 0; m < spec.m; ++m) {
            Value next = lops.addf(acc[m], lops.mulf(activations[e][m], w));
            acc[m] = inRange ? lops.selectf(inRange, next, acc[m]) : next;
          }
        }
        scf::YieldOp::create(lb, l, acc);
      });
  SmallVector<Value> sums(loop.getResults());
  for (Value &sum : sums)
    for (int64_t offset = 1; offset < 32; offset *= 2)
      sum = ops.addf(sum, shuffleXor(b, loc, sum, offset));
  // Lane m takes sum m.
  Value lane32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), lane);
  Value mine = sums[0];
  for (int64_t m = 1; m < spec.m; ++m)
    mine = ops.selectf(ops.cmpi(numerics::IPred::EQ, lane32,
                                ops.i32(static_cast<int32_t>(m))),
                       sums[m], mine);
  Value store = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                            indexConst(b, loc, spec.m)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warp,
                            indexConst(b, loc, spec.n)));
  Value m = arith::MinUIOp::create(b, loc, lane, indexConst(b, loc, spec.m - 1));
  auto ifOp = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  EpilogueSum{spec, args}.store(b, loc, m, n, mine);
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
