//===- StackedEpilogueKernel.cpp - the end of a fused correction chain ----===//
//
// Sums what the fused chain's W4A16 products left in their row groups,
// the chain's outer accumulator and, when the weight has outliers, their
// product with the activations, rounding once into the result.
//
// The weight-outlier product is where the per-term gather kernel spent
// its time (one thread per output, 32-byte sectors for 1- to 3-byte
// entries, every entry re-read by every m). Here one warp owns a weight
// row n at a time, in one of two forms:
//  * staged (the [K, M] f32 activation sum the stacker wrote fits in
//    shared memory, e.g. K = 4096 at M = 1): the CTA copies the sum into
//    shared memory; every lane reads a run of consecutive blocks of the
//    row (top-2 of 32: 4 blocks in one 16-byte load of bf16 values and one
//    8-byte load of indices; a warp's two loads cover 128 blocks, each
//    entry read once), multiplies each entry by the staged row of the sum
//    at its column for all M, a butterfly over the 32 lanes sums each m
//    and lane m stores output (m, n). The entries' columns are random:
//    from L1 each such gather costs one wavefront per lane (measured: the
//    vector form reading the sum from global memory was 12.0 us at M = 1
//    and 50.1 us at M = 16 on 1 x 14336 x 4096, no better than the slot
//    form), from shared memory about one bank-conflict round;
//  * sliced (larger sums, e.g. M = 16: 256 KB, with at least 64 entries
//    per slice row, e.g. top-4 of 32 at M = 16): the CTA stages the sum a
//    K slice at a time (32 KB each, 16-byte pieces of a row XOR-swizzled
//    by column against bank conflicts), lanes take consecutive entries of
//    a row (coalesced), each warp keeps its rows' sums for every m in
//    registers across the slices (buildWarpPerRowSliced): at 16 x 14336
//    x 4096 the top-4 recipe 110.3 -> 94.2 us against the slot form
//    (docs/perf/gpu_variants_2026-12-04_sliced.txt, gpu_all_2026-12-04_
//    sliced.txt: equal at top-2, slower at top-1, which keep the slot form;
//    without the swizzle the sliced form took 63 us at top-2);
//  * slot (larger sums otherwise): the lanes split into `rowLanes` (M
//    rounded up to a power of two) rows by 32 / rowLanes block slots, so
//    one load instruction reads the entries of 32 / rowLanes consecutive
//    blocks and the activation each lane needs is one element of a
//    contiguous row of the sum; a butterfly over the slot lanes sums each
//    m; slot 0 stores it (13.0 us at M = 1, 42.9 us at M = 16,
//    docs/perf/gpu_bench_2026-12-02_prep1_breakdown.txt).
// The order differs from the chain's per-term order (f32, each product
// rounded the same way), which the check's 1e-5 relative tolerance allows
// (bench/gpu_check.py).
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "CorrectionOperandReader.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "fp4/Numerics/IR/ArithOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp4;


static constexpr int64_t kWarpsPerCTA = 4;
/// Loop steps (block slots per lane) unrolled per iteration (slot form).
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

/// The staged form: warps per CTA and weight rows per warp (448 CTAs of
/// 8 warps for N = 14336: one wave on 132 SMs), and the largest staged
/// activation sum (K * M f32; 16 KB at K = 4096, M = 1).
static constexpr int64_t kStagedWarps = 8, kRowsPerWarp = 4;
static constexpr int64_t kMaxStagedBytes = 32 * 1024;

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

/// The kernel shell of the staged and sliced forms: `warps` warps per CTA
/// covering `rowsPerCTA` weight rows each, a shared f32 stage of
/// `stagedFloats`, the builder inside the body, the arguments and the
/// thread and CTA index.
struct StagedShell {
  KernelLaunch launch;
  Value smem, summedT, values, indices;
  /// The kernel's arguments (the stage's attribution comes after them).
  SmallVector<Value> args;
  /// Thread and CTA index.
  Value tid, cta;

