//===- QuantizeKernel.cpp - activation quantizer --------------------------===//
//
// fp4.quantize of a [R, K] bf16/f16/f32 tensor along K, optionally after a
// fused block Hadamard rotation, bit-exact with the CPU lowering
// (convert-fp4-to-linalg) for MXFP4 (every scale rule and element rounding),
// NVFP4 (four_over_six, 16x16 tiles), HiF4 and macro-block MXFP4 (search = 0).
//
// Thread mapping (ElementwiseKernel.h): thread g owns chunk g, E consecutive
// elements of the flattened tensor. A scale block, rotation group or macro
// block of S elements is S/E consecutive lanes (or E/S of them sit in one
// thread). E is the largest such size up to 32 on large tensors (MXFP4 after
// Hadamard-32: four 16-byte loads, rotation and block max in registers, one
// 16-byte code store), else the smallest multiple of 8 that fits (more
// threads for small tensors; cross-lane work by xor shuffles).
//
// Why the bytes are the reference's. Every value the reference computes is
// one of:
//  * an element rule (e2m1 encode, scale bytes, factors): emitted here by
//    calling the same numerics template with ArithOps on the same f32
//    inputs, so the same IEEE operations run in the same order (the NVVM
//    lowering keeps each arith op one PTX instruction with .rn rounding, no
//    FMA contraction, no flush to zero: the lit tests check the PTX);
//  * a max |x| over a block: the reference folds maxAbsBits over the block
//    in element order from 0; maxAbsBits is the signed max of non-negative
//    bit patterns, associative and commutative, so the tree of in-thread
//    folds and xor-shuffle steps here gives the same bits (NaN included: its
//    pattern is above every other);
//  * an f64 sum of squared errors (four_over_six): not associative, so it is
//    summed sequentially in the reference's order by one thread (a block
//    inside one thread; a 16x16 tile through shared memory);
//  * a rotation: the butterfly network of Hadamard.h, each stage pairing the
//    same elements (a cross-lane stage gets the partner by shuffle and puts
//    the operands in the reference's lower/upper roles, since only addition
//    commutes exactly), then the normalization, with the signs of
//    hadamardSigns(seed) before (forward) or after (inverse);
//  * stochastic rounding bits: counterRandom keyed by the element's row-major
//    linear index row * K + col, as BlockedTensorBuilder::elementRandomBits.
// Input widening and the rounding of the rotated values to the rotation's
// result type are castFloatTensor's (exact widening; IEEE round to nearest
// even, here cvt instructions: ElementwiseKernel.h).
//
// NVFP4 needs the finite max |x| of the whole (rotated) tensor before any
// block: a first kernel reduces it into a zeroed i32 scratch word with
// atomic max on the bit patterns (finite non-negative patterns compare as
// unsigned integers like the floats), the second quantizes.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseKernel.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/HiF4.h"
#include "fp4/Numerics/MXFP4.h"
#include "fp4/Numerics/MacroBlock.h"
#include "fp4/Numerics/NVFP4.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp4;
using numerics::FPred;
using numerics::IPred;

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kMaxCTAThreads = 1024;
/// Largest chunk tried: 128 f32 values per thread is the register limit.
constexpr int64_t kMaxChunk = 128;
/// CTAs of the grid-stride tensor-amax kernel (a few waves on 132 SMs; one
/// atomic per warp).
constexpr int64_t kAmaxMaxCTAs = 1056;
/// NVFP4 16x16 tiles.
constexpr int64_t kTile = numerics::kNVFP4BlockSize;
/// SMs of the H200; a launch with fewer threads than kSMs * 256 cannot fill
/// the GPU, so it trades per-thread work for more threads and CTAs.
constexpr int64_t kSMs = 132;
constexpr int64_t kFewThreads = kSMs * 256;

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// A run of `size` consecutive elements along K that the kernel reduces
/// over (a scale block, a rotation group, a macro block), and how many
/// threads may share one: 32 for warp shuffles, up to a CTA when a shared
/// memory step is emitted.
struct Group {
  int64_t size;
  int64_t maxLanes = kWarp;
};

/// Threads per group for chunk `e` (1 when whole groups sit in a chunk).
int64_t lanesOf(int64_t e, int64_t size) {
  return size % e == 0 ? size / e : 1;
}

bool fits(int64_t e, const Group &g) {
  if (g.size % e == 0) {
    int64_t lanes = g.size / e;
    if (lanes > g.maxLanes)
      return false;
    return lanes <= kWarp ? isPow2(lanes) : lanes % kWarp == 0;
  }
  return e % g.size == 0;
}

/// The thread chunk: a multiple of 8 elements (bf16 loads of 16 bytes, codes
/// in whole i32 words) dividing K that fits every group. Preferred: the
/// largest group size up to 32, so that blocks and rotations of up to 32
/// elements are computed entirely in registers (no shuffles, no lane
/// selects: the fast path spends its instruction budget on the encoder);
/// otherwise the smallest that fits.
///
/// A small tensor (fewer than kFewThreads chunks at the preferred size) takes
/// the smallest chunk instead: latency, not instruction issue, bounds it.
std::optional<int64_t> chooseChunk(int64_t rows, int64_t cols,
                                   ArrayRef<Group> groups, int64_t minChunk) {
  auto ok = [&](int64_t e) {
    return e >= minChunk && cols % e == 0 &&
           llvm::all_of(groups, [&](const Group &g) { return fits(e, g); });
  };
  int64_t preferred = std::max<int64_t>(8, minChunk);
  for (const Group &g : groups)
    preferred = std::max(preferred, std::min<int64_t>(g.size, kWarp));
  preferred = llvm::alignTo(preferred, 8);
  if (ok(preferred) && rows * cols / preferred >= kFewThreads)
    return preferred;
  for (int64_t e = 8; e <= kMaxChunk; e += 8)
    if (ok(e))
      return e;
  return std::nullopt;
}

Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
}

