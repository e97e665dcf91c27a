//===- ActivationPrepKernel.cpp - a fused chain's activation side from x --===//
//
// The activation side of a fused correction chain (FusedActivationPrep.h)
// in one kernel: x -> [rotate] -> [split_outliers] -> quantize ->
// [residual] -> the stacked bf16 row groups (and the transposed f32 sum
// of the weight-outlier epilogue), instead of one launch per op with one
// thread per 32-element block (docs/Performance.md: 16.9 us at M = 1 for
// the standalone rotate and split kernels alone).
//
// Thread mapping: the quantize kernel's (QuantizeChunk.h). Thread g owns
// chunk g, E consecutive elements (E = 8: a 32-element block is 4 lanes);
// a group larger than E (rotation, outlier block, scale block) spans
// aligned consecutive lanes and crosses them by xor shuffles.
//
// Why the bytes are the per-op kernels' (and so the CPU lowering's):
//  * rotation: QuantizeEmitter::loadChunk, the quantize kernel's fused
//    rotation (Hadamard.h's butterflies in the reference's order), rounded
//    to the rotation's result type;
//  * top-k (split and residual): the element of rank j of a block is the
//    first, under outlierPrecedes, of those after the element of rank
//    j - 1 (BlockTopKKernel.cpp). The order is total and every (|x| bits,
//    index) pair of a block is distinct, so the minimum over the eligible
//    elements is one element whatever the fold order: in-thread folds,
//    then xor shuffles over the block's lanes, give the reference's slots;
//  * codes and scales: the scheme's block algorithm (buildGPUQuantizeChunk)
//    on the rest, as the quantize kernel;
//  * dequantized values: after a barrier (the scale byte of a block is
//    stored by its first lane), the scheme's buildGPUDequantizeChunk reads
//    the codes and scales back, the dequantizer every other kernel uses;
//  * residual r = residualValue(rest, deq), selected as above;
//  * the stacked rows: the stacker's f32 sums (dense part, then each
//    sparse slot whose column is the element's, in slot order, starting
//    from +0 for a sparse-only group), rounded to bf16 (exact: the chain
//    analysis only groups parts whose sum is a bf16 number).
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "ElementAccess.h"
#include "ElementwiseKernel.h"
#include "QuantizeChunk.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/Outliers.h"
#include "fp4/Numerics/Residual.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;
using numerics::IPred;

namespace {

constexpr int64_t kWarp = 32;
/// Largest chunk tried (the groups of interest are at most 32 wide).
constexpr int64_t kMaxPrepChunk = 32;
/// SMs of the H200: a small launch takes smaller CTAs to spread over them
/// (as the quantize kernel).
constexpr int64_t kSMs = 132;
constexpr int64_t kMinCTAThreads = 64, kMaxCTAThreads = 256;

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// Whether chunk `e` fits a group of `size` elements: whole groups in a
/// chunk, or a power of two of lanes within a warp.
bool fitsChunk(int64_t e, int64_t size) {
  if (size % e == 0)
    return size / e <= kWarp && isPow2(size / e);
  return e % size == 0;
}

/// One rank of a block's top-k: whether an element was found, its |x|
/// bits, in-block index (i32) and exact f32 value.
struct Pick {
  Value found, bits, index, value;
};

/// The slots of every block of `block` elements that the chunk `keys`
/// touches (E / block blocks, or one block shared by block / E lanes,
/// `lanePos` being this thread's position in it). Also returns each key's
/// |x| bits and in-block index.
struct ChunkTopK {
  SmallVector<SmallVector<Pick>> slots;
  SmallVector<Value> bits, index;
  int64_t run = 0, lanes = 1;
};

ChunkTopK chunkTopK(OpBuilder &b, Location loc, ArrayRef<Value> keys,
                    int64_t block, int64_t k, Value tid) {
  ArithOps ops(b, loc);
  ChunkTopK r;
  const int64_t e = keys.size();
  r.lanes = block > e ? block / e : 1;
  r.run = std::min(block, e);
  Value pos;
  if (r.lanes > 1)
    pos = toI32(b, loc,
                arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, r.lanes)));
  for (int64_t j = 0; j < e; ++j) {
    r.bits.push_back(
        ops.andi(ops.bitcastToI32(keys[j]), ops.i32(0x7FFFFFFF)));
    int64_t inRun = j % r.run;
    r.index.push_back(r.lanes > 1
                          ? ops.addi(ops.muli(pos, ops.i32(e)), ops.i32(inRun))
                          : ops.i32(inRun));
  }
  auto boolConst = [&](bool v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), v);
  };
  for (int64_t s = 0; s < e / r.run; ++s) {
    SmallVector<Pick> slots;
    for (int64_t rank = 0; rank < k; ++rank) {
      Pick best{boolConst(false), ops.i32(0), ops.i32(0), ops.f32(0.0f)};
      for (int64_t j = s * r.run; j < (s + 1) * r.run; ++j) {
        Value eligible =
            rank == 0 ? boolConst(true)
                      : numerics::outlierPrecedes(ops, slots.back().bits,
                                                  slots.back().index,
                                                  r.bits[j], r.index[j]);
        Value better = ops.orb(
            ops.notb(best.found),
            numerics::outlierPrecedes(ops, r.bits[j], r.index[j], best.bits,
                                      best.index));
        Value take = ops.andb(eligible, better);
        best = {ops.orb(best.found, take), ops.selecti(take, r.bits[j], best.bits),
                ops.selecti(take, r.index[j], best.index),
                ops.selectf(take, keys[j], best.value)};
      }
      // The block's other lanes: the first of the two candidates.
      for (int64_t offset = 1; offset < r.lanes; offset *= 2) {
        Value foundBits = arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                                 best.found);
        Pick other{ops.cmpi(IPred::NE, shuffleXor(b, loc, foundBits, offset),
                            ops.i32(0)),
                   shuffleXor(b, loc, best.bits, offset),
                   shuffleXor(b, loc, best.index, offset),
                   shuffleXor(b, loc, best.value, offset)};
        Value take = ops.andb(
            other.found,
            ops.orb(ops.notb(best.found),
                    numerics::outlierPrecedes(ops, other.bits, other.index,
                                              best.bits, best.index)));
        best = {ops.orb(best.found, other.found),
                ops.selecti(take, other.bits, best.bits),
                ops.selecti(take, other.index, best.index),
                ops.selectf(take, other.value, best.value)};
      }
      slots.push_back(best);
    }
    r.slots.push_back(std::move(slots));
  }
  return r;
}