  StagedShell(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
              StringRef name, const StackedEpilogueKernelSpec &spec,
              int64_t warps, int64_t rowsPerCTA, int64_t stagedFloats,
              StringRef variant) {
    launch.block = {32 * warps, 1, 1};
    launch.grid = {static_cast<int64_t>(llvm::divideCeil(spec.n, rowsPerCTA)),
                   1, 1};
    launch.variant = variant.str();
    for (const KernelArg &arg : spec.args)
      launch.argNames.push_back(arg.name);
    launch.func =
        createKernelShell(b, loc, module, name, spec.args, launch.block);
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    smem = launch.func.addWorkgroupAttribution(
        MemRefType::get({stagedFloats}, b.getF32Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        loc);
    b.setInsertionPoint(launch.func.getBody().front().getTerminator());
    // Copies: the attribution appended a block argument.
    args.assign(launch.func.getArguments().begin(),
                launch.func.getArguments().end());
    const size_t numProducts = spec.productGroups.size();
    summedT = args[numProducts];
    values = args[numProducts + 1];
    indices = args[numProducts + 2];
    tid = gpu::ThreadIdOp::create(b, loc, b.getIndexType(),
                                  gpu::Dimension::x);
    cta = gpu::BlockIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  }
};

/// The staged form (sparse weights, K * M f32 of activation sum fit the
/// CTA's shared memory): the CTA first copies the transposed activation
/// sum [K, M] into shared memory, then each warp takes kRowsPerWarp weight
/// rows in turn. For row n every lane reads a run of consecutive blocks
/// (vector loads: a warp's load covers 32 * run blocks, each entry read
/// once), multiplies each entry by the staged row of the sum at its column
/// for every m, and a butterfly over the 32 lanes sums each m; lane m
/// stores output (m, n). The per-entry reads of the sum are random
/// columns: from shared memory they cost about one bank-conflict round
/// per instruction, from L1 one wavefront per lane.
static KernelLaunch buildWarpPerRowStaged(OpBuilder &b, Location loc,
                                          gpu::GPUModuleOp module,
                                          StringRef name,
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
  const int64_t rowsPerCTA = kStagedWarps * kRowsPerWarp;
  const int64_t staged = spec.k * spec.m;
  StagedShell shell(b, loc, module, name, spec, kStagedWarps, rowsPerCTA,
                    staged, "stacked_epilogue_warp_staged");
  KernelLaunch &launch = shell.launch;
  SmallVector<Value> &args = shell.args;
  Value smem = shell.smem, summedT = shell.summedT, values = shell.values,
        indices = shell.indices, tid = shell.tid, cta = shell.cta;
  ArithOps ops(b, loc);

  // The staging copy: 4 floats per thread and step (the sum is [K, M]
  // row-major, K * M a multiple of 4 or copied one by one).
  const int64_t vec = staged % 4 == 0 ? 4 : 1;
  const int64_t copySteps =
      llvm::divideCeil(staged / vec, launch.block[0]);
  for (int64_t s = 0; s < copySteps; ++s) {
    Value piece = arith::AddIOp::create(
        b, loc, tid, indexConst(b, loc, s * launch.block[0]));
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, piece,
                                     indexConst(b, loc, staged / vec));
    // Clamped too: every address stays in bounds for all threads.
    piece = arith::MinUIOp::create(b, loc, piece,
                                   indexConst(b, loc, staged / vec - 1));
    emitIf(b, loc, ok, [&](OpBuilder &nb, Location l) {
      Value flat = arith::MulIOp::create(nb, l, piece, indexConst(nb, l, vec));
      Value row = arith::DivUIOp::create(nb, l, flat, indexConst(nb, l, spec.m));
      Value col = arith::RemUIOp::create(nb, l, flat, indexConst(nb, l, spec.m));
      auto type = VectorType::get({vec}, nb.getF32Type());
      Value v = vector::LoadOp::create(nb, l, type, summedT,
                                       ValueRange{row, col},
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(4 * vec));
      vector::StoreOp::create(nb, l, v, smem, ValueRange{flat},
                              /*nontemporal=*/false, llvm::MaybeAlign(4 * vec));
    });
  }
  gpu::BarrierOp::create(b, loc);