Value truncToI8(OpBuilder &b, Location loc, Value i32) {
  return arith::TruncIOp::create(b, loc, b.getI8Type(), i32);
}

/// What every kernel of one quantize op shares.
class QuantizeEmitter {
public:
  QuantizeEmitter(OpBuilder &b, Location loc, const QuantizeKernelSpec &spec,
                  int64_t chunk)
      : b(b), loc(loc), ops(b, loc), spec(spec), chunk(chunk) {}

  /// The chunk's E input values as f32, rotated (and rounded to the
  /// rotation's result type) when a rotation is fused.
  SmallVector<Value> loadChunk(Value input, Value row, Value col, Value tid) {
    SmallVector<Value> v = loadFloatsAsF32(b, loc, input, row, col, chunk);
    if (spec.rotationSize == 0)
      return v;
    rotate(v, tid);
    // The reference stores the rotation's result as its element type:
    // roundToBF16 / roundToF16 (IEEE round to nearest even), here one
    // cvt.rn instruction each way instead of the rules' integer sequences
    // (the same value for every non-NaN input; NaN stays NaN).
    Type t = spec.rotatedElementType;
    if (t && (t.isBF16() || t.isF16()))
      for (Value &x : v)
        x = arith::ExtFOp::create(
            b, loc, b.getF32Type(),
            arith::TruncFOp::create(b, loc, t, x).getResult());
    return v;
  }

  /// Position of this thread in its group of `lanes` threads (i32).
  Value lanePosition(Value tid, int64_t lanes) {
    return toI32(
        b, loc, arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, lanes)));
  }

  /// Linear index row * K + col of the chunk's first element (i64).
  Value linearBase(Value row, Value col) {
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, row, indexConst(b, loc, spec.cols)), col);
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), linear);
  }

  /// counterRandom bits of the element `offset` after `base` (i64), split
  /// into 32-bit halves as BlockedTensorBuilder::randomBitsAt.
  Value randomBits(uint32_t seed, Value base, int64_t offset) {
    Value idx = arith::AddIOp::create(
        b, loc, base,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), offset));
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), idx);
    Value hi = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::ShRUIOp::create(
            b, loc, idx,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32)));
    return numerics::counterRandom(ops, ops.i32(static_cast<int32_t>(seed)), lo,
                                   hi);
  }

  /// max |x| bit patterns over consecutive runs of `size` values (from 0,
  /// as the reference's reduction), one per run.
  SmallVector<Value> runAbsMaxBits(ArrayRef<Value> v, int64_t size) {
    SmallVector<Value> out;
    for (size_t s = 0; s < v.size(); s += size) {
      Value m = numerics::absBits(ops, v[s]);
      for (int64_t j = 1; j < size; ++j)
        m = numerics::maxAbsBits(ops, m, numerics::absBits(ops, v[s + j]));
      out.push_back(m);
    }
    return out;
  }

  /// Block max |x| bits of a group of `size` elements: in-thread runs
  /// (several per chunk when size < E), then xor shuffles across the lanes.
  SmallVector<Value> blockAbsMaxBits(ArrayRef<Value> v, int64_t size) {
    SmallVector<Value> runs = runAbsMaxBits(v, std::min(size, chunk));
    if (size > chunk)
      runs[0] = groupReduce(b, loc, runs[0], size / chunk, maxBits());
    return runs;
  }

  /// maxAbsBits as a reduction combiner.
  function_ref<Value(Value, Value)> maxBits() { return maxFn; }

  /// Stores one byte per block (i32 values 0..255) of the chunk into the
  /// i8 memref `scales` [R, K / size]: the group's first lane when a block
  /// spans lanes, else the chunk's bytes.
  void storeBlockBytes(ArrayRef<Value> bytes, Value scales, Value row,
                       Value col, Value tid, int64_t size) {
    Value scol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, size));
    if (size >= chunk) {
      Value lead = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, size / chunk)),
          indexConst(b, loc, 0));
      emitIf(b, loc, lead, [&](OpBuilder &nb, Location l) {
        memref::StoreOp::create(nb, l, truncToI8(nb, l, bytes[0]), scales,
                                ValueRange{row, scol});
      });
      return;
    }
    for (auto [s, byte] : llvm::enumerate(bytes)) {
      Value c =
          s == 0 ? scol
                 : arith::AddIOp::create(b, loc, scol, indexConst(b, loc, s));
      memref::StoreOp::create(b, loc, truncToI8(b, loc, byte), scales,
                              ValueRange{row, c});
    }
  }

  OpBuilder &b;
  Location loc;
  ArithOps ops;
  const QuantizeKernelSpec &spec;
  int64_t chunk;

