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
//    the codes and scales back, the dequantizer every other kernel uses
//    (with prep-readback=shared from shared copies where they fit,
//    stageComponents: a shared-memory round trip instead of an L2 one;
//    each thread then copies its chunk of them to the global outputs);
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
#include "TransposedSum.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/Outliers.h"
#include "fp4/Numerics/Residual.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
/// `lanePos` being this thread's position in it), in rank order. Also
/// returns each key's |x| bits and in-block index, and whether it is one of
/// its block's top k (`taken`).
struct ChunkTopK {
  SmallVector<SmallVector<Pick>> slots;
  SmallVector<Value> bits, index, taken;
  int64_t run = 0, lanes = 1;
};

/// chunkTopK for values exact in bf16 or f16: the element of rank j is the
/// largest narrowOutlierKey below the key of rank j - 1 (Outliers.h), one
/// integer max per element and one shuffle per lane step.
void narrowKeyTopK(ArithOps &ops, OpBuilder &b, Location loc,
                   ArrayRef<Value> values, int64_t k, ChunkTopK &r) {
  const int64_t e = values.size();
  SmallVector<Value> keys;
  for (int64_t j = 0; j < e; ++j)
    keys.push_back(numerics::narrowOutlierKey(ops, values[j], r.index[j]));
  // Below every key (keys are non-negative as i32).
  Value none = ops.i32(-1);
  auto smax = [&](Value a, Value c) {
    return ops.selecti(ops.cmpi(IPred::SGT, a, c), a, c);
  };
  Value trueValue = arith::ConstantIntOp::create(b, loc, b.getI1Type(), true);
  for (int64_t s = 0; s < e / r.run; ++s) {
    SmallVector<Pick> slots;
    Value previous;
    for (int64_t rank = 0; rank < k; ++rank) {
      Value best;
      for (int64_t j = s * r.run; j < (s + 1) * r.run; ++j) {
        Value candidate =
            rank == 0 ? keys[j]
                      : ops.selecti(ops.cmpi(IPred::SLT, keys[j], previous),
                                    keys[j], none);
        best = best ? smax(best, candidate) : candidate;
      }
      for (int64_t offset = 1; offset < r.lanes; offset *= 2)
        best = smax(best, shuffleXor(b, loc, best, offset));
      // k <= block: every rank is found once the block's lanes are merged.
      Value value = numerics::narrowKeyValue(ops, best);
      slots.push_back({trueValue, numerics::absBits(ops, value),
                       numerics::narrowKeyIndex(ops, best), value});
      previous = best;
    }
    // The top k are the keys at or above the key of rank k - 1.
    for (int64_t j = s * r.run; j < (s + 1) * r.run; ++j)
      r.taken[j] = ops.cmpi(IPred::SGE, keys[j], previous);
    r.slots.push_back(std::move(slots));
  }
}