  Value warpInCTA = arith::DivUIOp::create(b, loc, tid, indexConst(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, 32));
  Value firstRow = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, cta, indexConst(b, loc, rowsPerCTA)),
      arith::MulIOp::create(b, loc, warpInCTA, indexConst(b, loc, kRowsPerWarp)));
  Value lane32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), lane);
  scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, kRowsPerWarp),
      indexConst(b, loc, 1), ValueRange{},
      [&](OpBuilder &rb, Location rl, Value r, ValueRange) {
        ArithOps rops(rb, rl);
        Value warp = arith::AddIOp::create(rb, rl, firstRow, r);
        // Rows past N are clamped for the loads and masked at the store.
        Value n = arith::MinUIOp::create(rb, rl, warp,
                                         indexConst(rb, rl, spec.n - 1));
        SmallVector<Value> init(spec.m, rops.f32(0.0f));
        auto loop = scf::ForOp::create(
            rb, rl, indexConst(rb, rl, 0), indexConst(rb, rl, iterations),
            indexConst(rb, rl, 1), init,
            [&](OpBuilder &lb, Location l, Value iteration, ValueRange iter) {
              ArithOps lops(lb, l);
              Value first = arith::MulIOp::create(
                  lb, l,
                  arith::AddIOp::create(
                      lb, l,
                      arith::MulIOp::create(lb, l, iteration,
                                            indexConst(lb, l, 32)),
                      lane),
                  indexConst(lb, l, run));
              Value inRange =
                  masked
                      ? arith::CmpIOp::create(lb, l, arith::CmpIPredicate::ult,
                                              first, indexConst(lb, l, blocks))
                            .getResult()
                      : Value();
              Value safe = masked ? arith::MinUIOp::create(
                                        lb, l, first,
                                        indexConst(lb, l, blocks - run))
                                        .getResult()
                                  : first;
              // All loads of the run first (entries, then the staged sum
              // rows), then the sums, so that they are in flight together.
              SmallVector<Value> entryValues =
                  loadEntries(lb, l, values, n, safe, run * weights.k);
              SmallVector<Value> entryIndices =
                  loadEntries(lb, l, indices, n, safe, run * weights.k);
              SmallVector<SmallVector<Value>> activations;
              for (int64_t e = 0; e < run * weights.k; ++e) {
                Value block = arith::AddIOp::create(
                    lb, l, safe, indexConst(lb, l, e / weights.k));
                Value index = arith::IndexCastOp::create(
                    lb, l, lb.getIndexType(), entryIndices[e]);
                Value clamped =
                    arith::MaxSIOp::create(lb, l, index, indexConst(lb, l, 0));
                clamped = arith::MinSIOp::create(
                    lb, l, clamped, indexConst(lb, l, weights.blockSize - 1));
                Value col = arith::AddIOp::create(
                    lb, l,
                    arith::MulIOp::create(lb, l, block,
                                          indexConst(lb, l, weights.blockSize)),
                    clamped);
                Value at = arith::MulIOp::create(lb, l, col,
                                                 indexConst(lb, l, spec.m));
                SmallVector<Value> row;
                for (int64_t m = 0; m < spec.m; ++m) {
                  Value atM = m == 0 ? at
                                     : arith::AddIOp::create(
                                           lb, l, at, indexConst(lb, l, m))
                                           .getResult();
                  row.push_back(
                      memref::LoadOp::create(lb, l, smem, ValueRange{atM}));
                }
                activations.push_back(row);
              }
              SmallVector<Value> acc(iter);
              for (int64_t e = 0; e < run * weights.k; ++e) {
                Value w = entryValues[e].getType().isF32()
                              ? entryValues[e]
                              : arith::ExtFOp::create(lb, l, lb.getF32Type(),
                                                      entryValues[e])
                                    .getResult();
                for (int64_t m = 0; m < spec.m; ++m) {
                  Value next =
                      lops.addf(acc[m], lops.mulf(activations[e][m], w));
                  acc[m] = inRange ? lops.selectf(inRange, next, acc[m]) : next;
                }
              }
              scf::YieldOp::create(lb, l, acc);
            });
        SmallVector<Value> sums(loop.getResults());
        for (Value &sum : sums)
          for (int64_t offset = 1; offset < 32; offset *= 2)
            sum = rops.addf(sum, shuffleXor(rb, rl, sum, offset));
        // Lane m takes sum m.
        Value mine = sums[0];
        for (int64_t m = 1; m < spec.m; ++m)
          mine = rops.selectf(rops.cmpi(numerics::IPred::EQ, lane32,
                                        rops.i32(static_cast<int32_t>(m))),
                              sums[m], mine);
        Value store = arith::AndIOp::create(
            rb, rl,
            arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::ult, lane,
                                  indexConst(rb, rl, spec.m)),
            arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::ult, warp,
                                  indexConst(rb, rl, spec.n)));
        Value m = arith::MinUIOp::create(rb, rl, lane,
                                         indexConst(rb, rl, spec.m - 1));
        emitIf(rb, rl, store, [&](OpBuilder &sb, Location sl) {
          EpilogueSum{spec, ValueRange(args).take_front(spec.args.size())}
              .store(sb, sl, m, n, mine);
        });
        scf::YieldOp::create(rb, rl);
      });
  return launch;
}