private:
  void rotate(SmallVector<Value> &v, Value tid);

  std::function<Value(Value, Value)> maxFn = [this](Value x, Value y) {
    return numerics::maxAbsBits(ops, x, y);
  };
};

/// The block Hadamard rotation of Hadamard.h (hadamardTransformGroup) on
/// the chunk, the groups of d = rotationSize elements being d/E lanes or
/// E/d runs of the chunk.
void QuantizeEmitter::rotate(SmallVector<Value> &v, Value tid) {
  const int64_t d = spec.rotationSize, e = chunk;
  const bool randomized = spec.rotationSeed.has_value();
  std::vector<uint8_t> negative;
  if (randomized)
    negative = numerics::hadamardSigns(*spec.rotationSeed, d);
  const int64_t lanes = lanesOf(e, d);
  // Coordinate of element j: p * E + j for lane position p (d > E), else
  // j mod d.
  Value pos = lanes > 1 ? lanePosition(tid, lanes) : Value();

  auto applySigns = [&] {
    if (!randomized)
      return;
    for (int64_t j = 0; j < e; ++j) {
      if (lanes == 1) {
        if (negative[j % d])
          v[j] = ops.negf(v[j]);
        continue;
      }
      // Bit p of `mask`: the sign of coordinate p * E + j.
      uint32_t mask = 0;
      for (int64_t p = 0; p < lanes; ++p)
        if (negative[p * e + j])
          mask |= 1u << p;
      if (mask == 0)
        continue;
      Value isNegative =
          ops.cmpi(IPred::NE,
                   ops.andi(ops.shrui(ops.i32(static_cast<int32_t>(mask)), pos),
                            ops.i32(1)),
                   ops.i32(0));
      v[j] = numerics::hadamardApplySign(ops, v[j], isNegative);
    }
  };

  if (!spec.rotationInverse)
    applySigns();
  for (int64_t h = 1; h < d; h *= 2) {
    if (h < e) {
      // Both partners in this thread: coordinate bit h is bit h of j.
      for (int64_t j = 0; j < e; ++j) {
        if (j & h)
          continue;
        Value lower = v[j], upper = v[j + h];
        v[j] = numerics::hadamardSum(ops, lower, upper);
        v[j + h] = numerics::hadamardDifference(ops, lower, upper);
      }
      continue;
    }
    // The partner is lane p xor h/E; the lane with the bit set holds the
    // upper element and computes lower - upper with the operands in that
    // order.
    int64_t offset = h / e;
    Value isUpper =
        ops.cmpi(IPred::NE, ops.andi(pos, ops.i32(offset)), ops.i32(0));
    for (int64_t j = 0; j < e; ++j) {
      Value other = shuffleXor(b, loc, v[j], offset);
      Value lower = ops.selectf(isUpper, other, v[j]);
      Value upper = ops.selectf(isUpper, v[j], other);
      v[j] = numerics::hadamardButterfly(ops, lower, upper, isUpper);
    }
  }
  for (Value &x : v)
    x = numerics::hadamardNormalize(ops, x, d);
  if (spec.rotationInverse)
    applySigns();
}

/// Per-scheme parameters the builder derives once.
struct SchemeInfo {
  enum Kind { MX, NV, HiF4, Macro } kind;
  /// Scale block (MX: block_size, NVFP4 16, macro 32, HiF4 64).
  int64_t block = 32;
  numerics::ScaleRounding rule = numerics::ScaleRounding::Floor;
  numerics::ElementRounding mode = numerics::ElementRounding::NearestEven;
  uint32_t seed = 0;
  bool fourOverSix = false, tile2d = false;
  /// Macro block in elements (macro_block, or K for 0); search count.
  int64_t macro = 0, search = 0;
  std::string name;
};

FailureOr<SchemeInfo> getSchemeInfo(const QuantizeKernelSpec &spec,
                                    std::string &reason) {
  SchemeInfo info;
  Attribute scheme = spec.result.getScheme();
  if (auto mx = dyn_cast<MXFP4Attr>(scheme)) {
    info.kind = SchemeInfo::MX;
    info.block = mx.getBlockSize();
    info.rule = toNumerics(mx.getScaleRounding());
    info.mode = toNumerics(mx.getRounding());
    info.seed = mx.getSeed();
    info.name = "mxfp4";
  } else if (auto nv = dyn_cast<NVFP4Attr>(scheme)) {
    info.kind = SchemeInfo::NV;
    info.block = numerics::kNVFP4BlockSize;
    info.mode = toNumerics(nv.getRounding());
    info.seed = nv.getSeed();
    info.fourOverSix = nv.getFourOverSix();
    info.tile2d = nv.getTile2d();
    info.name = "nvfp4";
  } else if (isa<HiF4Attr>(scheme)) {
    info.kind = SchemeInfo::HiF4;
    info.block = numerics::kHiF4GroupSize;
    info.name = "hif4";
  } else if (auto macro = dyn_cast<MXFP4MacroAttr>(scheme)) {
    info.kind = SchemeInfo::Macro;
    info.block = 32;
    info.rule = toNumerics(macro.getScaleRounding());
    info.mode = toNumerics(macro.getRounding());
    info.seed = macro.getSeed();
    info.macro = macro.getMacroBlock() == 0 ? spec.cols : macro.getMacroBlock();
    info.search = macro.getSearch();
    info.name = "macro";
    if (info.search != 0) {
      reason = "macro-block search (search > 0) is not implemented on the "
               "GPU (it needs sequential f64 error sums per candidate)";
      return failure();
    }
  } else {
    reason = "unsupported quantization scheme";
    return failure();
  }
  return info;
}

