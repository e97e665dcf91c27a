//===- QuantizeKernel.cpp - activation quantizer --------------------------===//
//
// fp4.quantize of a [R, K] bf16/f16/f32 tensor along K, optionally after a
// fused block Hadamard rotation, bit-exact with the CPU lowering
// (convert-fp4-to-linalg) for MXFP4 (every scale rule and element rounding),
// NVFP4 (four_over_six, 16x16 tiles), HiF4 and macro-block MXFP4 (search = 0).
// This file is the format-independent part: the thread mapping, loads,
// rotation and launch plan. Each scheme's block algorithm (what the chunk
// must fit, then scales and codes on a thread's chunk) is its GPU model's
// planGPUQuantize / buildGPUQuantizeChunk (<Format>GPULowering.cpp,
// QuantizeChunk.h).
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

#include "QuantizeChunk.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/Hadamard.h"
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
/// SMs of the H200; a launch with fewer threads than kSMs * 256 cannot fill
/// the GPU, so it trades per-thread work for more threads and CTAs.
constexpr int64_t kSMs = 132;
constexpr int64_t kFewThreads = kSMs * 256;

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

using Group = GPUReductionGroup;

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


} // namespace

/// The block Hadamard rotation of Hadamard.h (hadamardTransformGroup) on
/// the chunk, the groups of d = rotationSize elements being d/E lanes or
/// E/d runs of the chunk.
void mlir::fp4::QuantizeEmitter::rotate(SmallVector<Value> &v, Value tid) {
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

void mlir::fp4::storeCodesAndBlockBytes(QuantizeChunkContext &ctx,
                                        ArrayRef<Value> codes,
                                        ArrayRef<Value> bytes,
                                        int64_t blockSize,
                                        function_ref<void()> more) {
  QuantizeEmitter &q = ctx.q;
  const ChunkCoords &c = ctx.coords;
  emitIf(q.b, q.loc, c.valid, [&](OpBuilder &, Location) {
    storeCodes(q.b, q.loc, codes, ctx.outputs[0], c.row, c.col);
    q.storeBlockBytes(bytes, ctx.outputs[1], c.row, c.col, c.tid, blockSize);
    if (more)
      more();
  });
}

FailureOr<KernelPlan> mlir::fp4::buildQuantizeKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const QuantizeKernelSpec &spec, const GPUTarget &target,
    GPUConfigAttr config, std::string &reason) {
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
  auto scheme = dyn_cast<SchemeGPULoweringAttrInterface>(type.getScheme());
  if (!scheme) {
    reason = "unsupported quantization scheme";
    return failure();
  }
  GPUQuantizePlan info;
  if (failed(scheme.planGPUQuantize(spec, info, reason)))
    return failure();

  // The chunk: the smallest that fits the rotation and the scheme's groups
  // (NVFP4 tiles: exactly one 16-element line).
  SmallVector<Group> groups;
  if (d)
    groups.push_back({d});
  llvm::append_range(groups, info.groups);
  std::optional<int64_t> chosen =
      chooseChunk(spec.rows, spec.cols, groups, info.minChunk);
  if (!chosen || (info.exactChunk && *chosen != info.exactChunk) ||
      (info.maxChunk && *chosen > info.maxChunk)) {
    reason = "no thread chunk (a multiple of 8 elements dividing K) fits "
             "the block, rotation and macro sizes";
    return failure();
  }
  const int64_t chunk = *chosen;

  const int64_t numChunks = spec.rows * spec.cols / chunk;
  int64_t blockDim = config.getThreads();
  // Few chunks: smaller CTAs spread them over more SMs.
  if (numChunks < kSMs * blockDim)
    blockDim = std::clamp<int64_t>(
        llvm::alignTo(llvm::divideCeilSigned(numChunks, kSMs), kWarp), 64,
        blockDim);
  int64_t ctaGroupLanes =
      info.ctaGroupSize ? lanesOf(chunk, info.ctaGroupSize) : 1;
  if (ctaGroupLanes > kWarp)
    blockDim = ctaGroupLanes * std::max<int64_t>(1, blockDim / ctaGroupLanes);
  if (info.maxBlockDim)
    blockDim = std::min<int64_t>(blockDim, info.maxBlockDim);
  if (blockDim % kWarp != 0 || blockDim > kMaxCTAThreads) {
    reason = "the macro block needs more threads than a CTA has";
    return failure();
  }

  KernelPlan plan;
  SmallVector<KernelArg> args(spec.args);
  std::string variant = "quantize_" + info.variant;
  if (d)
    variant += "_hadamard" + std::to_string(d);

  KernelArg amaxScratch{"scratch.amax",
                        MemRefType::get({1}, builder.getI32Type()),
                        /*readOnly=*/false};
  if (info.needsTensorAmax) {
    FailureOr<KernelLaunch> amax =
        buildAmaxKernel(builder, loc, module, (name + "_amax").str(), spec,
                        amaxScratch, config.getThreads(), reason);
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
  Value amaxArg = info.needsTensorAmax ? fargs[1] : Value();
  SmallVector<Value> outs(
      ArrayRef(fargs).drop_front(info.needsTensorAmax ? 2 : 1));

  Value gid = emitGlobalThreadId(b, loc, blockDim);
  ChunkCoords c;
  if (info.tileLines) {
    // Chunk g: tile row t = g / (16 nK), block kb = (g / 16) mod nK, line
    // r = g mod 16, so the 16 lanes of a tile hold its 16 lines.
    const int64_t tile = chunk;
    int64_t nK = spec.cols / tile;
    int64_t numTiles = spec.rows * spec.cols / tile;
    c.valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gid,
                                    indexConst(b, loc, numTiles));
    c.chunk =
        arith::MinUIOp::create(b, loc, gid, indexConst(b, loc, numTiles - 1));
    Value line =
        arith::RemUIOp::create(b, loc, c.chunk, indexConst(b, loc, tile));
    Value rest =
        arith::DivUIOp::create(b, loc, c.chunk, indexConst(b, loc, tile));
    Value kb = arith::RemUIOp::create(b, loc, rest, indexConst(b, loc, nK));
    Value tileRow =
        arith::DivUIOp::create(b, loc, rest, indexConst(b, loc, nK));
    c.row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, tileRow, indexConst(b, loc, tile)),
        line);
    c.col = arith::MulIOp::create(b, loc, kb, indexConst(b, loc, tile));
    c.tid =
        gpu::ThreadIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  } else {
    c = emitFlatChunkCoords(b, loc, gid, spec.rows, spec.cols, chunk);
  }

  SmallVector<Value> x = q.loadChunk(input, c.row, c.col, c.tid);
  bool stochastic = info.rounding == numerics::ElementRounding::Stochastic;
  Value base = stochastic ? q.linearBase(c.row, c.col) : Value();
  auto bitsAt = [&](int64_t j) {
    return stochastic ? q.randomBits(info.seed, base, j) : ops.i32(0);
  };
  QuantizeChunkContext context{q,       launch.func, blockDim, info,
                               gid,     c,           x,        bitsAt,
                               amaxArg, outs,        ctaGroupLanes};
  scheme.buildGPUQuantizeChunk(context);
  plan.launches.push_back(launch);
  return plan;
}