/// The sliced form (sparse weights, the [K, M] activation sum larger than a
/// CTA's shared memory, e.g. M = 16 at K = 4096: 256 KB): the CTA walks K
/// in slices whose part of the sum fits (S x M f32 <= 32 KB, S whole
/// blocks), staging each slice in shared memory in turn; each warp keeps
/// the f32 sums of its kSlicedRowsPerWarp weight rows for every m in
/// registers across the slices. Within a slice the lanes of a warp take
/// consecutive entries of one weight row (coalesced scalar loads of values
/// and indices), each multiplying its entry by the staged row of the sum
/// at its column for every m (16-byte shared loads); after the last slice
/// a butterfly over the lanes sums each (row, m) and lane m stores. Every
/// entry is read once, every CTA reads the sum once (kSlicedWarps warps of
/// rows share it).
static constexpr int64_t kSlicedWarps = 16, kSlicedRowsPerWarp = 4;

/// Blocks of one staged slice (its [S, M] f32 part of the sum <= 32 KB).
static int64_t slicedBlocks(const StackedEpilogueKernelSpec &spec) {
  const int64_t bs = spec.sparseWeights.blockSize;
  return std::max<int64_t>(
      1, std::min<int64_t>(spec.k / bs, kMaxStagedBytes / (4 * spec.m * bs)));
}

/// The sliced form pays a barrier and a stage per slice; it wins where a
/// slice row gives every lane at least two entries (16 x 14336 x 4096:
/// top-4 recipe 110.3 -> 94.2 us), ties at one (top-2: epilogue 42.4 /
/// 42.1 us) and loses where lanes idle (top-1: 56.8 -> 71.5 us), which
/// keep the slot form.
static bool slicedFormFits(const StackedEpilogueKernelSpec &spec) {
  return slicedBlocks(spec) * spec.sparseWeights.k >= 64;
}