/// chunkTopK for any f32 values: rank j is the first, under
/// outlierPrecedes, of the elements not taken by ranks 0 .. j-1 (the C++
/// reference's loop). Within a thread the elements come in index order, so
/// a later element precedes the best so far iff its |x| bits are greater;
/// across lanes the lane position says which side has the lower indices.
void generalTopK(ArithOps &ops, OpBuilder &b, Location loc,
                 ArrayRef<Value> values, int64_t k, Value pos, ChunkTopK &r) {
  const int64_t e = values.size();
  auto boolConst = [&](bool v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), v);
  };
  // Whether the partner at xor `offset` holds the lower indices: the groups
  // merged by xor steps of increasing offset are aligned runs of lanes.
  SmallVector<Value> partnerLower;
  for (int64_t offset = 1; offset < r.lanes; offset *= 2)
    partnerLower.push_back(
        ops.cmpi(IPred::NE, ops.andi(pos, ops.i32(offset)), ops.i32(0)));
  for (int64_t s = 0; s < e / r.run; ++s) {
    SmallVector<Pick> slots;
    for (int64_t rank = 0; rank < k; ++rank) {
      Pick best;
      for (int64_t i = 0; i < r.run; ++i) {
        int64_t j = s * r.run + i;
        // Before element i, at most `rank` of the i seen are taken: one is
        // found for certain when i > rank.
        bool foundForCertain = i > rank;
        Value eligible = rank == 0 ? Value() : ops.notb(r.taken[j]);
        if (i == 0) {
          Pick first{rank == 0 ? boolConst(true) : eligible, r.bits[j],
                     r.index[j], values[j]};
          best = first;
          continue;
        }
        Value take = ops.cmpi(IPred::SGT, r.bits[j], best.bits);
        if (!foundForCertain)
          take = ops.orb(ops.notb(best.found), take);
        if (eligible)
          take = ops.andb(eligible, take);
        best = {foundForCertain ? boolConst(true)
                                : ops.orb(best.found, eligible),
                ops.selecti(take, r.bits[j], best.bits),
                ops.selecti(take, r.index[j], best.index),
                ops.selectf(take, values[j], best.value)};
      }
      // Each lane holds at least run - rank untaken elements.
      bool allFound = rank < r.run;
      for (auto [step, lower] : llvm::enumerate(partnerLower)) {
        int64_t offset = int64_t(1) << step;
        Pick other{boolConst(true), shuffleXor(b, loc, best.bits, offset),
                   shuffleXor(b, loc, best.index, offset),
                   shuffleXor(b, loc, best.value, offset)};
        Value take = ops.orb(ops.cmpi(IPred::SGT, other.bits, best.bits),
                             ops.andb(ops.cmpi(IPred::EQ, other.bits, best.bits),
                                      lower));
        if (!allFound) {
          Value foundBits =
              arith::ExtUIOp::create(b, loc, b.getI32Type(), best.found);
          other.found = ops.cmpi(
              IPred::NE, shuffleXor(b, loc, foundBits, offset), ops.i32(0));
          take = ops.andb(other.found, ops.orb(ops.notb(best.found), take));
        }
        best = {allFound ? boolConst(true) : ops.orb(best.found, other.found),
                ops.selecti(take, other.bits, best.bits),
                ops.selecti(take, other.index, best.index),
                ops.selectf(take, other.value, best.value)};
      }
      for (int64_t j = s * r.run; j < (s + 1) * r.run; ++j) {
        Value hit = ops.cmpi(IPred::EQ, best.index, r.index[j]);
        r.taken[j] = rank == 0 ? hit : ops.orb(r.taken[j], hit);
      }
      slots.push_back(best);
    }
    r.slots.push_back(std::move(slots));
  }
}

/// The top k of every block of `block` elements that the chunk's `values`
/// touch. `narrow`: every value is exact in bf16 or f16 (the keyed form).
ChunkTopK chunkTopK(OpBuilder &b, Location loc, ArrayRef<Value> values,
                    int64_t block, int64_t k, Value tid, bool narrow) {
  ArithOps ops(b, loc);
  ChunkTopK r;
  const int64_t e = values.size();
  r.lanes = block > e ? block / e : 1;
  r.run = std::min(block, e);
  Value pos;
  if (r.lanes > 1)
    pos = toI32(b, loc,
                arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, r.lanes)));
  for (int64_t j = 0; j < e; ++j) {
    r.bits.push_back(numerics::absBits(ops, values[j]));
    int64_t inRun = j % r.run;
    r.index.push_back(r.lanes > 1
                          ? ops.addi(ops.muli(pos, ops.i32(e)), ops.i32(inRun))
                          : ops.i32(inRun));
  }
  r.taken.resize(e);
  if (narrow)
    narrowKeyTopK(ops, b, loc, values, k, r);
  else
    generalTopK(ops, b, loc, values, k, pos, r);
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
/// its block whose index is the element's, in slot order. Indices in a
/// block are distinct, so at most one slot matches: the one holding this
/// element, whose value is `value` (the element's own f32 value).
Value addSlots(ArithOps &ops, const ChunkTopK &r, int64_t j, Value init,
               Value value, Type valueType) {
  OpBuilder &b = ops.getBuilder();
  Location loc = ops.getLoc();
  return ops.selectf(r.taken[j],
                     ops.addf(init, asStored(b, loc, value, valueType)), init);
}