/// Stores the slots (values rounded to the memref's element type, indices
/// as i8) of the chunk's blocks: [row, block, slot]; a block spanning
/// lanes is stored by its first lane.
void storeSlots(OpBuilder &b, Location loc, const ChunkTopK &r, int64_t block,
                Value values, Value indices, Value row, Value col, Value tid) {
  Type valueType = cast<MemRefType>(values.getType()).getElementType();
  auto store = [&](OpBuilder &nb, Location l) {
    Value first = arith::DivUIOp::create(nb, l, col, indexConst(nb, l, block));
    for (auto [s, slots] : llvm::enumerate(r.slots)) {
      Value blockCol =
          s == 0 ? first
                 : arith::AddIOp::create(nb, l, first, indexConst(nb, l, s))
                       .getResult();
      for (auto [rank, pick] : llvm::enumerate(slots)) {
        Value at[] = {row, blockCol, indexConst(nb, l, rank)};
        memref::StoreOp::create(nb, l, roundFromF32(nb, l, pick.value, valueType),
                                values, at);
        memref::StoreOp::create(
            nb, l, arith::TruncIOp::create(nb, l, nb.getI8Type(), pick.index),
            indices, at);
      }
    }
  };
  if (r.lanes == 1) {
    store(b, loc);
    return;
  }
  Value lead = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, r.lanes)),
      indexConst(b, loc, 0));
  emitIf(b, loc, lead, store);
}

/// The f32 value a stored slot reads back as (rounded to the values'
/// element type, widened exactly).
Value asStored(OpBuilder &b, Location loc, Value v, Type valueType) {
  if (valueType.isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(),
                               roundFromF32(b, loc, v, valueType));
}

/// The stacker's sum for element j of the chunk: `init`, then each slot of
/// its block whose index is the element's, in slot order.
Value addSlots(ArithOps &ops, const ChunkTopK &r, int64_t j, Value init,
               Type valueType) {
  OpBuilder &b = ops.getBuilder();
  Location loc = ops.getLoc();
  Value sum = init;
  for (const Pick &pick : r.slots[j / r.run]) {
    Value hit = ops.cmpi(IPred::EQ, pick.index, r.index[j]);
    Value next = ops.addf(sum, asStored(b, loc, pick.value, valueType));
    sum = ops.selectf(hit, next, sum);
  }
  return sum;
}