/// The tensor-amax kernel of NVFP4: finite max |x| of the (rotated) input
/// into scratch word 0, as NVFP4Lowering's finiteAbsMax (non-finite values
/// skipped, so every pattern is below +Inf's and unsigned atomic max orders
/// them as floats; the zeroed scratch is the reduction's initial 0).
FailureOr<KernelLaunch> buildAmaxKernel(OpBuilder &builder, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        const QuantizeKernelSpec &spec,
                                        const KernelArg &scratch,
                                        int64_t blockDim, std::string &reason) {
  SmallVector<Group> groups;
  if (spec.rotationSize)
    groups.push_back({spec.rotationSize});
  std::optional<int64_t> chunk = chooseChunk(spec.rows, spec.cols, groups, 8);
  if (!chunk) {
    reason = "no thread chunk fits K and the rotation size";
    return failure();
  }
  int64_t numChunks = spec.rows * spec.cols / *chunk;
  int64_t ctas =
      std::min(llvm::divideCeilSigned(numChunks, blockDim), kAmaxMaxCTAs);
  int64_t stride = ctas * blockDim;
  int64_t iterations = llvm::divideCeilSigned(numChunks, stride);

  KernelLaunch launch;
  launch.block = {blockDim, 1, 1};
  launch.grid = {ctas, 1, 1};
  launch.variant =
      "tensor_amax" + (spec.rotationSize
                           ? "_hadamard" + std::to_string(spec.rotationSize)
                           : std::string());
  SmallVector<KernelArg> args = {spec.args.front(), scratch};
  for (const KernelArg &a : args)
    launch.argNames.push_back(a.name);
  launch.func =
      createKernelShell(builder, loc, module, name, args, launch.block);
  OpBuilder::InsertionGuard guard(builder);
  Block &body = launch.func.getBody().front();
  builder.setInsertionPoint(body.getTerminator());
  OpBuilder &b = builder;
  QuantizeEmitter q(b, loc, spec, *chunk);
  ArithOps &ops = q.ops;
  Value input = body.getArgument(0), amax = body.getArgument(1);

  Value gid = emitGlobalThreadId(b, loc, blockDim);
  // Every thread runs the same number of iterations, so the shuffles of a
  // rotation see full warps; past the end the value is not taken.
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, iterations),
      indexConst(b, loc, 1), ValueRange{ops.i32(0)},
      [&](OpBuilder &lb, Location l, Value it, ValueRange iter) {
        Value g = arith::AddIOp::create(
            lb, l, gid,
            arith::MulIOp::create(lb, l, it, indexConst(lb, l, stride)));
        ChunkCoords c =
            emitFlatChunkCoords(lb, l, g, spec.rows, spec.cols, *chunk);
        SmallVector<Value> v = q.loadChunk(input, c.row, c.col, c.tid);
        Value acc = iter[0];
        for (Value x : v) {
          Value a = numerics::absBits(ops, x);
          acc = ops.selecti(numerics::isNonFiniteAbsBits(ops, a), acc,
                            numerics::maxAbsBits(ops, acc, a));
        }
        scf::YieldOp::create(lb, l,
                             ValueRange{ops.selecti(c.valid, acc, iter[0])});
      });
  Value acc = groupReduce(b, loc, loop.getResult(0), kWarp, q.maxBits());
  Value tid =
      gpu::ThreadIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  Value lane0 = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, kWarp)),
      indexConst(b, loc, 0));
  emitIf(b, loc, lane0, [&](OpBuilder &nb, Location l) {
    memref::AtomicRMWOp::create(nb, l, arith::AtomicRMWKind::maxu, acc, amax,
                                ValueRange{indexConst(nb, l, 0)});
  });
  return launch;
}