/// The chunk's 2:4 residual in mma.sp's compressed form
/// (MatmulKernelSpec::sparseLhs): per block of 4, the two kept values
/// (rounded to bf16 as the slots are) by ascending position, and a nibble
/// lo | hi << 2; two blocks per metadata byte, stored XOR 0x44. Read from
/// the taken mask (exactly two per block), so it needs no slots.
void storeCompressedResidual(OpBuilder &b, Location loc, const ChunkTopK &r,
                             ArrayRef<Value> residual, Value values,
                             Value meta, Value row, Value col) {
  // A chunk is a multiple of 8 elements: whole metadata bytes.
  assert(r.lanes == 1 && r.run == 4 && r.taken.size() % 8 == 0 &&
         "the compressed residual packs two 4-blocks of a chunk per byte");
  ArithOps ops(b, loc);
  Type bf16 = b.getBF16Type();
  Value valueCol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, 2));
  Value byteCol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, 8));
  Value byte;
  for (int64_t s = 0; s < int64_t(r.taken.size()) / 4; ++s) {
    ArrayRef<Value> kept = ArrayRef(r.taken).slice(4 * s, 4);
    ArrayRef<Value> v = residual.slice(4 * s, 4);
    // Two of four kept: the lower is 0, 1 or 2; the higher 3, 2 or 1.
    Value lo = ops.selecti(kept[0], ops.i32(0),
                           ops.selecti(kept[1], ops.i32(1), ops.i32(2)));
    Value hi = ops.selecti(kept[3], ops.i32(3),
                           ops.selecti(kept[2], ops.i32(2), ops.i32(1)));
    Value vLo = ops.selectf(kept[0], v[0], ops.selectf(kept[1], v[1], v[2]));
    Value vHi = ops.selectf(kept[3], v[3], ops.selectf(kept[2], v[2], v[1]));
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

/// The 2:4 selection's taken mask without slots (when no slot is stored):
/// element i of a 4-block, in index order, precedes a later j iff
/// |x_i| >= |x_j| (bits), an earlier one iff >; it is kept iff it precedes
/// at least two of the other three. Six compares per block instead of the
/// rank-by-rank search.
ChunkTopK twoOfFourTaken(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  ArithOps ops(b, loc);
  ChunkTopK r;
  r.run = 4;
  for (Value v : values)
    r.bits.push_back(numerics::absBits(ops, v));
  auto majority = [&](Value x, Value y, Value z) {
    return ops.orb(ops.andb(x, ops.orb(y, z)), ops.andb(y, z));
  };
  for (int64_t s = 0; s < int64_t(values.size()) / 4; ++s) {
    ArrayRef<Value> bits = ArrayRef(r.bits).slice(4 * s, 4);
    // p[i][j], i < j: element i precedes element j.
    Value p[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        p[i][j] = ops.cmpi(IPred::SGE, bits[i], bits[j]);
    r.taken.push_back(majority(p[0][1], p[0][2], p[0][3]));
    r.taken.push_back(
        majority(ops.notb(p[0][1]), p[1][2], p[1][3]));
    r.taken.push_back(
        majority(ops.notb(p[0][2]), ops.notb(p[1][2]), p[2][3]));
    r.taken.push_back(majority(ops.notb(p[0][3]), ops.notb(p[1][3]),
                               ops.notb(p[2][3])));
  }
  return r;
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

/// The components the block algorithm writes and the dequantizer reads
/// back: with ActivationPrepKernelSpec::sharedReadback, a shared-memory
/// copy of each rank-2 [R, K / d] component (d
/// dividing K and either dividing the chunk `e` or a multiple of it: the
/// codes, the scale bytes, macro factors) while they fit in
/// kPrepStagedBytes, else the global output itself. `divisors` gets d per
/// staged component (0: not staged). At decode sizes the read-back after
/// the barrier then waits for shared memory instead of an L2 round trip
/// of the global stores; each thread copies its chunk's elements to the
/// global outputs (copyStagedComponents).
static SmallVector<Value>
stageComponents(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
                ArrayRef<Value> components, const ActivationPrepKernelSpec &spec,
                int64_t e, SmallVector<int64_t> &divisors) {
  constexpr int64_t kPrepStagedBytes = 40 * 1024;
  SmallVector<Value> out(components.begin(), components.end());
  divisors.assign(components.size(), 0);
  if (!spec.sharedReadback)
    return out;
  int64_t bytes = 0;
  for (auto [i, component] : llvm::enumerate(components)) {
    auto type = cast<MemRefType>(component.getType());
    if (type.getRank() != 2 || !type.hasStaticShape() ||
        type.getDimSize(0) != spec.rows || type.getDimSize(1) == 0 ||
        spec.cols % type.getDimSize(1) != 0)
      continue;
    const int64_t d = spec.cols / type.getDimSize(1);
    if (e % d != 0 && d % e != 0)
      continue;
    const int64_t size =
        type.getNumElements() * type.getElementTypeBitWidth() / 8;
    if (bytes + size > kPrepStagedBytes)
      continue;
    bytes += size;
    divisors[i] = d;
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    out[i] = func.addWorkgroupAttribution(
        MemRefType::get(type.getShape(), type.getElementType(),
                        MemRefLayoutAttrInterface(), workgroup),
        loc);
  }
  return out;
}

/// Copies this thread's chunk of each staged component to its global
/// output: elements col / d .. (col + e) / d - 1 of the row where d <= e,
/// else element col / d from the thread that starts it (col % d == 0).
static void copyStagedComponents(OpBuilder &b, Location loc,
                                 ArrayRef<Value> staged,
                                 ArrayRef<Value> outputs,
                                 ArrayRef<int64_t> divisors, Value row,
                                 Value col, int64_t e) {
  for (auto [fromValue, toValue, d] :
       llvm::zip_equal(staged, outputs, divisors)) {
    if (d == 0)
      continue;
    // Plain copies: the lambda below captures them (a structured binding
    // is capturable only from C++20).
    Value from = fromValue, to = toValue;
    Value first = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, d));
    auto copy = [&](OpBuilder &nb, Location l, int64_t count) {
      SmallVector<Value> values =
          loadElements(nb, l, from, ValueRange{row, first}, count);
      if (count == 1) {
        memref::StoreOp::create(nb, l, values[0], to, ValueRange{row, first});
        return;
      }
      // One vector store (the offset is a multiple of `count`).
      Type element = cast<MemRefType>(to.getType()).getElementType();
      Value v = vector::FromElementsOp::create(
          nb, l, VectorType::get({count}, element), values);
      vector::StoreOp::create(
          nb, l, v, to, ValueRange{row, first}, /*nontemporal=*/false,
          llvm::MaybeAlign(naturalAlignment(
              count * element.getIntOrFloatBitWidth() / 8)));
    };
    if (d <= e) {
      copy(b, loc, e / d);
      continue;
    }
    Value starts = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, col, indexConst(b, loc, d)),
        indexConst(b, loc, 0));
    emitIf(b, loc, starts,
           [&](OpBuilder &nb, Location l) { copy(nb, l, 1); });
  }
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

  // The split: rest is +0.0 where an element is one of its block's top k.
  // x is exact in the rotation's result type (or the input's): bf16 and f16
  // values take the keyed top-k.
  Type xType = spec.rotationSize ? spec.rotatedElementType
                                 : spec.inputElementType;
  bool narrowKeys = xType && (xType.isBF16() || xType.isF16());
  SmallVector<Value> rest = x;
  std::optional<ChunkTopK> outliers;
  if (spec.splitK) {
    outliers = chunkTopK(b, loc, x, spec.splitBlock, spec.splitK, c.tid,
                         narrowKeys);
    for (int64_t j = 0; j < e; ++j)
      rest[j] = ops.selectf(outliers->taken[j], ops.f32(0.0f), x[j]);
    if (!split.empty())
      emitIf(b, loc, c.valid, [&](OpBuilder &nb, Location l) {
        storeSlots(nb, l, *outliers, spec.splitBlock, split[0], split[1],
                   c.row, c.col, c.tid);
      });
  }

  // Q(rest): the scheme's block algorithm stores codes and scales, into
  // shared copies where they fit (stageComponents), so that the read-back
  // below costs a shared-memory round trip instead of an L2 one.
  bool stochastic =
      layout.plan.rounding == numerics::ElementRounding::Stochastic;
  Value base = stochastic ? q.linearBase(c.row, c.col) : Value();
  auto bitsAt = [&](int64_t j) {
    return stochastic ? q.randomBits(layout.plan.seed, base, j) : ops.i32(0);
  };
  SmallVector<int64_t> divisors;
  SmallVector<Value> written =
      stageComponents(b, loc, launch.func, components, spec, e, divisors);
  QuantizeChunkContext context{q,       launch.func, blockDim, layout.plan,
                               gid,     c,           rest,     bitsAt,
                               Value(), written,     1};
  scheme.buildGPUQuantizeChunk(context);
  // Every scale byte is stored (by its block's first lane) before any lane
  // reads it back.
  gpu::BarrierOp::create(b, loc);
  emitIf(b, loc, c.valid, [&](OpBuilder &nb, Location l) {
    copyStagedComponents(nb, l, written, components, divisors, c.row, c.col,
                         e);
  });
  SmallVector<Value> codes = loadCodes(b, loc, written[0], c.row, c.col, e);
  SmallVector<Value> deq = scheme.buildGPUDequantizeChunk(
      b, loc, written, codes, c.row, c.col, type);

  // Row groups: Q(rest) with its outliers, then the residual.
  SmallVector<SmallVector<Value>> groups;
  SmallVector<Value> dense(e);
  for (int64_t j = 0; j < e; ++j)
    dense[j] = outliers ? addSlots(ops, *outliers, j, deq[j], x[j],
                                   spec.splitValuesType)
                        : deq[j];
  groups.push_back(dense);
  std::optional<ChunkTopK> residualSlots;
  SmallVector<Value> residualValues;
  if (spec.residualK) {
    SmallVector<Value> &r = residualValues;
    r.resize(e);
    for (int64_t j = 0; j < e; ++j)
      r[j] = numerics::residualValue(ops, rest[j], deq[j]);
    // r is an f32 difference: the general top-k, or for a 2:4 selection
    // whose slots are not stored just its mask.
    if (spec.residualBlock == numerics::kTwoFourBlock &&
        spec.residualK == numerics::kTwoFourKeep && residual.empty())
      residualSlots = twoOfFourTaken(b, loc, r);
    else
      residualSlots = chunkTopK(b, loc, r, spec.residualBlock, spec.residualK,
                                c.tid, /*narrow=*/false);
    SmallVector<Value> sparse(e);
    for (int64_t j = 0; j < e; ++j)
      sparse[j] = addSlots(ops, *residualSlots, j, ops.f32(0.0f), r[j],
                           spec.residualValuesType);
    if (!spec.compressedResidual)
      groups.push_back(sparse);
  }

  emitIf(b, loc, c.valid, [&](OpBuilder &nb, Location l) {
    if (residualSlots && !residual.empty())
      storeSlots(nb, l, *residualSlots, spec.residualBlock, residual[0],
                 residual[1], c.row, c.col, c.tid);
    if (spec.compressedResidual)
      storeCompressedResidual(nb, l, *residualSlots, residualValues,
                              compressed[0], compressed[1], c.row, c.col);
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
      memref::StoreOp::create(
          nb, l, total, summedT,
          transposedSumIndices(nb, l, col, c.row, spec.sumBankColumns));
    }
  });
  return KernelPlan{{launch}, {}};
}