/// The chunk's 2:4 residual in mma.sp's compressed form
/// (MatmulKernelSpec::sparseLhs): per block of 4, the two kept values
/// (rounded to bf16 as the slots are) by ascending position, and a nibble
/// lo | hi << 2; two blocks per metadata byte, stored XOR 0x44.
void storeCompressedResidual(OpBuilder &b, Location loc, const ChunkTopK &r,
                             Value values, Value meta, Value row, Value col) {
  // A chunk is a multiple of 8 elements: whole metadata bytes.
  assert(r.lanes == 1 && r.slots.size() % 2 == 0 &&
         "the compressed residual packs two 4-blocks of a chunk per byte");
  ArithOps ops(b, loc);
  Type bf16 = b.getBF16Type();
  Value valueCol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, 2));
  Value byteCol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, 8));
  Value byte;
  for (auto [s, slots] : llvm::enumerate(r.slots)) {
    const Pick &first = slots[0], &second = slots[1];
    // Positions in a block are distinct (the selection order is total).
    Value swap = ops.cmpi(IPred::UGT, first.index, second.index);
    Value lo = ops.selecti(swap, second.index, first.index);
    Value hi = ops.selecti(swap, first.index, second.index);
    Value vLo = ops.selectf(swap, second.value, first.value);
    Value vHi = ops.selectf(swap, first.value, second.value);
    const Value pair[2] = {vLo, vHi};
    for (int64_t j = 0; j < 2; ++j) {
      Value at = arith::AddIOp::create(b, loc, valueCol,
                                       indexConst(b, loc, 2 * s + j));
      memref::StoreOp::create(b, loc, roundFromF32(b, loc, pair[j], bf16),
                              values, ValueRange{row, at});
    }
    Value nibble = ops.ori(lo, ops.shli(hi, ops.i32(2)));
    if (s % 2 == 0) {
      byte = nibble;
      continue;
    }
    byte = ops.xori(ops.ori(byte, ops.shli(nibble, ops.i32(4))),
                    ops.i32(0x44));
    Value at = arith::AddIOp::create(b, loc, byteCol,
                                     indexConst(b, loc, s / 2));
    memref::StoreOp::create(
        b, loc, arith::TruncIOp::create(b, loc, b.getI8Type(), byte), meta,
        ValueRange{row, at});
  }
}

} // namespace

LogicalResult mlir::fp4::planActivationPrep(const ActivationPrepKernelSpec &spec,
                                            ActivationPrepLayout &layout,
                                            std::string &reason) {
  QuantizedTensorType type = spec.quantized;
  if (!type || !isGPUReadableQuantizedType(type, reason))
    return failure();
  Type in = spec.inputElementType;
  if (spec.rows <= 0 || spec.cols <= 0 || !in ||
      !(in.isBF16() || in.isF16() || in.isF32())) {
    reason = "the activation prep reads a non-empty bf16, f16 or f32 [M, K]";
    return failure();
  }
  auto scheme = dyn_cast<SchemeGPULoweringAttrInterface>(type.getScheme());
  QuantizeKernelSpec q = spec.quantizeSpec();
  if (failed(scheme.planGPUQuantize(q, layout.plan, reason)))
    return failure();
  const GPUQuantizePlan &plan = layout.plan;
  if (plan.needsTensorAmax || plan.tileLines || plan.ctaGroupSize) {
    reason = "the activation prep takes schemes quantized block by block "
             "(no tensor amax, tiles or macro groups)";
    return failure();
  }
  const int64_t d = spec.rotationSize;
  if (d && (!isPow2(d) || d < numerics::kHadamardMinBlockSize ||
            d > numerics::kHadamardMaxSize)) {
    reason = "the fused rotation must be a power of two in [16, 256]";
    return failure();
  }
  if ((spec.splitK && (spec.splitK > spec.splitBlock ||
                       spec.splitBlock > numerics::kMaxSparseBlock)) ||
      (spec.residualK && (spec.residualK > spec.residualBlock ||
                          spec.residualBlock > numerics::kMaxSparseBlock))) {
    reason = "block top-k needs 1 <= k <= block <= 128";
    return failure();
  }
  SmallVector<GPUReductionGroup> groups(plan.groups);
  for (int64_t g : {d, spec.splitBlock, spec.residualBlock})
    if (g)
      groups.push_back({g});
  layout.chunk = 0;
  for (int64_t e = std::max<int64_t>(8, plan.minChunk); e <= kMaxPrepChunk;
       e += 8) {
    if (spec.cols % e != 0 || (plan.exactChunk && e != plan.exactChunk) ||
        (plan.maxChunk && e > plan.maxChunk))
      continue;
    if (llvm::all_of(groups, [&](const GPUReductionGroup &g) {
          return fitsChunk(e, g.size) &&
                 (g.size % e != 0 || g.size / e <= g.maxLanes);
        })) {
      layout.chunk = e;
      break;
    }
  }
  if (!layout.chunk) {
    reason = "no thread chunk (a multiple of 8 elements dividing K, at most "
             "32) fits the rotation, outlier, scale and residual blocks";
    return failure();
  }
  int64_t numChunks = spec.rows * spec.cols / layout.chunk;
  layout.blockDim = std::clamp<int64_t>(
      llvm::alignTo(llvm::divideCeilSigned(numChunks, kSMs), kWarp),
      kMinCTAThreads, kMaxCTAThreads);
  if (plan.maxBlockDim)
    layout.blockDim = std::min(layout.blockDim, plan.maxBlockDim);
  if (layout.blockDim % kWarp != 0) {
    reason = "the scheme's CTA size limit is not whole warps";
    return failure();
  }
  if (spec.compressedResidual) {
    std::string why;
    if (spec.residualBlock != 4 || spec.residualK != 2 ||
        !spec.residualValuesType || !spec.residualValuesType.isBF16())
      why = "the compressed residual is a bf16 2:4 one (block 4, top 2)";
    else if (spec.cols % 32 != 0)
      why = "the compressed residual needs K a multiple of 32 (mma.sp "
            "m16n8k32 steps), K = " + std::to_string(spec.cols);
    else if (spec.transposedSum)
      why = "the compressed residual is for the prefill kernel (no "
            "transposed sum)";
    if (!why.empty()) {
      reason = why;
      return failure();
    }
  }
  int64_t stacked = 0;
  for (int64_t g : spec.outputGroups)
    stacked += g;
  if (stacked != 1 + (spec.residualK && !spec.compressedResidual ? 1 : 0)) {
    reason = "the stacked outputs must hold every activation group once";
    return failure();
  }
  return success();
}