/// The four_over_six choice of a 16x16 tile whose 16 lines are 16
/// consecutive lanes (one line of 16 elements each): the two candidates'
/// f64 error sums in the reference's transpose-symmetric order (for a, then
/// b >= a: e(a,a), or e(a,b) + e(b,a)), computed by the tile's first lane
/// from shared memory. Returns whether map-to-4 is strictly better (on
/// every lane of the tile).
Value emitTileFourOverSixChoice(QuantizeEmitter &q,
                                ArrayRef<SmallVector<Value>> errors,
                                Value errorsSmem, Value tid) {
  OpBuilder &b = q.b;
  Location loc = q.loc;
  ArithOps &ops = q.ops;
  Type f64 = b.getF64Type();
  Value tileLane =
      arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, kTile));
  Value tileBase = arith::SubIOp::create(b, loc, tid, tileLane);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        tileLane, indexConst(b, loc, 0));
  SmallVector<Value> sums;
  for (const SmallVector<Value> &e : errors) {
    for (int64_t j = 0; j < kTile; ++j) {
      Value idx = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tid, indexConst(b, loc, kTile)),
          indexConst(b, loc, j));
      memref::StoreOp::create(b, loc, e[j], errorsSmem, ValueRange{idx});
    }
    gpu::BarrierOp::create(b, loc);
    Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{f64}, isFirst,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      auto at = [&](Value line, Value col) {
        Value idx = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc,
                                  arith::AddIOp::create(b, loc, tileBase, line),
                                  indexConst(b, loc, kTile)),
            col);
        return memref::LoadOp::create(b, loc, errorsSmem, ValueRange{idx})
            .getResult();
      };
      auto outer = scf::ForOp::create(
          b, loc, indexConst(b, loc, 0), indexConst(b, loc, kTile),
          indexConst(b, loc, 1), ValueRange{zero},
          [&](OpBuilder &, Location, Value a, ValueRange outerIter) {
            auto inner = scf::ForOp::create(
                b, loc, a, indexConst(b, loc, kTile), indexConst(b, loc, 1),
                outerIter,
                [&](OpBuilder &, Location, Value bb, ValueRange innerIter) {
                  Value eAB = at(a, bb), eBA = at(bb, a);
                  Value diagonal = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::eq, a, bb);
                  Value term = ops.selectd(diagonal, eAB, ops.addd(eAB, eBA));
                  scf::YieldOp::create(
                      b, loc, ValueRange{ops.addd(innerIter[0], term)});
                });
            scf::YieldOp::create(b, loc, inner.getResults());
          });
      scf::YieldOp::create(b, loc, outer.getResults());
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{zero});
    }
    sums.push_back(ifOp.getResult(0));
    // The buffer is reused by the next candidate.
    gpu::BarrierOp::create(b, loc);
  }
  Value lower = ops.cmpd(FPred::OLT, sums[1], sums[0]);
  // Broadcast the first lane's decision to the tile.
  Value flag = arith::ExtUIOp::create(b, loc, b.getI32Type(), lower);
  Value warpLane = toI32(
      b, loc,
      arith::RemUIOp::create(b, loc, tileBase, indexConst(b, loc, kWarp)));
  flag = shuffleIdx(b, loc, flag, warpLane);
  return ops.cmpi(IPred::NE, flag, ops.i32(0));
}

} // namespace