static KernelLaunch
buildWarpPerRowSliced(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                      StringRef name, const StackedEpilogueKernelSpec &spec) {
  const CorrectionOperand &weights = spec.sparseWeights;
  const int64_t bs = weights.blockSize, perBlock = weights.k;
  const int64_t blocks = spec.k / bs;
  // Slice: whole blocks whose sum rows fit the stage.
  const int64_t sliceBlocks = slicedBlocks(spec);
  const int64_t sliceCols = sliceBlocks * bs;
  const int64_t numSlices = llvm::divideCeil(blocks, sliceBlocks);
  const int64_t staged = sliceCols * spec.m;
  // Entries of one row in a slice, and the lane rounds over them.
  const int64_t sliceEntries = sliceBlocks * perBlock;
  const int64_t rounds = llvm::divideCeil(sliceEntries, 32);
  // Rows x M f32 sums per lane: at most 64 registers (M = 32: 2 rows).
  const int64_t rows =
      std::clamp<int64_t>(64 / spec.m, 1, kSlicedRowsPerWarp);
  const int64_t rowsPerCTA = kSlicedWarps * rows;
  // 16-byte pieces of a staged sum row (M floats) where M allows.
  const int64_t piece = naturalAlignment(spec.m * 4) / 4;

  StagedShell shell(b, loc, module, name, spec, kSlicedWarps, rowsPerCTA,
                    staged, "stacked_epilogue_warp_sliced");
  KernelLaunch &launch = shell.launch;
  SmallVector<Value> &args = shell.args;
  Value smem = shell.smem, summedT = shell.summedT, values = shell.values,
        indices = shell.indices, tid = shell.tid, cta = shell.cta;
  ArithOps ops(b, loc);
  auto idx = [&](OpBuilder &ib, Location l, int64_t v) {
    return indexConst(ib, l, v);
  };

  Value warpInCTA = arith::DivUIOp::create(b, loc, tid, idx(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(b, loc, 32));
  Value firstRow = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, cta, idx(b, loc, rowsPerCTA)),
      arith::MulIOp::create(b, loc, warpInCTA, idx(b, loc, rows)));
  // The warp's rows, clamped for the loads (masked at the store).
  SmallVector<Value> rowIds, clampedRows;
  for (int64_t r = 0; r < rows; ++r) {
    Value row = arith::AddIOp::create(b, loc, firstRow, idx(b, loc, r));
    rowIds.push_back(row);
    clampedRows.push_back(
        arith::MinUIOp::create(b, loc, row, idx(b, loc, spec.n - 1)));
  }
  // Flat views of the [N, blocks, k] entries and the [K, M] sum.
  Value flatValues = flattenMemref(b, loc, values);
  Value flatIndices = flattenMemref(b, loc, indices);
  Value flatSum = flattenMemref(b, loc, summedT);

  // Staged rows of M = 16 floats are 64 bytes: the 16-byte pieces of rows
  // at random columns would fall on 2 of the 8 bank groups (16-way
  // conflicts). XOR the piece index with bits 1-2 of the column so that
  // each piece spreads over all 8 (the same swizzle on store and load).
  const bool swizzled = spec.m == 16 && piece == 4;
  auto swizzle = [&](OpBuilder &sb, Location l, Value flat) -> Value {
    if (!swizzled)
      return flat;
    Value col = arith::DivUIOp::create(sb, l, flat, idx(sb, l, 16));
    Value mask = arith::MulIOp::create(
        sb, l,
        arith::AndIOp::create(
            sb, l, arith::ShRUIOp::create(sb, l, col, idx(sb, l, 1)),
            idx(sb, l, 3)),
        idx(sb, l, 4));
    return arith::XOrIOp::create(sb, l, flat, mask);
  };
  SmallVector<Value> init(rows * spec.m, ops.f32(0.0f));
  auto sliceLoop = scf::ForOp::create(
      b, loc, idx(b, loc, 0), idx(b, loc, numSlices), idx(b, loc, 1), init,
      [&](OpBuilder &sb, Location l, Value slice, ValueRange iter) {
        ArithOps sops(sb, l);
        Value firstBlock =
            arith::MulIOp::create(sb, l, slice, idx(sb, l, sliceBlocks));
        Value firstCol =
            arith::MulIOp::create(sb, l, firstBlock, idx(sb, l, bs));
        // The slice's sum rows [firstCol, firstCol + sliceCols) x M: one
        // contiguous run of the flat sum (clamped at K: the last slice).
        const int64_t vec = staged % 4 == 0 ? 4 : 1;
        const int64_t copySteps =
            llvm::divideCeil(staged / vec, launch.block[0]);
        Value base = arith::MulIOp::create(sb, l, firstCol, idx(sb, l, spec.m));
        Value total = idx(sb, l, spec.k * spec.m);
        gpu::BarrierOp::create(sb, l); // the previous slice is consumed
        for (int64_t c = 0; c < copySteps; ++c) {
          Value at = arith::MulIOp::create(
              sb, l,
              arith::AddIOp::create(sb, l, tid,
                                    idx(sb, l, c * launch.block[0])),
              idx(sb, l, vec));
          Value src = arith::AddIOp::create(sb, l, base, at);
          Value ok = arith::AndIOp::create(
              sb, l,
              arith::CmpIOp::create(sb, l, arith::CmpIPredicate::ult, at,
                                    idx(sb, l, staged)),
              arith::CmpIOp::create(sb, l, arith::CmpIPredicate::ult, src,
                                    total));
          emitIf(sb, l, ok, [&](OpBuilder &nb, Location nl) {
            auto type = VectorType::get({vec}, nb.getF32Type());
            Value v = vector::LoadOp::create(nb, nl, type, flatSum,
                                             ValueRange{src},
                                             /*nontemporal=*/false,
                                             llvm::MaybeAlign(4 * vec));
            vector::StoreOp::create(nb, nl, v, smem,
                                    ValueRange{swizzle(nb, nl, at)},
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(4 * vec));
          });
        }
        gpu::BarrierOp::create(sb, l);

        SmallVector<Value> acc(iter);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t round = 0; round < rounds; ++round) {
            // Entry e of the row's slice: block firstBlock + e / k.
            Value e = arith::AddIOp::create(sb, l, lane,
                                            idx(sb, l, round * 32));
            Value block = arith::AddIOp::create(
                sb, l, firstBlock,
                arith::DivUIOp::create(sb, l, e, idx(sb, l, perBlock)));
            Value inRange = arith::CmpIOp::create(
                sb, l, arith::CmpIPredicate::ult, block, idx(sb, l, blocks));
            if ((round + 1) * 32 > sliceEntries)
              inRange = arith::AndIOp::create(
                  sb, l, inRange,
                  arith::CmpIOp::create(sb, l, arith::CmpIPredicate::ult, e,
                                        idx(sb, l, sliceEntries)));
            Value flat = arith::AddIOp::create(
                sb, l,
                arith::MulIOp::create(sb, l, clampedRows[r],
                                      idx(sb, l, blocks * perBlock)),
                arith::AddIOp::create(
                    sb, l,
                    arith::MulIOp::create(sb, l, firstBlock,
                                          idx(sb, l, perBlock)),
                    e));
            // Clamped into the row's entries (a masked lane's address).
            flat = arith::MinUIOp::create(
                sb, l, flat,
                idx(sb, l, spec.n * blocks * perBlock - 1));
            Value w = memref::LoadOp::create(sb, l, flatValues,
                                             ValueRange{flat});
            if (!w.getType().isF32())
              w = arith::ExtFOp::create(sb, l, sb.getF32Type(), w);
            w = sops.selectf(inRange, w, sops.f32(0.0f));
            // An index is < the block size by the op's contract; clamped,
            // a corrupt one stays inside the stage.
            Value index = arith::MinUIOp::create(
                sb, l,
                arith::IndexCastUIOp::create(
                    sb, l, sb.getIndexType(),
                    memref::LoadOp::create(sb, l, flatIndices,
                                           ValueRange{flat})),
                idx(sb, l, bs - 1));
            Value local = arith::AddIOp::create(
                sb, l,
                arith::MulIOp::create(
                    sb, l,
                    arith::MinUIOp::create(
                        sb, l,
                        arith::DivUIOp::create(sb, l, e,
                                               idx(sb, l, perBlock)),
                        idx(sb, l, sliceBlocks - 1)),
                    idx(sb, l, bs)),
                index);
            Value at = arith::MulIOp::create(sb, l, local, idx(sb, l, spec.m));
            for (int64_t m0 = 0; m0 < spec.m; m0 += piece) {
              auto type = VectorType::get({piece}, sb.getF32Type());
              Value v = vector::LoadOp::create(
                  sb, l, type, smem,
                  ValueRange{swizzle(
                      sb, l,
                      arith::AddIOp::create(sb, l, at, idx(sb, l, m0)))},
                  /*nontemporal=*/false, llvm::MaybeAlign(4 * piece));
              for (int64_t i = 0; i < piece; ++i) {
                Value x = vector::ExtractOp::create(sb, l, v, i);
                Value &target = acc[r * spec.m + m0 + i];
                target = sops.addf(target, sops.mulf(x, w));
              }
            }
          }
        scf::YieldOp::create(sb, l, acc);
      });

  SmallVector<Value> sums(sliceLoop.getResults());
  Value lane32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), lane);
  Value m = arith::MinUIOp::create(b, loc, lane, idx(b, loc, spec.m - 1));
  for (int64_t r = 0; r < rows; ++r) {
    Value mine;
    for (int64_t mi = 0; mi < spec.m; ++mi) {
      Value sum = sums[r * spec.m + mi];
      for (int64_t offset = 1; offset < 32; offset *= 2)
        sum = ops.addf(sum, shuffleXor(b, loc, sum, offset));
      mine = mi == 0 ? sum
                     : ops.selectf(ops.cmpi(numerics::IPred::EQ, lane32,
                                            ops.i32(static_cast<int32_t>(mi))),
                                   sum, mine);
    }
    Value store = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                              idx(b, loc, spec.m)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rowIds[r],
                              idx(b, loc, spec.n)));
    Value n = clampedRows[r];
    emitIf(b, loc, store, [&](OpBuilder &nb, Location nl) {
      EpilogueSum{spec, ValueRange(args).take_front(spec.args.size())}
          .store(nb, nl, m, n, mine);
    });
  }
  return launch;
}

/// The slot form (sparse weights, the activation sum too large to stage):
/// warp n owns weight row n, its lanes split into rowLanes rows by
/// 32 / rowLanes block slots.
static KernelLaunch buildWarpPerRowSlots(OpBuilder &b, Location loc,
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
  if (spec.sparseWeights.isSparse()) {
    if (spec.k * spec.m * 4 <= kMaxStagedBytes)
      return KernelPlan{
          {buildWarpPerRowStaged(builder, loc, module, name, spec)}, {}};
    if (slicedFormFits(spec))
      return KernelPlan{
          {buildWarpPerRowSliced(builder, loc, module, name, spec)}, {}};
    return KernelPlan{
        {buildWarpPerRowSlots(builder, loc, module, name, spec)}, {}};
  }
  ThreadPerItem kernel =
      createThreadPerItemKernel(builder, loc, module, name, spec.args,
                                spec.m * spec.n, "stacked_epilogue");
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  Value m, n;
  std::tie(m, n) = splitItem(builder, loc, kernel.gid, spec.n);
  EpilogueSum{spec, args}.store(builder, loc, m, n, Value());
  return KernelPlan{{kernel.launch}, {}};
}