QuantizeKernelSpec ActivationPrepKernelSpec::quantizeSpec() const {
  QuantizeKernelSpec q;
  q.rows = rows;
  q.cols = cols;
  q.result = quantized;
  q.inputElementType = inputElementType;
  q.rotationSize = rotationSize;
  q.rotationSeed = rotationSeed;
  q.rotationInverse = rotationInverse;
  q.rotatedElementType = rotatedElementType;
  return q;
}

FailureOr<KernelPlan> mlir::fp4::buildActivationPrepKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const ActivationPrepKernelSpec &spec, std::string &reason) {
  ActivationPrepLayout layout;
  if (failed(planActivationPrep(spec, layout, reason)))
    return failure();
  const int64_t e = layout.chunk, blockDim = layout.blockDim;
  QuantizedTensorType type = spec.quantized;
  auto scheme = cast<SchemeGPULoweringAttrInterface>(type.getScheme());
  QuantizeKernelSpec qspec = spec.quantizeSpec();

  KernelLaunch launch;
  launch.block = {blockDim, 1, 1};
  launch.grid = {llvm::divideCeilSigned(spec.rows * spec.cols / e, blockDim),
                 1, 1};
  launch.variant = "activation_prep_" + layout.plan.variant;
  if (spec.rotationSize)
    launch.variant += "_hadamard" + std::to_string(spec.rotationSize);
  if (spec.splitK)
    launch.variant += "_top" + std::to_string(spec.splitK);
  if (spec.residualK)
    launch.variant += spec.compressedResidual ? "_residual_sparse24"
                                              : "_residual";
  for (const KernelArg &a : spec.args)
    launch.argNames.push_back(a.name);
  launch.func =
      createKernelShell(builder, loc, module, name, spec.args, launch.block);

  OpBuilder::InsertionGuard guard(builder);
  Block &body = launch.func.getBody().front();
  builder.setInsertionPoint(body.getTerminator());
  OpBuilder &b = builder;
  SmallVector<Value> fargs(body.getArguments());
  size_t next = 0;
  auto take = [&](size_t n) {
    ArrayRef<Value> r = ArrayRef(fargs).slice(next, n);
    next += n;
    return SmallVector<Value>(r);
  };
  Value input = take(1)[0];
  SmallVector<Value> split = take(spec.splitK && spec.storeSplit ? 2 : 0);
  SmallVector<Value> components = take(type.getComponentTypes().size());
  SmallVector<Value> residual =
      take(spec.residualK && spec.storeResidual ? 2 : 0);
  SmallVector<Value> stacked = take(spec.outputGroups.size());
  SmallVector<Value> compressed = take(spec.compressedResidual ? 2 : 0);
  Value summedT = spec.transposedSum ? take(1)[0] : Value();
  if (next != fargs.size()) {
    reason = "the activation prep's arguments do not match its spec";
    launch.func.erase();
    return failure();
  }

  QuantizeEmitter q(b, loc, qspec, e);
  ArithOps &ops = q.ops;
  Value gid = emitGlobalThreadId(b, loc, blockDim);
  ChunkCoords c = emitFlatChunkCoords(b, loc, gid, spec.rows, spec.cols, e);

  // x, rotated and rounded to the rotation's result type.
  SmallVector<Value> x = q.loadChunk(input, c.row, c.col, c.tid);

  // The split: rest is +0.0 where an element does not come after the rank
  // k - 1 one.
  SmallVector<Value> rest = x;
  std::optional<ChunkTopK> outliers;
  if (spec.splitK) {
    outliers = chunkTopK(b, loc, x, spec.splitBlock, spec.splitK, c.tid);
    for (int64_t j = 0; j < e; ++j) {
      const Pick &last = outliers->slots[j / outliers->run].back();
      Value after = numerics::outlierPrecedes(
          ops, last.bits, last.index, outliers->bits[j], outliers->index[j]);
      rest[j] = ops.selectf(after, x[j], ops.f32(0.0f));
    }
    if (!split.empty())
      emitIf(b, loc, c.valid, [&](OpBuilder &nb, Location l) {
        storeSlots(nb, l, *outliers, spec.splitBlock, split[0], split[1],
                   c.row, c.col, c.tid);
      });
  }

  // Q(rest): the scheme's block algorithm stores codes and scales.
  bool stochastic =
      layout.plan.rounding == numerics::ElementRounding::Stochastic;
  Value base = stochastic ? q.linearBase(c.row, c.col) : Value();
  auto bitsAt = [&](int64_t j) {
    return stochastic ? q.randomBits(layout.plan.seed, base, j) : ops.i32(0);
  };
  QuantizeChunkContext context{q,       launch.func, blockDim, layout.plan,
                               gid,     c,           rest,     bitsAt,
                               Value(), components,  1};
  scheme.buildGPUQuantizeChunk(context);
  // Every scale byte is stored (by its block's first lane) before any lane
  // reads it back.
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> codes =
      loadCodes(b, loc, components[0], c.row, c.col, e);
  SmallVector<Value> deq = scheme.buildGPUDequantizeChunk(
      b, loc, components, codes, c.row, c.col, type);

  // Row groups: Q(rest) with its outliers, then the residual.
  SmallVector<SmallVector<Value>> groups;
  SmallVector<Value> dense(e);
  for (int64_t j = 0; j < e; ++j)
    dense[j] = outliers ? addSlots(ops, *outliers, j, deq[j],
                                   spec.splitValuesType)
                        : deq[j];
  groups.push_back(dense);
  std::optional<ChunkTopK> residualSlots;
  if (spec.residualK) {
    SmallVector<Value> r(e);
    for (int64_t j = 0; j < e; ++j)
      r[j] = numerics::residualValue(ops, rest[j], deq[j]);
    residualSlots =
        chunkTopK(b, loc, r, spec.residualBlock, spec.residualK, c.tid);
    SmallVector<Value> sparse(e);
    for (int64_t j = 0; j < e; ++j)
      sparse[j] = addSlots(ops, *residualSlots, j, ops.f32(0.0f),
                           spec.residualValuesType);
    if (!spec.compressedResidual)
      groups.push_back(sparse);
  }

  emitIf(b, loc, c.valid, [&](OpBuilder &nb, Location l) {
    if (residualSlots && !residual.empty())
      storeSlots(nb, l, *residualSlots, spec.residualBlock, residual[0],
                 residual[1], c.row, c.col, c.tid);
    if (spec.compressedResidual)
      storeCompressedResidual(nb, l, *residualSlots, compressed[0],
                              compressed[1], c.row, c.col);
    size_t output = 0;
    int64_t slot = 0;
    for (ArrayRef<Value> group : groups) {
      Value outRow = arith::AddIOp::create(
          nb, l, c.row, indexConst(nb, l, slot * spec.rows));
      storeF32AsFloats(nb, l, group, stacked[output], outRow, c.col);
      if (++slot == spec.outputGroups[output]) {
        slot = 0;
        ++output;
      }
    }
    if (!summedT)
      return;
    ArithOps lops(nb, l);
    for (int64_t j = 0; j < e; ++j) {
      Value total = lops.f32(0.0f);
      for (ArrayRef<Value> group : groups)
        total = lops.addf(total, group[j]);
      Value col = arith::AddIOp::create(nb, l, c.col, indexConst(nb, l, j));
      memref::StoreOp::create(nb, l, total, summedT, ValueRange{col, c.row});
    }
  });
  return KernelPlan{{launch}, {}};
}