FailureOr<KernelPlan> mlir::fp4::buildQuantizeKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const QuantizeKernelSpec &spec, const GPUTarget &target,
    const GPUKernelOptions &options, std::string &reason) {
  (void)target; // Generic code: integer and f32/f64 arithmetic only.
  QuantizedTensorType type = spec.result;
  if (type.getRank() != 2 || type.getAxis() != 1 || !type.hasStaticShape() ||
      spec.rows <= 0 || spec.cols <= 0) {
    reason = "the quantize kernel takes a static [R, K] tensor blocked along "
             "K";
    return failure();
  }
  Type inElt = spec.inputElementType;
  if (!inElt || !(inElt.isBF16() || inElt.isF16() || inElt.isF32())) {
    reason = "the quantize kernel reads bf16, f16 or f32 inputs";
    return failure();
  }
  const int64_t d = spec.rotationSize;
  if (d != 0 && (!isPow2(d) || d < numerics::kHadamardMinBlockSize ||
                 d > numerics::kHadamardMaxSize || spec.cols % d != 0)) {
    reason = "fused rotation size must be a power of two in [16, 256] "
             "dividing K";
    return failure();
  }
  FailureOr<SchemeInfo> info = getSchemeInfo(spec, reason);
  if (failed(info))
    return failure();
  if (info->kind == SchemeInfo::NV && info->tile2d && spec.rows % kTile != 0) {
    reason = "NVFP4 16x16 tiles need R to be a multiple of 16";
    return failure();
  }
  // The lanes of a tile hold different rows, so a rotation must stay inside
  // one thread's 16 elements.
  if (info->kind == SchemeInfo::NV && info->tile2d && d > kTile) {
    reason = "NVFP4 16x16 tiles with a fused rotation larger than 16";
    return failure();
  }

  // The chunk: tiles are 16 lines of one 16-element block each; otherwise
  // the smallest chunk that fits the groups.
  SmallVector<Group> groups;
  if (d)
    groups.push_back({d});
  int64_t minChunk = 8;
  switch (info->kind) {
  case SchemeInfo::MX:
    groups.push_back({info->block});
    break;
  case SchemeInfo::NV:
    groups.push_back({info->block});
    // four_over_six sums a block's errors sequentially: one thread per block.
    if (info->fourOverSix || info->tile2d)
      minChunk = kTile;
    break;
  case SchemeInfo::HiF4:
    groups.push_back({info->block});
    break;
  case SchemeInfo::Macro:
    groups.push_back({info->block});
    groups.push_back({info->macro, kMaxCTAThreads});
    break;
  }
  std::optional<int64_t> chosen =
      chooseChunk(spec.rows, spec.cols, groups, minChunk);
  if (!chosen || (info->tile2d && *chosen != kTile) ||
      (info->kind == SchemeInfo::HiF4 && *chosen > info->block)) {
    reason = "no thread chunk (a multiple of 8 elements dividing K) fits "
             "the block, rotation and macro sizes";
    return failure();
  }
  const int64_t chunk = *chosen;

  const int64_t numChunks = spec.rows * spec.cols / chunk;
  int64_t blockDim = options.elementwiseThreads;
  // Few chunks: smaller CTAs spread them over more SMs.
  if (numChunks < kSMs * blockDim)
    blockDim = std::clamp<int64_t>(
        llvm::alignTo(llvm::divideCeilSigned(numChunks, kSMs), kWarp), 64,
        blockDim);
  int64_t macroLanes =
      info->kind == SchemeInfo::Macro ? lanesOf(chunk, info->macro) : 1;
  if (macroLanes > kWarp)
    blockDim = macroLanes * std::max<int64_t>(1, blockDim / macroLanes);
  // The tile four_over_six path keeps 16 f64 errors per thread in shared
  // memory; stay within the 48 KB of static shared memory.
  bool tileSearch = info->tile2d && info->fourOverSix;
  if (tileSearch)
    blockDim = std::min<int64_t>(blockDim, 256);
  if (blockDim % kWarp != 0 || blockDim > kMaxCTAThreads) {
    reason = "the macro block needs more threads than a CTA has";
    return failure();
  }

  KernelPlan plan;
  SmallVector<KernelArg> args(spec.args);
  std::string variant = "quantize_" + info->name;
  if (info->fourOverSix)
    variant += "_4over6";
  if (info->tile2d)
    variant += "_tile2d";
  if (d)
    variant += "_hadamard" + std::to_string(d);

  KernelArg amaxScratch{"scratch.amax",
                        MemRefType::get({1}, builder.getI32Type()),
                        /*readOnly=*/false};
  if (info->kind == SchemeInfo::NV) {
    FailureOr<KernelLaunch> amax =
        buildAmaxKernel(builder, loc, module, (name + "_amax").str(), spec,
                        amaxScratch, options.elementwiseThreads, reason);
    if (failed(amax))
      return failure();
    plan.scratch.push_back(amaxScratch);
    plan.launches.push_back(*amax);
    // The quantize kernel only reads it (and may use the read-only path).
    KernelArg readOnly = amaxScratch;
    readOnly.readOnly = true;
    args.insert(args.begin() + 1, readOnly);
  }

  KernelLaunch launch;
  launch.block = {blockDim, 1, 1};
  launch.grid = {llvm::divideCeilSigned(numChunks, blockDim), 1, 1};
  launch.variant = variant;
  for (const KernelArg &a : args)
    launch.argNames.push_back(a.name);
  launch.func =
      createKernelShell(builder, loc, module, name, args, launch.block);

  OpBuilder::InsertionGuard guard(builder);
  Block &body = launch.func.getBody().front();
  builder.setInsertionPoint(body.getTerminator());
  OpBuilder &b = builder;
  QuantizeEmitter q(b, loc, spec, chunk);
  ArithOps &ops = q.ops;
  // Copies: adding a workgroup attribution appends a block argument and may
  // move the argument storage.
  SmallVector<Value> fargs(body.getArguments());
  Value input = fargs[0];
  Value amaxArg = info->kind == SchemeInfo::NV ? fargs[1] : Value();
  SmallVector<Value> outs(
      ArrayRef(fargs).drop_front(info->kind == SchemeInfo::NV ? 2 : 1));
  Value codesOut = outs[0];

  Value gid = emitGlobalThreadId(b, loc, blockDim);
  ChunkCoords c;
  if (info->tile2d) {
    // Chunk g: tile row t = g / (16 nK), block kb = (g / 16) mod nK, line
    // r = g mod 16, so the 16 lanes of a tile hold its 16 lines.
    int64_t nK = spec.cols / kTile;
    int64_t numTiles = spec.rows * spec.cols / kTile;
    c.valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gid,
                                    indexConst(b, loc, numTiles));
    c.chunk =
        arith::MinUIOp::create(b, loc, gid, indexConst(b, loc, numTiles - 1));
    Value line =
        arith::RemUIOp::create(b, loc, c.chunk, indexConst(b, loc, kTile));
    Value rest =
        arith::DivUIOp::create(b, loc, c.chunk, indexConst(b, loc, kTile));
    Value kb = arith::RemUIOp::create(b, loc, rest, indexConst(b, loc, nK));
    Value tileRow =
        arith::DivUIOp::create(b, loc, rest, indexConst(b, loc, nK));
    c.row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, tileRow, indexConst(b, loc, kTile)),
        line);
    c.col = arith::MulIOp::create(b, loc, kb, indexConst(b, loc, kTile));
    c.tid =
        gpu::ThreadIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  } else {
    c = emitFlatChunkCoords(b, loc, gid, spec.rows, spec.cols, chunk);
  }

  SmallVector<Value> x = q.loadChunk(input, c.row, c.col, c.tid);
  bool stochastic = info->mode == numerics::ElementRounding::Stochastic;
  Value base = stochastic ? q.linearBase(c.row, c.col) : Value();
  auto bitsAt = [&](int64_t j) {
    return stochastic ? q.randomBits(info->seed, base, j) : ops.i32(0);
  };
  SmallVector<Value> codes(chunk);

  switch (info->kind) {
  case SchemeInfo::MX: {
    // MXFP4Lowering: scale = mxScaleByte(block amax), code =
    // mxfp4ElementCode(x, e8m0QuantizeFactor(scale)).
    int64_t bs = info->block;
    int64_t run = std::min(bs, chunk);
    SmallVector<Value> amax = q.blockAbsMaxBits(x, bs);
    SmallVector<Value> bytes;
    for (size_t s = 0; s < amax.size(); ++s) {
      Value byte =
          numerics::mxScaleByte(ops, ops.bitcastToF32(amax[s]), info->rule);
      bytes.push_back(byte);
      Value factor = numerics::e8m0QuantizeFactor(ops, byte);
      for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run); ++j)
        codes[j] = numerics::mxfp4ElementCode(ops, x[j], factor, info->mode,
                                              bitsAt(j));
    }
    emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
      storeCodes(b, loc, codes, codesOut, c.row, c.col);
      q.storeBlockBytes(bytes, outs[1], c.row, c.col, c.tid, bs);
    });
    break;
  }
  case SchemeInfo::NV: {
    // NVFP4Lowering, per tensor: g_enc, g_dec, k from the finite amax.
    Value tensorAmax = ops.bitcastToF32(memref::LoadOp::create(
        b, loc, amaxArg, ValueRange{indexConst(b, loc, 0)}));
    Value gEnc =
        numerics::nvfp4GlobalEncodeScale(ops, tensorAmax, info->fourOverSix);
    Value gDec = numerics::nvfp4GlobalDecodeScale(ops, gEnc);
    Value k = numerics::nvfp4BlockScaleFactor(ops, gEnc);
    // Stored first: keeping g_dec live across the block loop costs a spill.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, gid,
                                        indexConst(b, loc, 0));
    emitIf(b, loc, first, [&](OpBuilder &nb, Location l) {
      memref::StoreOp::create(nb, l, gDec, outs[2], ValueRange{});
    });
    int64_t run = std::min(info->block, chunk);
    SmallVector<Value> amax;
    if (info->tile2d) {
      // One line of the tile per lane: the tile max over 16 lanes.
      amax = q.runAbsMaxBits(x, kTile);
      amax[0] = groupReduce(b, loc, amax[0], kTile, q.maxBits());
    } else {
      amax = q.blockAbsMaxBits(x, info->block);
    }
    auto code = [&](Value xv, Value byte, Value rb) {
      Value enc = numerics::nvfp4EncodeFactor(ops, byte, gDec);
      return numerics::nvfp4ElementCode(ops, xv, enc, byte, info->mode, rb);
    };
    auto squaredError = [&](Value xv, Value byte, Value rb) {
      Value deq = numerics::nvfp4Dequant(ops, code(xv, byte, rb), byte, gDec);
      return numerics::squaredErrorF64(ops, xv, deq);
    };
    SmallVector<Value> bytes;
    for (size_t s = 0; s < amax.size(); ++s) {
      Value blockAmax = ops.bitcastToF32(amax[s]);
      Value byte = numerics::nvfp4BlockScaleByte(ops, blockAmax, k, false);
      if (info->fourOverSix) {
        Value byte4 = numerics::nvfp4BlockScaleByte(ops, blockAmax, k, true);
        Value lower;
        if (!info->tile2d) {
          // The block is this thread's run: both sums in element order.
          Value zero = ops.f64(0.0);
          Value sse6 = zero, sse4 = zero;
          for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run);
               ++j) {
            Value rb = bitsAt(j);
            sse6 = ops.addd(sse6, squaredError(x[j], byte, rb));
            sse4 = ops.addd(sse4, squaredError(x[j], byte4, rb));
          }
          lower = ops.cmpd(FPred::OLT, sse4, sse6);
        } else {
          Value smem = launch.func.addWorkgroupAttribution(
              MemRefType::get(
                  {blockDim * kTile}, b.getF64Type(), AffineMap(),
                  gpu::AddressSpaceAttr::get(b.getContext(),
                                             gpu::AddressSpace::Workgroup)),
              loc);
          SmallVector<SmallVector<Value>> errors(2);
          for (int64_t j = 0; j < kTile; ++j) {
            Value rb = bitsAt(j);
            errors[0].push_back(squaredError(x[j], byte, rb));
            errors[1].push_back(squaredError(x[j], byte4, rb));
          }
          lower = emitTileFourOverSixChoice(q, errors, smem, c.tid);
        }
        byte = ops.selecti(lower, byte4, byte);
      }
      bytes.push_back(byte);
      for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run); ++j)
        codes[j] = code(x[j], byte, bitsAt(j));
    }
    emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
      storeCodes(b, loc, codes, codesOut, c.row, c.col);
      // With tiles every line stores its copy of the tile's byte.
      q.storeBlockBytes(bytes, outs[1], c.row, c.col, c.tid,
                        info->tile2d ? chunk : info->block);
    });
    break;
  }
  case SchemeInfo::HiF4: {
    // HiF4Lowering: m4 per 4, m8 per 8, m64 per 64; byte, rec; level bits;
    // codes; the metadata word ORed from the group's lanes.
    int64_t lanes = lanesOf(chunk, info->block);
    Value pos = lanes > 1 ? q.lanePosition(c.tid, lanes) : ops.i32(0);
    SmallVector<Value> m4 = q.runAbsMaxBits(x, numerics::kHiF4Level3Size);
    SmallVector<Value> m8;
    for (size_t s = 0; s < m4.size(); s += 2)
      m8.push_back(numerics::maxAbsBits(ops, m4[s], m4[s + 1]));
    Value m64 = m8[0];
    for (size_t s = 1; s < m8.size(); ++s)
      m64 = numerics::maxAbsBits(ops, m64, m8[s]);
    m64 = groupReduce(b, loc, m64, lanes, q.maxBits());
    Value byte = numerics::hif4ScaleByte(ops, ops.bitcastToF32(m64));
    Value rec = numerics::hif4Reciprocal(ops, numerics::e6m2Decode(ops, byte));
    Value word = byte;
    int64_t eightsPerChunk = chunk / numerics::kHiF4Level2Size;
    for (int64_t s = 0; s < eightsPerChunk; ++s) {
      // 8-block i of the group: lane position * (E / 8) + s.
      Value i = ops.addi(ops.muli(pos, ops.i32(eightsPerChunk)), ops.i32(s));
      Value l2 = numerics::hif4Level2Bit(ops, ops.bitcastToF32(m8[s]), rec);
      word = ops.ori(word, ops.shli(l2, ops.addi(i, ops.i32(8))));
      for (int64_t h = 0; h < 2; ++h) {
        Value l3 = numerics::hif4Level3Bit(ops, ops.bitcastToF32(m4[2 * s + h]),
                                           rec, l2);
        Value jBit = ops.addi(ops.muli(i, ops.i32(2)), ops.i32(h));
        word = ops.ori(word, ops.shli(l3, ops.addi(jBit, ops.i32(16))));
        Value level = numerics::hif4LevelScale(ops, l2, l3);
        for (int64_t t = 0; t < numerics::kHiF4Level3Size; ++t) {
          int64_t j = 8 * s + 4 * h + t;
          codes[j] = numerics::hif4ElementCode(ops, x[j], rec, level);
        }
      }
    }
    word = groupReduce(b, loc, word, lanes,
                       [&](Value u, Value w) { return ops.ori(u, w); });
    emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
      storeCodes(b, loc, codes, codesOut, c.row, c.col);
      Value lead = ops.cmpi(IPred::EQ, pos, ops.i32(0));
      emitIf(b, loc, lead, [&](OpBuilder &, Location) {
        Value gcol = arith::DivUIOp::create(b, loc, c.col,
                                            indexConst(b, loc, info->block));
        memref::StoreOp::create(b, loc, word, outs[1], ValueRange{c.row, gcol});
      });
    });
    break;
  }
  case SchemeInfo::Macro: {
    // MXFP4MacroLowering (search = 0): m from the macro amax, y = x / m,
    // MXFP4 blocks of 32 on y, the factor stored as bf16.
    SmallVector<Value> runs = q.runAbsMaxBits(x, std::min(info->macro, chunk));
    SmallVector<Value> ms;
    if (info->macro >= chunk) {
      Value m = runs[0];
      if (macroLanes > kWarp) {
        Value smem = launch.func.addWorkgroupAttribution(
            MemRefType::get({blockDim / kWarp}, b.getI32Type(), AffineMap(),
                            gpu::AddressSpaceAttr::get(
                                b.getContext(), gpu::AddressSpace::Workgroup)),
            loc);
        m = ctaGroupReduce(b, loc, m, macroLanes, c.tid, smem, q.maxBits());
      } else {
        m = groupReduce(b, loc, m, macroLanes, q.maxBits());
      }
      ms.push_back(m);
    } else {
      ms = runs;
    }
    SmallVector<Value> factors;
    for (Value m : ms)
      factors.push_back(
          numerics::macroFactorFromAmax(ops, ops.bitcastToF32(m)));
    int64_t macroRun = std::min(info->macro, chunk);
    SmallVector<Value> y;
    for (int64_t j = 0; j < chunk; ++j)
      y.push_back(numerics::macroScaledInput(ops, x[j], factors[j / macroRun]));
    int64_t run = std::min(info->block, chunk);
    SmallVector<Value> amax = q.blockAbsMaxBits(y, info->block);
    SmallVector<Value> bytes;
    for (size_t s = 0; s < amax.size(); ++s) {
      Value byte =
          numerics::mxScaleByte(ops, ops.bitcastToF32(amax[s]), info->rule);
      bytes.push_back(byte);
      Value factor = numerics::e8m0QuantizeFactor(ops, byte);
      for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run); ++j)
        codes[j] = numerics::mxfp4ElementCode(ops, y[j], factor, info->mode,
                                              bitsAt(j));
    }
    emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
      storeCodes(b, loc, codes, codesOut, c.row, c.col);
      q.storeBlockBytes(bytes, outs[1], c.row, c.col, c.tid, info->block);
      // One bf16 factor per macro block.
      Value mcol = arith::DivUIOp::create(b, loc, c.col,
                                          indexConst(b, loc, info->macro));
      auto storeFactor = [&](Value m, Value col) {
        Value bits16 = arith::TruncIOp::create(
            b, loc, b.getI16Type(), numerics::bf16StorageBits(ops, m));
        memref::StoreOp::create(
            b, loc, arith::BitcastOp::create(b, loc, b.getBF16Type(), bits16),
            outs[2], ValueRange{c.row, col});
      };
      if (info->macro >= chunk) {
        Value lead = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(b, loc, c.tid,
                                   indexConst(b, loc, macroLanes)),
            indexConst(b, loc, 0));
        emitIf(b, loc, lead,
               [&](OpBuilder &, Location) { storeFactor(factors[0], mcol); });
      } else {
        for (auto [s, m] : llvm::enumerate(factors))
          storeFactor(m, s == 0 ? mcol
                                : arith::AddIOp::create(b, loc, mcol,
                                                        indexConst(b, loc, s))
                                      .getResult());
      }
    });
    break;
  }
  }
  plan.launches.push_back(launch);
  return plan;
}
