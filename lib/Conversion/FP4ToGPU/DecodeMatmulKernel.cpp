//===- DecodeMatmulKernel.cpp - memory-bound matmul for decode shapes -----===//
//
// C[M, N] = A[M, K] * W[N, K]^T for M <= 16 (decode), W quantized along K,
// A bf16 (W4A16) or quantized along K (W4A4, emulated). The time is the
// weight read: at HBM speed every SM must consume about 30 weight elements
// per clock, about 4 thread instructions per element. A CUDA-core GEMV
// spends about 6 (toolchain.md), so the multiply-add goes to the tensor
// cores even at M = 1: dequantized weight pairs are the A operand of
// mma.sync m16n8k16 bf16 (16 weight rows = mma M), activation rows the B
// operand (mma N = 8; two n-tiles when M > 8; columns >= M are computed on
// a clamped row and never stored, so they cost nothing extra).
//
// Layout. A warp owns 16 weight rows (rows g and g + 8 for lane
// (g = lane / 4, tig = lane % 4)); K is cut into chunks of 128 and lane tig
// takes the 32-element unit tig of each chunk: 16 contiguous code bytes per
// row, one ld.global.nc.v4 (each warp load instruction reads 8 rows x 64
// contiguous bytes). The sum over K is permutation-invariant, so the unit's
// 32 K indices may go to the mma K slots in any order as long as the
// activation fragment uses the same one: step s (0..7) of a chunk takes code
// word v = s / 2 of the unit and its pairs 2(s % 2) and 2(s % 2) + 1
// (BF16PairDequant.h), K slots {2tig, 2tig+1} and {2tig+8, 2tig+9} of the
// PTX fragment layout. The activation side loads the same 32 K indices of
// row g (64 bytes, 4 x v4, L1/L2 resident) and builds the same pairs with
// one prmt each (W4A4: the same code-pair construction as the weights).
//
// Scales. MXFP4 / macro E8M0 blocks: two exact bf16x2 multiplies per pair,
// 2^126 and then 2^(byte - 127), so that every byte, including 0 (2^-127)
// and 0xFF (NaN), gives the reference value or its overflow to inf (a single
// factor 2^(byte - 1) does not exist in bf16 above byte 128, and a warp-vote
// fast path made LLVM hoist the pair construction of both paths above the
// branch: 205 registers instead of 66). NVFP4: one multiply by 2^118 * e4m3
// (always exact; values carry 2^-8, and the tensor scale and 2^8 are
// applied to the f32 sum at the end). Macro factors (not exact in bf16
// times an FP4 value) scale a chunk's f32 partial sum, so the macro block
// must be a multiple of 128 (or the whole row).
//
// Warps of a CTA split K (iteration j of warp w handles chunk group
// j * warps + w, `unroll` chunks with all loads issued first); partial sums
// meet in shared memory at the end. The main loop is software pipelined
// (`prefetch` = decode-prefetch): the weight words and scale bytes of the
// group `prefetch` iterations ahead are loaded at the top of an iteration
// and carried in iter_args, so a lane waits on loads issued one iteration
// earlier instead of a full memory latency per iteration. K tail: the last partial chunk zeroes
// the units beyond K (codes and activations, benign scales). N tail: rows
// are clamped for loads and not stored.
//
// Instructions per lane and chunk (64 weight elements, M <= 8, MXFP4, PTX):
// 56 shifts, 64 and, 32 or, 64 bf16x2 multiplies, 16 prmt, 8 mma, 6 v4 and
// 2 byte loads: about 3.9 per weight element (3.4 once ptxas fuses and/or
// into LOP3), about 2.1 of them on the integer ALU pipe.
//
//===----------------------------------------------------------------------===//

#include "BF16PairDequant.h"
#include "CorrectionOperandReader.h"
#include "ElementwiseKernel.h"
#include "FragmentDequant.h"
#include "TransposedSum.h"
#include "SparseWeightEntries.h"
#include "WarpgroupMMA.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// K elements per chunk (4 lanes x 32) and per lane unit.
constexpr int64_t kChunk = 128;
constexpr int64_t kUnit = 32;
/// mma k16 steps per chunk (a unit is 16 pairs, 2 per step and row).
constexpr int64_t kStepsPerChunk = 8;

/// What the kernel reads of a quantized operand (weights, or the W4A4 lhs):
/// its scheme's bf16 fragment form (FragmentDequant.h).
struct QuantOperand {
  std::optional<BF16FragmentDequant> dequant;
  /// Elements per scale byte.
  int64_t blockSize = 32;
  /// Elements per bf16 macro factor (0: no factors).
  int64_t macroBlock = 0;
  bool hasTensorScale = false;
  /// The component memrefs (kernel arguments).
  Value codes, scales, extra;

  int64_t numComponents() const {
    return 2 + ((macroBlock != 0 || hasTensorScale) ? 1 : 0);
  }
  /// The fragments hold value * 2^-fragmentShift.
  int64_t fragmentShift() const { return dequant->exponentOffset(); }
  /// Scale bytes per 32-element unit, and the one code word v belongs to.
  int64_t scalesPerUnit() const { return blockSize == 16 ? 2 : 1; }
  int64_t scaleSlot(int64_t word) const {
    return blockSize == 16 ? word / 2 : 0;
  }
  /// The scale byte of a unit lane that lies beyond K: value 1.
  int64_t benignScaleByte() const {
    return dequant->getForm().unitScaleByte;
  }
};

FailureOr<QuantOperand> describeOperand(QuantizedTensorType type, int64_t k,
                                        StringRef role, std::string &reason) {
  QuantOperand q;
  std::string why;
  q.dequant = BF16FragmentDequant::get(type, why);
  if (!q.dequant) {
    reason = (role + ": " + why).str();
    return failure();
  }
  q.blockSize = q.dequant->getBlockSize();
  q.hasTensorScale = q.dequant->hasTensorScale();
  if (q.dequant->hasMacroFactors()) {
    q.macroBlock = q.dequant->getMacroSpan(k);
    if (q.macroBlock % kChunk != 0 && q.macroBlock != k) {
      reason = (role + ": macro blocks of " + Twine(q.macroBlock) +
                " elements split a 128-element chunk (the decode kernel "
                "applies macro factors per chunk; need a multiple of 128)")
                   .str();
      return failure();
    }
  }
  if (q.blockSize != 16 && q.blockSize % kUnit != 0) {
    reason = (role + ": scale blocks of " + Twine(q.blockSize) +
              " elements (the decode kernel needs 16 or a multiple of 32)")
                 .str();
    return failure();
  }
  return q;
}

/// Launch shape of one decode kernel.
struct DecodeConfig {
  int64_t m = 0, n = 0, k = 0;
  /// Activation n-tiles of 8 rows (1 or 2).
  int64_t nTiles = 1;
  /// 16-row weight tiles per warp (1; the emitter loops are general).
  int64_t rowTiles = 1;
  /// Chunks per main-loop iteration.
  int64_t unroll = 2;
  /// Warps per CTA: `rowWarps` groups of 16 * rowTiles weight rows (they
  /// share the activation slice, which L1 then serves once per CTA), each of
  /// `kWarps` warps splitting K.
  int64_t warps = 4;
  int64_t rowWarps = 1;
  int64_t kWarps = 4;
  /// CTAs splitting K (split-K): > 1 adds f32 partial sums atomically into a
  /// scratch buffer, which a second kernel rounds into the result.
  int64_t splitK = 1;
  /// Main-loop iterations whose weight words are loaded ahead (0: none).
  int64_t prefetch = 1;
  /// The warp-group form (mma = wgmma): each K warp is `rowWarps / 4` warp
  /// groups of 4 row warps (64 weight rows each) sharing one activation
  /// slot, warp = kWarp * rowWarps + row warp.
  bool wgmma = false;
  /// Its weight-tile form (MatmulKernelSpec::WeightEntries): the group's
  /// dequantized weights go to a shared 64-row tile, the weight entries
  /// over their elements, and wgmma reads both operands from shared memory.
  bool weightTile = false;
  /// Its register form with weight entries (WeightEntries::inRegisters):
  /// each lane replaces the entries' elements in its own dequantized A
  /// fragments before the register-A wgmma; no tile.
  bool entryPatch = false;
  /// Its sparse form (WeightEntries::sparse): the entries go to the sparse
  /// tensor cores as a second, 2:4-sparse A operand against a zero-padded
  /// copy of the staged activations (stageActivations,
  /// computeChunksWgmma); no patch, no tile.
  bool entrySparse = false;

  int64_t fullChunks() const { return k / kChunk; }
  int64_t fullGroups() const { return fullChunks() / unroll; }
  bool hasPartialChunk() const { return k % kChunk != 0; }
  int64_t rowsPerCTA() const { return 16 * rowTiles * rowWarps; }
  int64_t numRowCTAs() const { return llvm::divideCeil(n, rowsPerCTA()); }
  int64_t numCTAs() const { return numRowCTAs() * splitK; }
  /// Main-loop groups per split-K slice.
  int64_t groupsPerSplit() const {
    return llvm::divideCeil(fullGroups(), splitK);
  }
  /// f32 partial sums per lane: 4 per (row tile, n-tile).
  int64_t sumsPerLane() const { return 4 * rowTiles * nTiles; }
  /// The warp-group form: the wgmma N (activation rows, padded to 8), the
  /// bf16 elements of one 128-byte-swizzle atom of the staged activations
  /// (N rows x 64 K slots) and of one K warp's slot (2 atoms per chunk).
  int64_t wgmmaN() const { return 8 * nTiles; }
  /// The threads of one K warp (all its row warps) in the warp-group form.
  int64_t groupThreads() const { return 32 * rowWarps; }
  int64_t atomElements() const { return wgmmaN() * 64; }
  int64_t slotElements() const { return 2 * unroll * atomElements(); }
  /// The sparse form's padded activations: every pair (a, b) of a chunk as
  /// the group (0, a, b, 0), 256 logical K slots per chunk, 4 atoms.
  int64_t sparseSlotElements() const { return 4 * unroll * atomElements(); }
  /// The weight-tile form: bf16 elements of one atom of the K warp's
  /// weight rows (16 per row warp) x 64 K slots, and of one K warp's tile
  /// (2 atoms per chunk).
  int64_t tileAtomElements() const { return rowsPerCTA() * 64; }
  int64_t tileElements() const { return 2 * unroll * tileAtomElements(); }
};

/// The weight entries of the weight-tile form (MatmulKernelSpec::
/// WeightEntries): bf16 values and i8 indices [N, K / blockSize, entries].
struct TileEntries {
  int64_t blockSize = 0, entries = 0;
  Value values, indices;
  /// Entries of one weight row in a lane's 32-element unit: one block's
  /// (a block of 32 or more holds the unit), or two blocks' (16).
  int64_t perUnit() const { return blockSize == 16 ? 2 * entries : entries; }
  /// The sparse form (SparseWeightEntries.h): `values` the packed A
  /// registers [row blocks][chunks][32 lanes][2] i32, `indices` the
  /// metadata [row blocks][chunks][32 lanes][4] i32; per weight row of a
  /// lane, one packed value and two metadata words (row g: words 0, 1).
  bool sparse = false;
  /// The patch's packed form (SparseWeightEntries.h, packPatchWeightEntries):
  /// `values` as the sparse form's, `indices` the keys [..][..][32 lanes][1]
  /// i32; per weight row of a lane one packed value and the lane's key word
  /// (both rows carry the same word: bytes 0, 1 for row g, 2, 3 for g + 8).
  bool packed = false;
  int64_t valuesPerRow() const { return sparse || packed ? 1 : perUnit(); }
  int64_t indicesPerRow() const {
    return sparse ? 2 : packed ? 1 : perUnit();
  }
};

/// The fused correction chain's epilogue (MatmulKernelSpec::Epilogue) as
/// the kernel reads it.
struct FusedEpilogue {
  MatmulKernelSpec::Epilogue spec;
  /// Result rows (M / rowGroups).
  int64_t rows = 0;
  /// Activation sum [K, rows] f32, outlier values and indices, acc.
  Value summedT, outlierValues, outlierIndices, acc;
  /// The activation sum copied into shared memory ([K * rows] f32).
  Value staged;
  /// The tail form's copy of the CTA's outlier entries in dynamic shared
  /// memory (0: the tail reads them from global memory): values
  /// [CTA rows, entries per row], then indices of the same shape.
  int64_t entryBytes = 0;
  Value entryValues, entryIndices;

  bool hasOutliers() const { return spec.outlierEntries > 0; }
  /// The outliers' product inside the main loop, or in its tail phase.
  bool outliersInLoop() const { return hasOutliers() && !spec.outlierTail; }
  bool outliersInTail() const { return hasOutliers() && spec.outlierTail; }
  /// Outlier entries of one weight row ([blocks x entries]).
  int64_t entriesPerRow(int64_t k) const {
    return k / spec.outlierBlockSize * spec.outlierEntries;
  }
  /// Outlier entries of one weight row in a lane's 32-element unit: one
  /// block's (a block of 32 or more holds the unit), or two blocks' (16).
  int64_t entriesPerUnit() const {
    return spec.outlierBlockSize == 16 ? 2 * spec.outlierEntries
                                       : spec.outlierEntries;
  }
};

// The fused epilogue stages the activation sum in shared memory, up to
// kDecodeEpilogueMaxSumBytes (K * M f32: 16 KB at K = 4096, M = 1). The
// outlier entries' columns are random within a unit: from L1 a warp's
// gather costs about one wavefront per distinct line, from shared memory
// about one bank-conflict round (measured during development on
// 2026-12-03, logs not kept: gathering from L1 32.7 us for the full recipe
// at 1 x 14336 x 4096, staged 31.7 us, staged with 64 rows per CTA 27.9;
// the kept form measures 27.8 us in docs/perf/gpu_all_2026-12-04_final.txt).
// Larger sums are the epilogue kernel's (its slot or sliced form).

/// The loads of one chunk, per lane.
struct ChunkLoads {
  Value chunk;
  /// First K index of this lane's unit (clamped in a masked chunk), and
  /// whether the unit lies within K (null: an unmasked chunk).
  Value unitK0, unitValid;
  /// [rowTile * 2 + half] -> 4 code words; half 0 is row g, 1 row g + 8.
  SmallVector<SmallVector<Value, 4>> weightWords;
  /// [rowTile * 2 + half] -> scale bytes (i32) of the unit.
  SmallVector<SmallVector<Value, 2>> weightScales;
  /// [rowTile * 2 + half] -> macro factor (f32), when the weight has them.
  SmallVector<Value> weightMacro;
  /// [rowTile * 2 + half] -> the unit's weight-outlier values (f32, 0 in
  /// a unit beyond K) and raw i8 indices (fused epilogue); in the
  /// weight-tile form its weight entries (bf16 as they are, i8 indices).
  SmallVector<SmallVector<Value, 8>> outlierValues, outlierIndices;
  /// [nTile] -> 16 bf16 words (W4A16) or 4 code words (W4A4).
  SmallVector<SmallVector<Value, 16>> actWords;
  /// [nTile] -> scale bytes (W4A4).
  SmallVector<SmallVector<Value, 2>> actScales;
  /// [nTile * 2 + column] -> macro factor (f32) of the C columns 2tig and
  /// 2tig + 1 of the n-tile, when the lhs has them.
  SmallVector<Value> actMacro;
};

class DecodeKernelEmitter {
public:
  DecodeKernelEmitter(OpBuilder &b, Location loc, const DecodeConfig &cfg,
                      QuantOperand weight, std::optional<QuantOperand> lhsQ,
                      Value lhs, Value result,
                      std::optional<FusedEpilogue> epi = std::nullopt,
                      std::optional<TileEntries> entries = std::nullopt)
      : b(b), loc(loc), cfg(cfg), weight(weight), lhsQ(lhsQ), lhs(lhs),
        result(result), epi(epi), entries(entries) {}

  void emit(gpu::GPUFuncOp func);

private:
  // Constants and index arithmetic.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  Value f32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, idx(y)); }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, idx(y)); }
  Value div(Value x, int64_t y) {
    return y == 1 ? x : arith::DivUIOp::create(b, loc, x, idx(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, idx(y));
  }
  Value minIdx(Value x, int64_t y) {
    return arith::MinUIOp::create(b, loc, x, idx(y));
  }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }

  // Loads.
  SmallVector<Value, 4> loadCodeWords(Value codes, Value row, Value k0,
                                      Value valid);
  SmallVector<Value, 4> loadBF16Words(Value row, Value k0, Value valid);
  /// 16 bytes of `memref` from `at` as four i32 words (one 16-byte load),
  /// zeros where `valid` (if given) is false.
  SmallVector<Value, 4> loadWords16(Value memref, ValueRange at, Value valid);
  SmallVector<Value, 2> loadScaleBytes(const QuantOperand &q, Value row,
                                       Value k0, Value valid);
  Value loadMacroFactor(const QuantOperand &q, Value row, Value chunk);
  void loadOutlierEntries(ChunkLoads &loads, Value row, Value k0,
                          Value valid);
  ChunkLoads loadChunk(Value chunk, bool masked);
  void loadWeightChunk(ChunkLoads &loads, Value chunk, bool masked);
  void loadActChunk(ChunkLoads &loads, Value chunk, bool masked);
  /// Unit start and validity of this lane in `chunk`.
  std::pair<Value, Value> unitStart(Value chunk, bool masked);
  /// The weight part of a chunk as a flat value list (loop-carried) and
  /// back.
  SmallVector<Value> flattenWeights(const ChunkLoads &loads) const;
  ChunkLoads unflattenWeights(Value chunk, ValueRange flat) const;
  int64_t numFlatWeightValues() const;
  SmallVector<Value> emitPipelinedLoop(Value start, Value end,
                                       ValueRange acc);

  // Compute.
  SmallVector<SmallVector<Value, 2>> factors(const QuantOperand &q,
                                             ArrayRef<Value> bytes);
  Value dequantPair(Value word, int64_t pair, ArrayRef<Value> factor);
  SmallVector<Value> computeChunks(ArrayRef<ChunkLoads> loads, ValueRange acc);
  /// The warp-group form: the group's activation rows into this K warp's
  /// slot of shared memory, in the K order of the weight fragments
  /// (stageActivations), then one wgmma per k16 step with the dequantized
  /// weights as the register A operand (computeChunksWgmma).
  void stageActivations(Value firstChunk, int64_t count, bool masked,
                        ArrayRef<ChunkLoads> weightChunks,
                        ValueRange loadedWords = {});
  /// The words stageActivations converts (this thread's pieces of the
  /// group's activation rows, numActivationWords(count) of them), loaded
  /// ahead by the pipelined loop.
  /// The sparse form's k32 step s within its atom's rows: byte 0 or 64,
  /// alternating with s / 2 as well as s, so that the staging threads of
  /// one pair index (their steps 2 w + c, w their code word) store into
  /// both halves of a row: 2 shared wavefronts per warp store, where
  /// 64 (s % 2) gave 8 (the interpreter's bank model,
  /// test_gpu_interp_shared_stats.py).
  static int64_t sparseStepByte(int64_t s) {
    return 64 * ((s % 2) ^ ((s / 2) % 2));
  }
  /// What thread t of a K warp group stages (loadActivationWords,
  /// stageActivations): word `word` of unit `unitTig` of (row, chunk)
  /// pieces j = row * count + chunk, j = `first` + (threads / 16) i. By
  /// default t % 4, (t % 16) / 4 and t / 16: 16 consecutive threads read
  /// 256 consecutive bytes of a row. The sparse form's 8-byte stores of
  /// the padded slot reach each row only at the 8 groups of one pair
  /// parity in the two halves of its step positions (sparseStepByte), so
  /// a half-warp (one wavefront phase of 64-bit stores) must hold 2 rows
  /// and only words of one half to store 16 distinct 8-byte slots: lane
  /// bit 0 is word % 2, bits 1-2 the unit, bit 3 the row of the warp's
  /// pair, bit 4 word / 2 (a half-warp reads 4 x 32 bytes of each of its
  /// rows), and the warp's two rows are the same chunk of rows 2 apart
  /// (bit 0 of the piece index swapped with the bit of 2 count: rows 1
  /// apart XOR into the same chunk pair under the 128-byte swizzle). Then
  /// a warp store of the padded slot takes 2 wavefronts, the minimum,
  /// where the default lanes took 8 (the interpreter's bank model).
  std::tuple<Value, Value, Value> stagingLane(Value t, int64_t count) {
    const int64_t perRound = cfg.groupThreads() / 16, stride = 2 * count;
    if (!cfg.entrySparse || !llvm::isPowerOf2_64(count) ||
        perRound % (2 * stride) != 0)
      return {div(rem(t, 16), 4), rem(t, 4), div(t, 16)};
    Value lane = rem(t, 32);
    Value word = add(rem(lane, 2), mul(div(lane, 16), 2));
    Value unitTig = rem(div(lane, 2), 4);
    Value x = add(mul(div(t, 32), 2), rem(div(lane, 8), 2));
    // x = hi * 2 stride + bb * stride + mid * 2 + a -> a stride + mid 2 + bb.
    Value a = rem(x, 2), mid = rem(div(x, 2), count),
          bb = rem(div(x, stride), 2), hi = div(x, 2 * stride);
    Value first = add(add(mul(hi, 2 * stride), mul(a, stride)),
                      add(mul(mid, 2), bb));
    return {unitTig, word, first};
  }
  /// The sparse form: `pair` (row `row`, chunk `u` of the group, unit
  /// `unitTig`, k16 step `step`, A register half `half`) into the
  /// zero-padded slot as one 8-byte group.
  void storeSparsePair(Value pair, Value row, Value u, Value unitTig,
                       Value step, int64_t half);
  SmallVector<Value> loadActivationWords(Value firstChunk, int64_t count,
                                         bool masked);
  int64_t numActivationWords(int64_t count) const {
    return cfg.wgmmaN() * count / (cfg.groupThreads() / 16) * (lhsQ ? 2 : 4);
  }
  SmallVector<Value> computeChunksWgmma(ArrayRef<ChunkLoads> loads,
                                        ValueRange acc);
  /// The weight-tile form: the group's weights dequantized into this K
  /// warp group's tile, each weight entry over its element (between the
  /// group's barriers, in stageActivations), then one wgmma per k16 step
  /// with both operands in shared memory (computeChunksTile).
  void loadTileEntries(ChunkLoads &loads, Value row, Value k0, Value valid);
  /// The sparse form's packed values and metadata of `chunk` (per lane).
  void loadSparseEntries(ChunkLoads &loads, Value chunk);
  /// The patch's packed values and key word of `chunk` (per lane).
  void loadPackedEntries(ChunkLoads &loads, Value chunk);
  void storeWeightTile(ArrayRef<ChunkLoads> chunks);
  void storeTileEntries(const ChunkLoads &loads, int64_t half,
                        Value rowWord, Value lc);
  /// Entry e of the unit of weight row `half`: its element within the unit
  /// (i32) and whether the lane skips it (null: never).
  std::pair<Value, Value> entryColumn(const ChunkLoads &loads, int64_t half,
                                      int64_t e);
  /// The register patch: the entries of the lane's weight row `half`
  /// (ChunkLoads' row index) replace their elements in its 16 dequantized
  /// pairs of that row's unit (pairs[4 v + p]: pair p of code word v).
  void patchEntries(const ChunkLoads &loads, int64_t half,
                    MutableArrayRef<Value> pairs);
  /// The 16 dequantized pairs of weight row `row`'s unit (pairs[4 v + p]:
  /// pair p of code word v), patched where the form takes entries there.
  SmallVector<Value, 16> unitPairs(const ChunkLoads &loads, int64_t row,
                                   ArrayRef<SmallVector<Value, 2>> rowFactors);
  /// The weight-tile form's K order in a K-major 128-byte-swizzle buffer
  /// of `rows`-row atoms starting at i32 word `base`: word v of unit
  /// `unit` (0..3) of a chunk is its 16-byte chunk 4 unit + v, in atom
  /// pair `pair`. Returns (the first i32 word of `row` in the unit's atom,
  /// lc), so that the chunk of word v is at rowWord + 4 (lc ^ v); i32.
  std::pair<Value, Value> tileRow(Value base, Value row, Value unit,
                                  Value pair, int64_t rows);
  /// The index of word v's 16-byte chunk (i32 words), v an i32.
  Value tileChunk(Value rowWord, Value lc, Value v);
  SmallVector<Value> computeChunksTile(int64_t count, ValueRange acc);
  /// The accumulator of m64nNk16 is, per warp, the mma.sync C fragments of
  /// the N / 8 column tiles (WarpgroupMMA.h): parity 0 of row tile 0 of
  /// `acc`, as the wgmma struct and back.
  Value packWgmmaAcc(ArrayRef<Value> acc);
  void unpackWgmmaAcc(Value d, MutableArrayRef<Value> acc);
  /// The shared-window address (i64) of dynamic shared byte `byte` +
  /// `offset`.
  Value sharedAddress(Value byte, int64_t offset);
  /// bar.sync of this K warp's warp groups (barrier 1 + K warp, 128
  /// threads per warp group): the K warps run different trip counts.
  void warpGroupBarrier();
  /// The warp-group form with weight outliers: cp.async of the group's
  /// slice of the activation sum into this K warp group's slice buffer.
  void stageSumSlice(Value firstChunk, int64_t count);
  /// The warp index of row warp `rowWarp`'s K warp `k` (both forms).
  Value warpOf(Value rowWarp, int64_t k);
  SmallVector<Value> emitGroup(ValueRange acc, Value firstChunk, int64_t count,
                               bool masked);
  void addOutlierProducts(const ChunkLoads &loads, MutableArrayRef<Value> out);
  /// The staged-sum column of a weight-outlier entry of block `block` with
  /// raw i8 index `rawIndex`.
  Value outlierColumn(Value block, Value rawIndex);
  /// sums[m] += value * staged activation sum[column, m], m < rows.
  void addStagedProducts(Value value, Value column,
                         MutableArrayRef<Value> sums);
  /// The tail form (FusedEpilogue::outliersInLoop false): the gathers of
  /// its outlier phase (emitOutlierPhase), the weight outliers' product of
  /// the CTA's rows into `outlierStage` ([rows][CTA rows] f32) for the
  /// final pass.
  void emitOutlierTail();
  Value outlierStage;
  /// The tail form's outlier phase alternates between neighboring CTAs:
  /// odd CTAs (`tailFirst`) run it before their main loop, even ones after
  /// it. All of a wave's CTAs run the same phases at the same time, so
  /// with the phase after every main loop the weight stream stops while
  /// the SMs gather (about 200 instructions a thread, after the last
  /// weight load); alternating keeps half the CTAs streaming through
  /// either phase. (The tail form is the mma.sync form's: setUpDecode
  /// clears outlierTail on the warp-group form.)
  bool alternateTail() const { return epi && epi->outliersInTail(); }
  Value tailFirst;
  /// The outlier phase proper: its copies awaited (every thread, then a
  /// barrier: a CTA-uniform branch), the gathers into outlierStage.
  void emitOutlierPhase();
  /// outlierStage, where every use is dominated (before either branch).
  void allocateOutlierStage();

  // Epilogue.
  Value finalScale();
  void storeResult(Value value, Value sumIndex, Value sumLane);
  /// The (weight row, activation row) of sum `sumIndex` of lane `sumLane`.
  std::pair<Value, Value> sumPosition(Value sumIndex, Value sumLane);
  // Fused epilogue: the outlier sums into the C sums, a lane's finished sum
  // into the CTA's [M][rows] stage, and the pass over the stage.
  void addOutlierSums(MutableArrayRef<Value> sums, ArrayRef<Value> out);
  void stageSum(Value stage, Value value, Value sumIndex, Value sumLane);
  void emitFinalPass(Value stage, Value tid);
  /// Copies the activation sum into shared memory (once, by every thread,
  /// then a barrier), after the main loop's first weight loads are issued
  /// so that the copy's latency overlaps theirs. The tail form, which reads
  /// the sum only in its outlier phase, issues it as cp.async (before the
  /// main loop) and waits in emitOutlierPhase.
  void stageActivationSum();
  /// With FusedEpilogue::entryBytes: cp.async of the CTA's outlier entries
  /// into dynamic shared memory, in the sum's group.
  void prefetchOutlierEntries();
  bool sumStaged = false, sumInFlight = false;
  /// A shared buffer of `type`: a workgroup attribution, or, once the
  /// kernel copies outlier entries (FusedEpilogue::entryBytes), a 16-byte
  /// aligned view of dynamic shared memory. A kernel's shared memory is all
  /// one or all the other: the NVVM lowering declares dynamic shared memory
  /// as a zero-size .shared variable (not .extern), which is only the
  /// dynamic region where no static variable precedes it.
  Value sharedBuffer(MemRefType type, int64_t alignment = 16);
  bool allDynamicShared() const {
    return cfg.wgmma || (epi && epi->entryBytes > 0);
  }
  gpu::GPUFuncOp kernel;
  Value dynamicShared;
  /// The warp-group form's activation slots ([K warps][slotElements()]
  /// bf16 as i32 pairs, at dynamic shared offset 0) and the shared-window
  /// address of dynamic shared memory.
  Value actSlots, sharedBase;
  /// The weight-tile form's tiles ([K warps][tileElements()] as i32 pairs,
  /// and the same bytes as bf16 for the entries) at dynamic shared offset
  /// `tileOffset` (1024-byte aligned).
  Value weightTiles, weightTilesBF16;
  int64_t tileOffset = 0;
  /// The sparse form's zero-padded activation slots ([K warps]
  /// [sparseSlotElements()] as i32 pairs) at dynamic shared offset
  /// `sparseOffset` (1024-byte aligned), and the warp's row block of the
  /// packed entries (clamped).
  Value sparseSlots, sparseRowBlock;
  int64_t sparseOffset = 0;
  /// The warp-group form with weight outliers: each K warp group stages
  /// the slice of the [K, rows] f32 activation sum its group of chunks
  /// covers (sliceElements() at epi->staged + K warp * sliceElements());
  /// addStagedProducts reads it relative to sliceK0, the slice's first K.
  int64_t sliceElements() const { return cfg.unroll * kChunk * epi->rows; }
  Value sliceK0;

public:
  /// Dynamic shared memory the kernel uses (bytes; 0 without entries).
  int64_t dynamicBytes = 0;

private:
  Value tid;

  /// Accumulator index: [rowTile][nTile][parity][element].
  int64_t accIndex(int64_t rt, int64_t nt, int64_t parity, int64_t e) const {
    return ((rt * cfg.nTiles + nt) * 2 + parity) * 4 + e;
  }
  int64_t numAcc() const { return cfg.rowTiles * cfg.nTiles * 2 * 4; }
  /// Weight-outlier sums per lane: [rowTile * 2 + half][result row].
  int64_t numOutlierAcc() const {
    return epi && epi->outliersInLoop() ? 2 * cfg.rowTiles * epi->rows : 0;
  }
  bool hasMacro() const {
    return weight.macroBlock != 0 || (lhsQ && lhsQ->macroBlock != 0);
  }

  OpBuilder &b;
  Location loc;
  DecodeConfig cfg;
  QuantOperand weight;
  std::optional<QuantOperand> lhsQ;
  Value lhs, result;
  std::optional<FusedEpilogue> epi;
  std::optional<TileEntries> entries;

  Value lane, warp, kWarp, rowWarp, split, g, tig, rowBase, rowCTA;
  /// Clamped weight rows [rowTile * 2 + half] and activation rows [nTile].
  SmallVector<Value> weightRows, actRows;
  /// Clamped activation rows of the C columns 2tig + c: [nTile * 2 + c].
  SmallVector<Value> columnRows;
};

SmallVector<Value, 4> DecodeKernelEmitter::loadCodeWords(Value codes, Value row,
                                                         Value k0,
                                                         Value valid) {
  return loadWords16(codes, ValueRange{row, div(k0, 2)}, valid);
}

SmallVector<Value, 4> DecodeKernelEmitter::loadWords16(Value memref,
                                                       ValueRange at,
                                                       Value valid) {
  // A 16-byte vector of the memref's elements at 16-byte alignment,
  // bitcast right away: NVPTX emits one ld.global(.nc).v4.b32
  // (toolchain.md).
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  Value values = vector::LoadOp::create(
      b, loc, VectorType::get({128 / element.getIntOrFloatBitWidth()}, element),
      memref, at, /*nontemporal=*/false, llvm::MaybeAlign(16));
  Value words = vector::BitCastOp::create(
      b, loc, VectorType::get({4}, b.getI32Type()), values);
  SmallVector<Value, 4> out;
  for (int64_t i = 0; i < 4; ++i) {
    Value w = vector::ExtractOp::create(b, loc, words, i);
    out.push_back(valid ? select(valid, w, i32(0)) : w);
  }
  return out;
}

SmallVector<Value, 4> DecodeKernelEmitter::loadBF16Words(Value row, Value k0,
                                                         Value valid) {
  SmallVector<Value, 4> out;
  for (int64_t v = 0; v < 4; ++v)
    llvm::append_range(out, loadWords16(lhs, ValueRange{row, add(k0, 8 * v)}, valid));
  return out;
}

SmallVector<Value, 2> DecodeKernelEmitter::loadScaleBytes(const QuantOperand &q,
                                                          Value row, Value k0,
                                                          Value valid) {
  SmallVector<Value, 2> out;
  Value block = div(k0, q.blockSize);
  for (int64_t s = 0; s < q.scalesPerUnit(); ++s) {
    Value byte = memref::LoadOp::create(b, loc, q.scales,
                                        ValueRange{row, add(block, s)});
    Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
    out.push_back(valid ? select(valid, wide, i32(q.benignScaleByte())) : wide);
  }
  return out;
}

Value DecodeKernelEmitter::loadMacroFactor(const QuantOperand &q, Value row,
                                           Value chunk) {
  Value macro = div(mul(chunk, kChunk), q.macroBlock);
  Value factor =
      memref::LoadOp::create(b, loc, q.extra, ValueRange{row, macro});
  return arith::ExtFOp::create(b, loc, b.getF32Type(), factor);
}

std::pair<Value, Value> DecodeKernelEmitter::unitStart(Value chunk,
                                                      bool masked) {
  // First K index of this lane's unit; a unit beyond K (partial chunk only)
  // reads unit 0 and is zeroed.
  Value k0 = add(mul(chunk, kChunk), mul(tig, kUnit));
  Value valid;
  if (masked) {
    valid = ult(k0, idx(cfg.k));
    k0 = select(valid, k0, idx(0));
  }
  return {k0, valid};
}

void DecodeKernelEmitter::loadWeightChunk(ChunkLoads &loads, Value chunk,
                                          bool masked) {
  auto [k0, valid] = unitStart(chunk, masked);
  loads.unitK0 = k0;
  loads.unitValid = valid;
  for (Value row : weightRows) {
    loads.weightWords.push_back(loadCodeWords(weight.codes, row, k0, valid));
    loads.weightScales.push_back(loadScaleBytes(weight, row, k0, valid));
    if (weight.macroBlock)
      loads.weightMacro.push_back(loadMacroFactor(weight, row, chunk));
    if (epi && epi->outliersInLoop())
      loadOutlierEntries(loads, row, k0, valid);
    if (entries && !entries->sparse && !entries->packed)
      loadTileEntries(loads, row, k0, valid);
  }
  if (entries && entries->sparse)
    loadSparseEntries(loads, chunk);
  if (entries && entries->packed)
    loadPackedEntries(loads, chunk);
}

void DecodeKernelEmitter::loadPackedEntries(ChunkLoads &loads, Value chunk) {
  // This lane's packed values (rows g, g + 8) and key word of the chunk: 8 +
  // 4 contiguous bytes per lane, a warp's 384 bytes in two coalesced loads
  // (packPatchWeightEntries), where the stored arrays take 4 loads of 2-4
  // bytes from 8 rows each. Chunks past K hold no entries (keys 16).
  auto vals = loadElements(b, loc, entries->values,
                           ValueRange{sparseRowBlock, chunk, lane, idx(0)}, 2);
  auto keys = loadElements(b, loc, entries->indices,
                           ValueRange{sparseRowBlock, chunk, lane, idx(0)}, 1);
  for (int64_t half = 0; half < 2; ++half) {
    loads.outlierValues.push_back({vals[half]});
    loads.outlierIndices.push_back({keys[0]});
  }
}

void DecodeKernelEmitter::loadSparseEntries(ChunkLoads &loads, Value chunk) {
  // This lane's packed A registers (rows g, g + 8) and metadata words of
  // the chunk: 8 + 16 contiguous bytes per lane, a warp's 768 bytes
  // coalesced (SparseWeightEntries.h). Chunks past K hold no entries.
  auto vals = loadElements(b, loc, entries->values,
                           ValueRange{sparseRowBlock, chunk, lane, idx(0)}, 2);
  auto meta = loadElements(b, loc, entries->indices,
                           ValueRange{sparseRowBlock, chunk, lane, idx(0)}, 4);
  for (int64_t half = 0; half < 2; ++half) {
    loads.outlierValues.push_back({vals[half]});
    loads.outlierIndices.push_back({meta[2 * half], meta[2 * half + 1]});
  }
}

void DecodeKernelEmitter::loadTileEntries(ChunkLoads &loads, Value row,
                                          Value k0, Value) {
  // As loadOutlierEntries, but the values stay bf16: they go into the bf16
  // tile as they are. A unit beyond K loads block 0's (k0 is clamped) and
  // stores none of them (storeTileEntries).
  Value block = div(k0, entries->blockSize);
  auto load = [&](Value memref) {
    return SmallVector<Value, 8>(loadElements(
        b, loc, memref, ValueRange{row, block, idx(0)}, entries->perUnit()));
  };
  loads.outlierValues.push_back(load(entries->values));
  loads.outlierIndices.push_back(load(entries->indices));
}

void DecodeKernelEmitter::loadOutlierEntries(ChunkLoads &loads, Value row,
                                             Value k0, Value valid) {
  // The unit's entries are contiguous in [N, blocks, entries] (one block,
  // or the unit's two blocks of 16), so a lane reads them with one vector
  // load per memref; the quad of a row reads 4 consecutive units' entries.
  int64_t count = epi->entriesPerUnit();
  Value block = div(k0, epi->spec.outlierBlockSize);
  auto load = [&](Value memref) {
    return SmallVector<Value, 8>(
        loadElements(b, loc, memref, ValueRange{row, block, idx(0)}, count));
  };
  SmallVector<Value, 8> values = load(epi->outlierValues);
  for (Value &v : values) {
    if (!v.getType().isF32())
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    if (valid)
      v = select(valid, v, f32(0.0f));
  }
  loads.outlierValues.push_back(values);
  loads.outlierIndices.push_back(load(epi->outlierIndices));
}

void DecodeKernelEmitter::loadActChunk(ChunkLoads &loads, Value chunk,
                                       bool masked) {
  auto [k0, valid] = unitStart(chunk, masked);
  for (Value row : actRows) {
    if (!lhsQ) {
      loads.actWords.push_back(loadBF16Words(row, k0, valid));
      continue;
    }
    SmallVector<Value, 4> words = loadCodeWords(lhsQ->codes, row, k0, valid);
    loads.actWords.push_back(
        SmallVector<Value, 16>(words.begin(), words.end()));
    loads.actScales.push_back(loadScaleBytes(*lhsQ, row, k0, valid));
  }
  if (lhsQ && lhsQ->macroBlock)
    for (Value row : columnRows)
      loads.actMacro.push_back(loadMacroFactor(*lhsQ, row, chunk));
}

ChunkLoads DecodeKernelEmitter::loadChunk(Value chunk, bool masked) {
  ChunkLoads loads;
  loads.chunk = chunk;
  loadWeightChunk(loads, chunk, masked);
  loadActChunk(loads, chunk, masked);
  return loads;
}

int64_t DecodeKernelEmitter::numFlatWeightValues() const {
  int64_t perRow = 4 + weight.scalesPerUnit() + (weight.macroBlock ? 1 : 0);
  if (epi && epi->outliersInLoop())
    perRow += 2 * epi->entriesPerUnit();
  if (entries)
    perRow += entries->valuesPerRow() + entries->indicesPerRow();
  return static_cast<int64_t>(weightRows.size()) * perRow;
}

SmallVector<Value>
DecodeKernelEmitter::flattenWeights(const ChunkLoads &loads) const {
  SmallVector<Value> flat;
  for (size_t r = 0; r < weightRows.size(); ++r) {
    llvm::append_range(flat, loads.weightWords[r]);
    llvm::append_range(flat, loads.weightScales[r]);
    if (weight.macroBlock)
      flat.push_back(loads.weightMacro[r]);
    if ((epi && epi->outliersInLoop()) || entries) {
      llvm::append_range(flat, loads.outlierValues[r]);
      llvm::append_range(flat, loads.outlierIndices[r]);
    }
  }
  return flat;
}

ChunkLoads DecodeKernelEmitter::unflattenWeights(Value chunk,
                                                 ValueRange flat) const {
  ChunkLoads loads;
  loads.chunk = chunk;
  size_t pos = 0;
  for (size_t r = 0; r < weightRows.size(); ++r) {
    loads.weightWords.emplace_back(flat.begin() + pos,
                                   flat.begin() + pos + 4);
    pos += 4;
    int64_t scales = weight.scalesPerUnit();
    loads.weightScales.emplace_back(flat.begin() + pos,
                                    flat.begin() + pos + scales);
    pos += scales;
    if (weight.macroBlock)
      loads.weightMacro.push_back(flat[pos++]);
    if ((epi && epi->outliersInLoop()) || entries) {
      int64_t count = entries ? entries->valuesPerRow() : epi->entriesPerUnit();
      loads.outlierValues.emplace_back(flat.begin() + pos,
                                       flat.begin() + pos + count);
      pos += count;
      count = entries ? entries->indicesPerRow() : epi->entriesPerUnit();
      loads.outlierIndices.emplace_back(flat.begin() + pos,
                                        flat.begin() + pos + count);
      pos += count;
    }
  }
  assert(static_cast<int64_t>(pos) == numFlatWeightValues());
  return loads;
}

SmallVector<SmallVector<Value, 2>>
DecodeKernelEmitter::factors(const QuantOperand &q, ArrayRef<Value> bytes) {
  // The general (exact for every byte) form of the scheme: E8M0: 2^126
  // then 2^(byte - 127), two multiplies (one factor 2^(byte - 1) would
  // overflow bf16 above byte 128). E4M3: one multiply by 2^118 * e4m3.
  SmallVector<SmallVector<Value, 2>> out;
  float restore = q.dequant->getForm().restoreFactor;
  for (Value byte : bytes) {
    if (restore == 0.0f)
      out.push_back({q.dequant->emitMultiplier(b, loc, byte)});
    else
      out.push_back({buildBF16x2Constant(b, loc, restore),
                     q.dequant->emitMultiplier(b, loc, byte)});
  }
  return out;
}

Value DecodeKernelEmitter::dequantPair(Value word, int64_t pair,
                                       ArrayRef<Value> factor) {
  Value v = buildE2M1PairBits(b, loc, word, pair);
  for (Value f : factor)
    v = buildMulBF16x2(b, loc, v, f);
  return v;
}

SmallVector<Value>
DecodeKernelEmitter::computeChunks(ArrayRef<ChunkLoads> chunks,
                                   ValueRange accIn) {
  // The weight-outlier sums follow the mma accumulators (fused epilogue).
  SmallVector<Value> acc(accIn.begin(), accIn.begin() + numAcc());
  SmallVector<Value> outlierAcc(accIn.begin() + numAcc(), accIn.end());
  for (const ChunkLoads &loads : chunks) {
    if (!outlierAcc.empty())
      addOutlierProducts(loads, outlierAcc);
    // Factors per weight row and activation row of this chunk.
    SmallVector<SmallVector<SmallVector<Value, 2>>> wf, af;
    for (const auto &bytes : loads.weightScales)
      wf.push_back(factors(weight, bytes));
    for (const auto &bytes : loads.actScales)
      af.push_back(factors(*lhsQ, bytes));

    // With macro factors the chunk accumulates from zero and is scaled
    // into `acc` afterwards.
    SmallVector<Value> chain = acc;
    if (hasMacro())
      for (Value &v : chain)
        v = f32(0.0f);

    // The register patch: every weight row's 16 dequantized pairs first,
    // the entries over their elements, then the steps take them.
    SmallVector<SmallVector<Value, 16>> patched;
    if (cfg.entryPatch)
      for (int64_t row = 0, e = loads.weightWords.size(); row < e; ++row)
        patched.push_back(unitPairs(loads, row, wf[row]));

    for (int64_t s = 0; s < kStepsPerChunk; ++s) {
      int64_t word = s / 2, p0 = 2 * (s % 2), p1 = p0 + 1, parity = s % 2;
      SmallVector<SmallVector<Value, 2>> bFrags;
      for (int64_t nt = 0; nt < cfg.nTiles; ++nt) {
        if (!lhsQ) {
          ValueRange words =
              ArrayRef<Value>(loads.actWords[nt]).slice(4 * word, 4);
          bFrags.push_back({buildBF16PairFromWords(b, loc, words, p0),
                            buildBF16PairFromWords(b, loc, words, p1)});
        } else {
          Value w = loads.actWords[nt][word];
          ArrayRef<Value> f = af[nt][lhsQ->scaleSlot(word)];
          bFrags.push_back({dequantPair(w, p0, f), dequantPair(w, p1, f)});
        }
      }
      for (int64_t rt = 0; rt < cfg.rowTiles; ++rt) {
        Value wordG = loads.weightWords[2 * rt][word];
        Value wordG8 = loads.weightWords[2 * rt + 1][word];
        ArrayRef<Value> fG = wf[2 * rt][weight.scaleSlot(word)];
        ArrayRef<Value> fG8 = wf[2 * rt + 1][weight.scaleSlot(word)];
        // A fragment: {row g, k 2tig..}, {row g+8, k 2tig..},
        // {row g, k 2tig+8..}, {row g+8, k 2tig+8..}.
        SmallVector<Value, 4> aFrag;
        if (cfg.entryPatch) {
          int64_t q0 = 4 * word + p0, q1 = 4 * word + p1;
          aFrag = {patched[2 * rt][q0], patched[2 * rt + 1][q0],
                   patched[2 * rt][q1], patched[2 * rt + 1][q1]};
        } else {
          aFrag = {dequantPair(wordG, p0, fG), dequantPair(wordG8, p0, fG8),
                   dequantPair(wordG, p1, fG), dequantPair(wordG8, p1, fG8)};
        }
        for (int64_t nt = 0; nt < cfg.nTiles; ++nt) {
          SmallVector<Value, 4> c;
          for (int64_t e = 0; e < 4; ++e)
            c.push_back(chain[accIndex(rt, nt, parity, e)]);
          SmallVector<Value, 4> d = buildMmaBF16(b, loc, aFrag, bFrags[nt], c);
          for (int64_t e = 0; e < 4; ++e)
            chain[accIndex(rt, nt, parity, e)] = d[e];
        }
      }
    }

    if (!hasMacro()) {
      acc = chain;
      continue;
    }
    // acc += (both parities) * weight factor(row) * lhs factor(column).
    for (int64_t rt = 0; rt < cfg.rowTiles; ++rt)
      for (int64_t nt = 0; nt < cfg.nTiles; ++nt)
        for (int64_t e = 0; e < 4; ++e) {
          Value sum =
              arith::AddFOp::create(b, loc, chain[accIndex(rt, nt, 0, e)],
                                    chain[accIndex(rt, nt, 1, e)]);
          Value factor;
          if (weight.macroBlock)
            factor = loads.weightMacro[2 * rt + e / 2];
          if (lhsQ && lhsQ->macroBlock) {
            Value column = loads.actMacro[2 * nt + e % 2];
            factor =
                factor
                    ? arith::MulFOp::create(b, loc, factor, column).getResult()
                    : column;
          }
          Value &target = acc[accIndex(rt, nt, 0, e)];
          target = arith::AddFOp::create(
              b, loc, target, arith::MulFOp::create(b, loc, sum, factor));
        }
  }
  llvm::append_range(acc, outlierAcc);
  return acc;
}

void DecodeKernelEmitter::stageActivationSum() {
  // The warp-group form stages slices per group (stageActivations).
  if (sumStaged || !epi || !epi->staged || cfg.wgmma)
    return;
  sumStaged = true;
  // 16-byte pieces of the flat [K * rows] sum, one per thread and round.
  const int64_t pieces = cfg.k * epi->rows / 4, threads = 32 * cfg.warps;
  // [K, rows] or lane-banked [C, 32, rows]: the copy is of the bytes.
  Value flat = flattenMemref(b, loc, epi->summedT);
  auto v4 = VectorType::get({4}, b.getF32Type());
  // The tail form needs the sum only after the main loop: cp.async (16
  // bytes, L2 only) lets the weight stream start at once (the synchronous
  // copy in front of it cost about 4 us at 1 x 14336 x 4096). Measured
  // alone, without the entry copy, that tail is still 0.4 us slower than
  // the loop form (docs/Performance.md, "Session 14").
  sumInFlight = epi->outliersInTail();
  for (int64_t it = 0; it * threads < pieces; ++it) {
    Value piece = add(tid, it * threads);
    auto copy = [&](Value i) {
      Value at = mul(i, 4);
      if (sumInFlight) {
        nvgpu::DeviceAsyncCopyOp::create(
            b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()),
            epi->staged, ValueRange{at}, flat, ValueRange{at},
            b.getIndexAttr(4), /*srcElements=*/Value(),
            /*bypassL1=*/b.getUnitAttr());
        return;
      }
      Value v = vector::LoadOp::create(b, loc, v4, flat, ValueRange{at},
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(16));
      vector::StoreOp::create(b, loc, v, epi->staged, ValueRange{at},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    };
    if ((it + 1) * threads <= pieces) {
      copy(piece);
      continue;
    }
    Value inRange = ult(piece, idx(pieces));
    Value clamped = minIdx(piece, pieces - 1);
    emitIf(b, loc, inRange, [&](OpBuilder &, Location) { copy(clamped); });
  }
  if (sumInFlight) {
    if (epi->entryBytes > 0)
      prefetchOutlierEntries();
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    return;
  }
  gpu::BarrierOp::create(b, loc);
}

void DecodeKernelEmitter::prefetchOutlierEntries() {
  // The CTA's rows of [N, entries per row] values and indices are one
  // contiguous run each (rows past N: the last piece again, never read).
  // Entries per row are a multiple of 16 (planOutlierTail), so every
  // 16-byte piece of both runs is aligned.
  const int64_t perCTA = cfg.rowsPerCTA();
  const int64_t perRow = epi->entriesPerRow(cfg.k);
  Type valueType = epi->spec.outlierValuesType;
  const int64_t valueBytes = valueType.getIntOrFloatBitWidth() / 8;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // [CTA rows, entries per row] for the tail; the copy goes through flat
  // views of the same bytes.
  auto buffer = [&](Type elt, Value &rows) {
    rows = sharedBuffer(MemRefType::get({perCTA, perRow}, elt,
                                        MemRefLayoutAttrInterface(), workgroup));
    auto view = rows.getDefiningOp<memref::ViewOp>();
    return memref::ViewOp::create(
        b, loc,
        MemRefType::get({perCTA * perRow}, elt, MemRefLayoutAttrInterface(),
                        workgroup),
        view.getSource(), view.getByteShift(), ValueRange{});
  };
  Value flatValues = buffer(valueType, epi->entryValues);
  Value flatIndices = buffer(b.getI8Type(), epi->entryIndices);
  const int64_t threads = 32 * cfg.warps;
  auto copyRun = [&](Value src, Value to, int64_t elementBytes) {
    const int64_t piece = 16 / elementBytes;
    const int64_t total = cfg.n * perRow, count = perCTA * perRow / piece;
    Value from = flattenMemref(b, loc, src);
    Value base = mul(mul(rowCTA, perCTA), perRow);
    for (int64_t it = 0; it * threads < count; ++it) {
      Value i = add(tid, it * threads);
      auto copy = [&](Value i) {
        Value at = mul(i, piece);
        Value srcAt = minIdx(add(base, at), total - piece);
        nvgpu::DeviceAsyncCopyOp::create(
            b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), to,
            ValueRange{at}, from, ValueRange{srcAt}, b.getIndexAttr(piece),
            /*srcElements=*/Value(), /*bypassL1=*/b.getUnitAttr());
      };
      if ((it + 1) * threads <= count) {
        copy(i);
        continue;
      }
      emitIf(b, loc, ult(i, idx(count)),
             [&](OpBuilder &, Location) { copy(minIdx(i, count - 1)); });
    }
  };
  copyRun(epi->outlierValues, flatValues, valueBytes);
  copyRun(epi->outlierIndices, flatIndices, 1);
}

Value DecodeKernelEmitter::sharedBuffer(MemRefType type, int64_t alignment) {
  if (!allDynamicShared())
    return kernel.addWorkgroupAttribution(type, loc);
  auto workgroup = type.getMemorySpace();
  if (!dynamicShared) {
    // At the kernel's entry, so that it dominates every view.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&kernel.getBody().front());
    dynamicShared = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
  }
  const int64_t offset = llvm::alignTo(dynamicBytes, alignment);
  dynamicBytes = offset + type.getNumElements() *
                              type.getElementTypeBitWidth() / 8;
  return memref::ViewOp::create(b, loc, type, dynamicShared, idx(offset),
                                ValueRange{});
}

Value DecodeKernelEmitter::outlierColumn(Value block, Value rawIndex) {
  // An index is < the block size by the op's contract; clamping keeps a
  // corrupt one inside the staged sum (a wrong product, never a stray
  // shared-memory read).
  CorrectionOperand operand;
  operand.blockSize = epi->spec.outlierBlockSize;
  operand.k = epi->spec.outlierEntries;
  CorrectionOperandReader reader{operand, ValueRange{}};
  Value index = minIdx(
      arith::IndexCastUIOp::create(b, loc, b.getIndexType(), rawIndex),
      operand.blockSize - 1);
  return reader.column(b, loc, block, index);
}

void DecodeKernelEmitter::addStagedProducts(Value value, Value column,
                                            MutableArrayRef<Value> sums) {
  // The staged sum's row `column` ([K][rows] f32) in vectors of up to 4
  // consecutive m at 16-byte alignment.
  const int64_t rows = epi->rows;
  const int64_t piece = naturalAlignment(rows * 4) / 4;
  auto type = VectorType::get({piece}, b.getF32Type());
  Value at = mul(column, rows);
  if (const int64_t c = epi->spec.sumBankColumns) {
    // Lane-banked (TransposedSum.h): the tail's lane l reads only columns
    // [l C, (l + 1) C) (its entries are whole blocks, the index clamped
    // within its block), at word ((column - l C) * 32 + l) * rows.
    Value local = arith::SubIOp::create(b, loc, column, mul(lane, c));
    at = mul(add(mul(local, 32), lane), rows);
  }
  if (sliceK0) {
    // A column outside the group's slice belongs to an entry whose value
    // is 0 here (a unit beyond K, or a block wider than the unit): any
    // slice column does.
    const int64_t cols = cfg.unroll * kChunk;
    Value inSlice = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, column,
                              sliceK0),
        ult(column, add(sliceK0, cols)));
    Value local = select(
        inSlice, arith::SubIOp::create(b, loc, column, sliceK0), idx(0));
    at = add(mul(kWarp, sliceElements()), mul(local, rows));
  }
  for (int64_t m0 = 0; m0 < rows; m0 += piece) {
    Value v = vector::LoadOp::create(
        b, loc, type, epi->staged, ValueRange{add(at, m0)},
        /*nontemporal=*/false, llvm::MaybeAlign(piece * 4));
    for (int64_t i = 0; i < piece; ++i) {
      Value x = vector::ExtractOp::create(b, loc, v, i);
      sums[m0 + i] = arith::AddFOp::create(
          b, loc, sums[m0 + i], arith::MulFOp::create(b, loc, value, x));
    }
  }
}

void DecodeKernelEmitter::addOutlierProducts(const ChunkLoads &loads,
                                             MutableArrayRef<Value> out) {
  // out[r][m] += value * activation sum[column, m] for the unit's entries of
  // weight row r: the entries' columns are random within the unit, read
  // from the staged sum ([K * rows] f32 in shared memory). The outliers
  // carry their own values (no scale), so these sums join the C sums after
  // the fragment scale (addOutlierSums).
  const int64_t bs = epi->spec.outlierBlockSize;
  const int64_t perBlock = epi->spec.outlierEntries;
  const int64_t rows = epi->rows;
  Value firstBlock = div(loads.unitK0, bs);
  Value unitEnd = add(loads.unitK0, kUnit);
  for (size_t r = 0; r < loads.outlierValues.size(); ++r)
    for (int64_t j = 0; j < epi->entriesPerUnit(); ++j) {
      Value value = loads.outlierValues[r][j];
      Value column = outlierColumn(add(firstBlock, j / perBlock),
                                   loads.outlierIndices[r][j]);
      if (bs > kUnit) {
        // A block wider than the unit: only the unit holding the column
        // counts the entry.
        Value inUnit = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, column,
                                  loads.unitK0),
            ult(column, unitEnd));
        value = select(inUnit, value, f32(0.0f));
      }
      addStagedProducts(value, column, out.slice(r * rows, rows));
    }
}

void DecodeKernelEmitter::allocateOutlierStage() {
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  outlierStage = sharedBuffer(
      MemRefType::get({epi->rows * cfg.rowsPerCTA()}, b.getF32Type(),
                      MemRefLayoutAttrInterface(), workgroup));
}

void DecodeKernelEmitter::emitOutlierPhase() {
  // The copies were issued before either branch (stageActivationSum), so
  // both branches wait for them; this thread's cp.async groups are only
  // those copies.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);
  emitOutlierTail();
}

void DecodeKernelEmitter::emitOutlierTail() {
  // Warp w takes the CTA's rows w, w + warps, ...; lane l of a row the run
  // of entries l * per .. l * per + per - 1 of the row's [blocks x entries]
  // (contiguous in [N, blocks, entries]: vector loads of up to 8 entries
  // where the runs are whole, else one masked load per entry), each
  // gathered from the staged activation sum at its column; a butterfly over
  // the warp finishes the row's sum per result row, which lane 0 leaves in
  // the outlier stage. The loads of a batch of rows are issued before its
  // first gather.
  const int64_t perBlock = epi->spec.outlierEntries;
  const int64_t rows = epi->rows, perCTA = cfg.rowsPerCTA();
  const int64_t perRow = epi->entriesPerRow(cfg.k);
  const int64_t per = llvm::divideCeil(perRow, int64_t{32});
  const int64_t rowsPerWarp = llvm::divideCeil(perCTA, cfg.warps);
  // [N, blocks, entries] as [N, blocks * entries].
  auto flat = [&](Value memref) -> Value {
    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
    return memref::CollapseShapeOp::create(b, loc, memref, groups);
  };
  // The CTA's copy (rows relative to the CTA's first) or global memory.
  const bool copied = epi->entryBytes > 0;
  Value values = copied ? epi->entryValues : flat(epi->outlierValues);
  Value indices = copied ? epi->entryIndices : flat(epi->outlierIndices);
  // The common K = 4096, top-2 of 32 case: 8 entries per lane, 16 + 8
  // bytes.
  const int64_t piece = std::min<int64_t>(per, 8);
  const bool vectorRuns = perRow == 32 * per && per % piece == 0 &&
                          llvm::isPowerOf2_64(piece);
  // Rows whose loads are in flight together: at most 64 entries per lane
  // (a top-4 row of K = 4096 is 16), so that the registers stay near the
  // main loop's.
  const int64_t batch = std::max<int64_t>(1, 64 / per);
  Value first = mul(lane, per);

  struct RowLoads {
    Value local, ok;
    SmallVector<Value> values, indices;
    /// Per entry, whether it is in the row (masked loads only).
    SmallVector<Value> valid;
  };
  auto loadRow = [&](int64_t j) {
    RowLoads r;
    r.local = add(warp, j * cfg.warps);
    Value row = add(mul(rowCTA, perCTA), r.local);
    r.ok = arith::AndIOp::create(b, loc, ult(r.local, idx(perCTA)),
                                 ult(row, idx(cfg.n)));
    row = copied ? minIdx(r.local, perCTA - 1) : minIdx(row, cfg.n - 1);
    for (int64_t i = 0; i < per; i += vectorRuns ? piece : 1) {
      if (vectorRuns) {
        Value at[] = {row, add(first, i)};
        llvm::append_range(r.values, loadElements(b, loc, values, at, piece));
        llvm::append_range(r.indices,
                           loadElements(b, loc, indices, at, piece));
        continue;
      }
      Value e = add(first, i);
      r.valid.push_back(ult(e, idx(perRow)));
      Value at[] = {row, minIdx(e, perRow - 1)};
      r.values.push_back(memref::LoadOp::create(b, loc, values, at));
      r.indices.push_back(memref::LoadOp::create(b, loc, indices, at));
    }
    return r;
  };
  auto finishRow = [&](const RowLoads &r) {
    SmallVector<Value> sums(rows, f32(0.0f));
    for (int64_t i = 0; i < per; ++i) {
      Value value = r.values[i];
      if (!value.getType().isF32())
        value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      if (!r.valid.empty())
        value = select(r.valid[i], value, f32(0.0f));
      Value e = minIdx(add(first, i), perRow - 1);
      addStagedProducts(value, outlierColumn(div(e, perBlock), r.indices[i]),
                        sums);
    }
    for (Value &v : sums)
      for (int64_t offset : {16, 8, 4, 2, 1})
        v = arith::AddFOp::create(b, loc, v, shuffleXor(b, loc, v, offset));
    Value store = arith::AndIOp::create(
        b, loc, r.ok,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                              idx(0)));
    Value local = minIdx(r.local, perCTA - 1);
    emitIf(b, loc, store, [&](OpBuilder &, Location) {
      for (int64_t m = 0; m < rows; ++m)
        memref::StoreOp::create(b, loc, sums[m], outlierStage,
                                ValueRange{add(mul(idx(m), perCTA), local)});
    });
  };
  for (int64_t j0 = 0; j0 < rowsPerWarp; j0 += batch) {
    SmallVector<RowLoads> loads;
    for (int64_t j = j0; j < std::min(rowsPerWarp, j0 + batch); ++j)
      loads.push_back(loadRow(j));
    for (const RowLoads &r : loads)
      finishRow(r);
  }
}

SmallVector<Value> DecodeKernelEmitter::emitGroup(ValueRange acc,
                                                  Value firstChunk,
                                                  int64_t count, bool masked) {
  // All loads of the group first, so that each lane has count x 2 x 16
  // weight bytes in flight before its first conversion.
  SmallVector<ChunkLoads, 4> chunks;
  if (cfg.wgmma) {
    for (int64_t u = 0; u < count; ++u) {
      ChunkLoads loads;
      loads.chunk = add(firstChunk, u);
      loadWeightChunk(loads, loads.chunk, masked);
      chunks.push_back(std::move(loads));
    }
    stageActivations(firstChunk, count, masked, chunks);
    return cfg.weightTile ? computeChunksTile(count, acc)
                          : computeChunksWgmma(chunks, acc);
  }
  for (int64_t u = 0; u < count; ++u)
    chunks.push_back(loadChunk(add(firstChunk, u), masked));
  return computeChunks(chunks, acc);
}

Value DecodeKernelEmitter::warpOf(Value rowWarpIndex, int64_t k) {
  return cfg.wgmma ? add(rowWarpIndex, cfg.rowWarps * k)
                   : add(mul(rowWarpIndex, cfg.kWarps), k);
}

void DecodeKernelEmitter::warpGroupBarrier() {
  Value id = arith::IndexCastOp::create(b, loc, b.getI32Type(), add(kWarp, 1));
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32(cfg.groupThreads()),
                          NVVM::BarrierReductionAttr(), Value());
}

SmallVector<Value> DecodeKernelEmitter::loadActivationWords(Value firstChunk,
                                                           int64_t count,
                                                           bool masked) {
  // Thread t of the K warp takes word t % 4 of unit (t % 16) / 4 of
  // (row, chunk) j = t / 16 + (threads / 16) i, j = row * count + chunk
  // (stageActivations); 16 consecutive threads read 256 consecutive bytes
  // of a row.
  Value t = rem(tid, cfg.groupThreads());
  auto [unitTig, word, firstPiece] = stagingLane(t, count);
  const int64_t perRound = cfg.groupThreads() / 16;
  const int64_t pieces = cfg.wgmmaN() * count / perRound;
  SmallVector<Value> out;
  for (int64_t i = 0; i < pieces; ++i) {
    Value j = add(firstPiece, perRound * i);
    Value row = div(j, count), u = rem(j, count);
    // K % 32 == 0: a unit is within K or entirely beyond it.
    Value unitK0 = add(mul(add(firstChunk, u), kChunk), mul(unitTig, kUnit));
    Value valid;
    if (masked) {
      valid = ult(unitK0, idx(cfg.k));
      unitK0 = select(valid, unitK0, idx(0));
    }
    Value k0 = add(unitK0, mul(word, 8));
    Value srcRow = minIdx(row, cfg.m - 1);
    if (lhsQ) {
      // W4A4: the word's 8 codes (4 bytes) and its scale byte; the pairs
      // are the weights' (dequantPair), so the same K slots.
      Value bytes = vector::LoadOp::create(
          b, loc, VectorType::get({4}, b.getI8Type()), lhsQ->codes,
          ValueRange{srcRow, div(k0, 2)}, /*nontemporal=*/false,
          llvm::MaybeAlign(4));
      Value code = vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc,
                                    VectorType::get({1}, b.getI32Type()),
                                    bytes),
          0);
      out.push_back(valid ? select(valid, code, i32(0)) : code);
      SmallVector<Value, 2> scaleBytes =
          loadScaleBytes(*lhsQ, srcRow, unitK0, valid);
      // The scale of this word: slot word / 2 of a 16-element-block unit.
      Value byte = scaleBytes[0];
      if (scaleBytes.size() == 2)
        byte = select(ult(word, idx(2)), scaleBytes[0], scaleBytes[1]);
      out.push_back(byte);
      continue;
    }
    llvm::append_range(out, loadWords16(lhs, ValueRange{srcRow, k0}, valid));
  }
  return out;
}

void DecodeKernelEmitter::stageActivations(Value firstChunk, int64_t count,
                                           bool masked,
                                           ArrayRef<ChunkLoads> weightChunks,
                                           ValueRange loadedWords) {
  // Step s of a chunk multiplies, in K slots 2tig + h and 2tig + 8 + h of
  // lane tig's A fragment, the pairs p0 = 2(s % 2) and p0 + 1 of code word
  // v = s / 2 of the lane's unit tig, and pair p of a word is its elements
  // (p, p + 4) (computeChunks, BF16PairDequant.h). So B's K slots
  // 2tig + 8 half, + 1 of step s hold pair p = 2(s % 2) + half of the 8
  // activation elements 32 tig + 8 v .. + 7 of the chunk: one prmt of
  // their 16 bytes (buildBF16PairFromWords, as the mma.sync form builds
  // its B fragments) and one 4-byte shared store per pair. Each chunk is
  // two 128-byte-swizzle atoms [N][64 slots] (steps 0-3, 4-7; step s at
  // byte 32 (s % 4) of a row). A thread converts the same (unit, word) of
  // several (row, chunk): 16 consecutive threads read 256 consecutive
  // bytes of a row. Units beyond K are zeros (their weight codes are too,
  // and 0 x Inf would be NaN).
  //
  // The weight-tile form chooses its own K order, the same for both
  // operands (storeWeightTile): word v of unit tig is 16-byte chunk
  // j = 4 tig + v of the chunk's 128 K slots, its pairs p = 0..3 in order
  // (slot 2p + h holds element p + 4h), so a thread stores a word's four
  // pairs with one 16-byte store.
  const int64_t atom = cfg.atomElements() / 2; // i32 words
  Value t = rem(tid, cfg.groupThreads());
  auto [unitTig, word, firstPiece] = stagingLane(t, count);
  Value slot = mul(kWarp, cfg.slotElements() / 2);
  const int64_t perRound = cfg.groupThreads() / 16;
  const int64_t pieces = cfg.wgmmaN() * count / perRound;
  const int64_t perPiece = lhsQ ? 2 : 4;
  // All loads first (with the group's weight loads already in flight), or
  // the words the pipelined loop loaded a group ahead.
  SmallVector<Value> words(loadedWords.begin(), loadedWords.end());
  if (words.empty())
    words = loadActivationWords(firstChunk, count, masked);
  assert(static_cast<int64_t>(words.size()) == pieces * perPiece);
  SmallVector<std::pair<Value, SmallVector<Value, 4>>> loaded;
  for (int64_t i = 0; i < pieces; ++i)
    loaded.push_back({add(firstPiece, perRound * i),
                      SmallVector<Value, 4>(ArrayRef<Value>(words).slice(
                          i * perPiece, perPiece))});
  // The slot's previous contents: every warp of the group waited for its
  // wgmmas (and finished its outlier gathers) before this barrier.
  warpGroupBarrier();
  if (epi && epi->hasOutliers())
    stageSumSlice(firstChunk, count);
  if (cfg.weightTile)
    storeWeightTile(weightChunks);
  for (auto &[j, w] : loaded) {
    Value row = div(j, count), u = rem(j, count);
    SmallVector<Value, 2> factor;
    if (lhsQ)
      factor = factors(*lhsQ, {w[1]})[0];
    if (cfg.weightTile) {
      SmallVector<Value, 4> pairs;
      for (int64_t p = 0; p < 4; ++p)
        pairs.push_back(lhsQ ? dequantPair(w[0], p, factor)
                             : buildBF16PairFromWords(b, loc, w, p));
      // Chunk u of the group: atom pair u of the slot.
      auto [rowWord, lc] = tileRow(slot, row, unitTig, u, cfg.wgmmaN());
      vector::StoreOp::create(
          b, loc,
          vector::FromElementsOp::create(
              b, loc, VectorType::get({4}, b.getI32Type()), pairs),
          actSlots,
          ValueRange{tileChunk(
              rowWord, lc,
              arith::IndexCastUIOp::create(b, loc, b.getI32Type(), word))},
          /*nontemporal=*/false, llvm::MaybeAlign(16));
      continue;
    }
    for (int64_t p = 0; p < 4; ++p) {
      // step = 2 word + p / 2, in atom 2u + step / 4 at 16-byte chunk
      // 2 (step % 4) + p % 2 of its row, swizzled.
      Value step = add(mul(word, 2), p / 2);
      Value chunk16 = add(mul(rem(step, 4), 2), p % 2);
      Value swizzled = arith::XOrIOp::create(b, loc, chunk16, rem(row, 8));
      Value at = add(add(slot, mul(add(mul(u, 2), div(step, 4)), atom)),
                     add(add(mul(row, 32), mul(swizzled, 4)), unitTig));
      Value pair = lhsQ ? dequantPair(w[0], p, factor)
                        : buildBF16PairFromWords(b, loc, w, p);
      memref::StoreOp::create(b, loc, pair, actSlots, ValueRange{at});
      if (cfg.entrySparse)
        storeSparsePair(pair, row, u, unitTig, step, p % 2);
    }
  }
  if (epi && epi->hasOutliers())
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  // wgmma reads shared memory through the async proxy.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  warpGroupBarrier();
}

void DecodeKernelEmitter::storeSparsePair(Value pair, Value row, Value u,
                                          Value unitTig, Value step,
                                          int64_t half) {
  // The pair (a, b) that the dense B holds in K slots 2 tig + 8 half, + 1
  // of step `step` is group G = tig + 4 half of the padded B's k32 step
  // `step`, logical slots 4 G .. 4 G + 3 = (0, a, b, 0): the packed A's
  // groups are the dense A's pairs (computeChunksWgmma), so metadata
  // (1, 2) takes (a, b) and (0, 3) neither (SparseWeightEntries.h). Step
  // s is 64 bytes at byte sparseStepByte(s) of the rows of atom
  // 4 u + s / 2; the group's 8 bytes are 16-byte chunk
  // sparseStepByte(s) / 16 + G / 2, half G % 2, of its row, swizzled as
  // the dense atoms. One 8-byte store writes the zeros too.
  const int64_t atom = cfg.atomElements() / 2; // i32 words
  Value group = add(unitTig, 4 * half);
  Value stepHalf = arith::XOrIOp::create(b, loc, rem(step, 2),
                                         rem(div(step, 2), 2));
  Value chunk16 = add(mul(stepHalf, 4), div(group, 2));
  Value swizzled = arith::XOrIOp::create(b, loc, chunk16, rem(row, 8));
  Value at = add(add(mul(kWarp, cfg.sparseSlotElements() / 2),
                     mul(add(mul(u, 4), div(step, 2)), atom)),
                 add(add(mul(row, 32), mul(swizzled, 4)),
                     mul(rem(group, 2), 2)));
  Value lo = arith::ShLIOp::create(b, loc, pair, i32(16));
  Value hi = arith::ShRUIOp::create(b, loc, pair, i32(16));
  vector::StoreOp::create(
      b, loc,
      vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, b.getI32Type()), ValueRange{lo, hi}),
      sparseSlots, ValueRange{at}, /*nontemporal=*/false,
      llvm::MaybeAlign(8));
}

void DecodeKernelEmitter::stageSumSlice(Value firstChunk, int64_t count) {
  // The [K, rows] f32 sum's rows firstChunk * 128 .. + count * 128 are one
  // contiguous run of 16-byte cp.async pieces (each starts on a 16-byte
  // boundary: 128 * rows * 4 bytes per chunk), zero-filled past K (the
  // partial last chunk; those entries' values are 0).
  const int64_t rows = epi->rows, total = cfg.k * rows;
  const int64_t pieces = count * kChunk * rows / 4;
  Value flat = flattenMemref(b, loc, epi->summedT);
  const int64_t threads = cfg.groupThreads();
  Value t = rem(tid, threads);
  Value src0 = mul(mul(firstChunk, kChunk), rows);
  Value dst0 = mul(kWarp, sliceElements());
  for (int64_t i = 0; i * threads < pieces; ++i) {
    Value piece = add(t, threads * i);
    auto copy = [&](Value p) {
      Value at = mul(p, 4);
      Value src = add(src0, at);
      Value inK = ult(src, idx(total));
      Value elements = select(inK, idx(4), idx(0));
      src = select(inK, src, idx(0));
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()),
          epi->staged, ValueRange{add(dst0, at)}, flat, ValueRange{src},
          b.getIndexAttr(4), elements, /*bypassL1=*/UnitAttr());
    };
    if ((i + 1) * threads <= pieces) {
      copy(piece);
      continue;
    }
    emitIf(b, loc, ult(piece, idx(pieces)),
           [&](OpBuilder &, Location) { copy(minIdx(piece, pieces - 1)); });
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

std::pair<Value, Value> DecodeKernelEmitter::tileRow(Value base, Value row,
                                                     Value unit, Value pair,
                                                     int64_t rows) {
  // Chunk 4 unit + v (v < 4) of `row`: atom 2 pair + unit / 2, swizzled
  // chunk ((4 unit + v) % 8) ^ (row % 8) = lc ^ v with lc =
  // 4 (unit % 2) ^ (row % 8) (4 (unit % 2) and v occupy disjoint bits).
  // In i32: a per-entry address is a handful of 32-bit operations instead
  // of 64-bit index arithmetic.
  auto i32v = [&](Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index)
        .getResult();
  };
  auto addi = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  auto muli = [&](Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, i32(y)).getResult();
  };
  Value unit32 = i32v(unit), row32 = i32v(row);
  Value atomIndex = addi(arith::ShRUIOp::create(b, loc, unit32, i32(1)),
                         muli(i32v(pair), 2));
  Value rowWord = addi(addi(i32v(base), muli(atomIndex, rows * 32)),
                       muli(row32, kWgmmaAtomRowBytes / 4));
  Value lc = arith::XOrIOp::create(
      b, loc, muli(arith::AndIOp::create(b, loc, unit32, i32(1)), 4),
      arith::AndIOp::create(b, loc, row32, i32(7)));
  return {rowWord, lc};
}

Value DecodeKernelEmitter::tileChunk(Value rowWord, Value lc, Value v) {
  Value chunk = arith::XOrIOp::create(b, loc, lc, v);
  return arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      arith::AddIOp::create(b, loc, rowWord,
                            arith::MulIOp::create(b, loc, chunk, i32(4))));
}

void DecodeKernelEmitter::storeWeightTile(ArrayRef<ChunkLoads> chunks) {
  // Lane (g, tig) of row warp w (emit: g = lane % 8, tig = lane / 8 in this
  // form) dequantized unit tig of rows 16 w + g and + 8 of the K warp's
  // rows (one tile of rowsPerCTA() rows, a warp group's 64 at 64 x 128
  // bytes into each atom per group before it): word v goes to chunk
  // 4 tig + v of its row with one 16-byte store (stageActivations gives
  // the K order). A warp's store of one (half, v) writes 8 rows x one chunk
  // per 8-lane phase, on 8 different swizzled chunks: no bank conflict.
  // Then the unit's weight entries over their elements.
  auto v4 = VectorType::get({4}, b.getI32Type());
  for (auto [u, loads] : llvm::enumerate(chunks)) {
    for (int64_t half = 0; half < 2; ++half) {
      Value row = add(add(mul(rowWarp, 16), g), 8 * half);
      auto [rowWord, lc] = tileRow(mul(kWarp, cfg.tileElements() / 2), row,
                                   tig, idx(static_cast<int64_t>(u)),
                                   cfg.rowsPerCTA());
      SmallVector<SmallVector<Value, 2>> f =
          factors(weight, loads.weightScales[half]);
      for (int64_t v = 0; v < 4; ++v) {
        SmallVector<Value, 4> pairs;
        for (int64_t p = 0; p < 4; ++p)
          pairs.push_back(dequantPair(loads.weightWords[half][v], p,
                                      f[weight.scaleSlot(v)]));
        vector::StoreOp::create(
            b, loc, vector::FromElementsOp::create(b, loc, v4, pairs),
            weightTiles, ValueRange{tileChunk(rowWord, lc, i32(v))},
            /*nontemporal=*/false, llvm::MaybeAlign(16));
      }
      storeTileEntries(loads, half, rowWord, lc);
    }
  }
}

std::pair<Value, Value>
DecodeKernelEmitter::entryColumn(const ChunkLoads &loads, int64_t half,
                                 int64_t e) {
  const int64_t bs = entries->blockSize, perBlock = entries->entries;
  auto andi = [&](Value x, int64_t m) {
    return arith::AndIOp::create(b, loc, x, i32(m)).getResult();
  };
  Value index = arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                       loads.outlierIndices[half][e]);
  // An index is < the block size by the op's contract; masking keeps a
  // corrupt one inside the unit (a wrong product, never a stray store).
  Value column, skip;
  if (bs == 16) {
    column = arith::AddIOp::create(b, loc, andi(index, 15),
                                   i32(16 * (e / perBlock)));
  } else if (bs == kUnit) {
    column = andi(index, 31);
  } else {
    // A block wider than the unit: only the unit holding the entry.
    Value unitOffset = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(), rem(loads.unitK0, bs));
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        index, unitOffset);
    column = arith::SubIOp::create(b, loc, index, unitOffset);
    skip = arith::OrIOp::create(
        b, loc, below,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, column,
                              i32(kUnit)));
    column = andi(column, 31);
  }
  // A unit beyond K (its codes and activations are zeros) takes none: its
  // entries are block 0's, and 0 x Inf would be NaN.
  if (loads.unitValid) {
    Value outside = arith::XOrIOp::create(
        b, loc, loads.unitValid,
        arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    skip = skip ? arith::OrIOp::create(b, loc, skip, outside).getResult()
                : outside;
  }
  return {column, skip};
}

void DecodeKernelEmitter::storeTileEntries(const ChunkLoads &loads,
                                           int64_t half, Value rowWord,
                                           Value lc) {
  // Each entry replaces its element of the tile: the quantized weight is
  // +-0 there (the caller's proof, MatmulKernelSpec::WeightEntries), so the
  // replacement is the sum. The same thread stored the element's chunk
  // just before (program order on the same address). Element c of the
  // unit is pair p = c % 4, half h = (c % 8) / 4 of word v = c / 8: bf16
  // slot 2p + h of chunk lc ^ v of the row (tileRow). All in i32.
  auto andi = [&](Value x, int64_t m) {
    return arith::AndIOp::create(b, loc, x, i32(m)).getResult();
  };
  auto shr = [&](Value x, int64_t n) {
    return arith::ShRUIOp::create(b, loc, x, i32(n)).getResult();
  };
  auto addi = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  Value rowSlot = arith::MulIOp::create(b, loc, rowWord, i32(2));
  for (int64_t e = 0; e < entries->perUnit(); ++e) {
    Value value = loads.outlierValues[half][e];
    auto [column, skip] = entryColumn(loads, half, e);
    Value chunk = arith::XOrIOp::create(b, loc, lc, shr(column, 3));
    Value slot = addi(arith::ShLIOp::create(b, loc, andi(column, 3), i32(1)),
                      andi(shr(column, 2), 1));
    Value at = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        addi(addi(rowSlot, arith::ShLIOp::create(b, loc, chunk, i32(3))),
             slot));
    auto store = [&] {
      memref::StoreOp::create(b, loc, value, weightTilesBF16, ValueRange{at});
    };
    if (!skip) {
      store();
      continue;
    }
    Value keep = arith::XOrIOp::create(
        b, loc, skip, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    emitIf(b, loc, keep, [&](OpBuilder &, Location) { store(); });
  }
}

SmallVector<Value, 16> DecodeKernelEmitter::unitPairs(
    const ChunkLoads &loads, int64_t row,
    ArrayRef<SmallVector<Value, 2>> rowFactors) {
  SmallVector<Value, 16> pairs;
  for (int64_t v = 0; v < 4; ++v)
    for (int64_t p = 0; p < 4; ++p)
      pairs.push_back(dequantPair(loads.weightWords[row][v], p,
                                  rowFactors[weight.scaleSlot(v)]));
  if (cfg.entryPatch)
    patchEntries(loads, row, pairs);
  return pairs;
}

void DecodeKernelEmitter::patchEntries(const ChunkLoads &loads, int64_t half,
                                       MutableArrayRef<Value> pairs) {
  // Element c of the unit is half (c % 8) / 4 of pair c % 4 of word c / 8
  // (storeTileEntries), i.e. of pairs[j] with j = 4 (c / 8) + c % 4. The
  // lane owns the whole unit of its two rows, so the replacement needs no
  // other lane: for each entry, each of the 16 pairs takes a byte permute
  // under "j is mine", which ptxas makes one predicated PRMT (the same
  // SASS as an inline-PTX predicated prmt, docs/perf/s20_calls/s20c.sh);
  // the predicates of two entries come from one f16x2 compare (below).
  // As in the tile, the replacement is the sum because the quantized
  // weight is +-0 there. A skipped entry gets j = 16, which no pair has.
  auto andi = [&](Value x, int64_t m) {
    return arith::AndIOp::create(b, loc, x, i32(m)).getResult();
  };
  auto shr = [&](Value x, int64_t n) {
    return arith::ShRUIOp::create(b, loc, x, i32(n)).getResult();
  };
  struct Entry {
    Value key, selector, bits;
  };
  SmallVector<Entry> list;
  if (entries->packed) {
    // Byte 2 half + e of the key word: the pair index (16: none) in bits
    // 0..4, the half in bit 5 (packPatchWeightEntries). The value word
    // holds entry 0 in bits 0..15 and entry 1 in 16..31, so prmt takes it
    // as it is: bytes 4, 5 (entry 0) or 6, 7 (entry 1) into the low
    // (0x3254, 0x3276) or high (0x5410, 0x7610) half.
    Value word = loads.outlierIndices[half][0];
    for (int64_t e = 0; e < 2; ++e) {
      Value byte = shr(word, 16 * half + 8 * e);
      Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         andi(byte, 0x20), i32(0));
      Value selector = select(high, i32(e ? 0x7610 : 0x5410),
                              i32(e ? 0x3276 : 0x3254));
      list.push_back({andi(byte, 0x1F), selector,
                      loads.outlierValues[half][0]});
    }
  }
  for (int64_t e = 0; e < (entries->packed ? 0 : entries->perUnit()); ++e) {
    auto [column, skip] = entryColumn(loads, half, e);
    Value j = arith::OrIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, shr(column, 3), i32(2)),
        andi(column, 3));
    if (skip)
      j = select(skip, i32(16), j);
    // prmt(pair, bits): bytes 4, 5 are the entry's bf16; 0x3254 puts them
    // in the low half, 0x5410 in the high half.
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       andi(column, 4), i32(0));
    Value selector = select(high, i32(0x5410), i32(0x3254));
    Value bits = arith::ExtUIOp::create(
        b, loc, b.getI32Type(),
        arith::BitcastOp::create(b, loc, b.getI16Type(),
                                 loads.outlierValues[half][e]));
    list.push_back({j, selector, bits});
  }
  // Two entries' keys as one f16x2: 1024 + j is exact in f16 and its bits
  // are 0x6400 | j (no conversion instruction), so one f16x2 compare per
  // pair with 1024 + p gives both entries' predicates (setp.eq.f16x2 p|q,
  // one HSETP2 where two ISETP were). A missing second entry has key 16.
  auto f16x2 = VectorType::get({2}, b.getF16Type());
  for (size_t e = 0; e < list.size(); e += 2) {
    bool two = e + 1 < list.size();
    auto bits = [&](Value key) {
      return arith::OrIOp::create(b, loc, key, i32(0x6400)).getResult();
    };
    Value high = two ? bits(list[e + 1].key) : i32(0x6400 | 16);
    Value keys = LLVM::BitcastOp::create(
        b, loc, f16x2,
        arith::OrIOp::create(b, loc, bits(list[e].key),
                             arith::ShLIOp::create(b, loc, high, i32(16))));
    for (auto [p, pair] : llvm::enumerate(pairs)) {
      Value splat = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(f16x2, b.getF16FloatAttr(
                                            1024.0f + static_cast<float>(p))
                                            .getValue()));
      Value mine = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         keys, splat);
      for (int64_t k = 0; k < (two ? 2 : 1); ++k) {
        const Entry &en = list[e + k];
        Value hit = vector::ExtractOp::create(b, loc, mine, k);
        Value replaced = NVVM::PermuteOp::create(
            b, loc, b.getI32Type(), pair, en.bits, en.selector,
            NVVM::PermuteMode::DEFAULT);
        pair = select(hit, replaced, pair);
      }
    }
  }
}

Value DecodeKernelEmitter::packWgmmaAcc(ArrayRef<Value> acc) {
  SmallVector<Type> fields(cfg.wgmmaN() / 2, b.getF32Type());
  Value d = LLVM::UndefOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(b.getContext(), fields));
  for (int64_t nt = 0; nt < cfg.nTiles; ++nt)
    for (int64_t e = 0; e < 4; ++e)
      d = LLVM::InsertValueOp::create(b, loc, d, acc[accIndex(0, nt, 0, e)],
                                      4 * nt + e);
  return d;
}

void DecodeKernelEmitter::unpackWgmmaAcc(Value d, MutableArrayRef<Value> acc) {
  for (int64_t nt = 0; nt < cfg.nTiles; ++nt)
    for (int64_t e = 0; e < 4; ++e)
      acc[accIndex(0, nt, 0, e)] =
          LLVM::ExtractValueOp::create(b, loc, d, 4 * nt + e);
}

Value DecodeKernelEmitter::sharedAddress(Value byte, int64_t offset) {
  return arith::AddIOp::create(
      b, loc, sharedBase,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), add(byte, offset)));
}

SmallVector<Value> DecodeKernelEmitter::computeChunksTile(int64_t count,
                                                          ValueRange accIn) {
  // As computeChunksWgmma, with A = this K warp group's weight tile.
  SmallVector<Value> acc(accIn.begin(), accIn.end());
  Value d = packWgmmaAcc(acc);
  Value slotByte = mul(mul(kWarp, cfg.slotElements()), 2);
  // This warp group's 64 rows of the K warp's tile (uniform per group).
  Value tileByte =
      add(add(mul(mul(kWarp, cfg.tileElements()), 2), tileOffset),
          mul(div(rowWarp, 4), 64 * kWgmmaAtomRowBytes));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t u = 0; u < count; ++u)
    for (int64_t s = 0; s < kStepsPerChunk; ++s) {
      int64_t atom = 2 * u + s / 4, column = 32 * (s % 4);
      Value descA = buildWgmmaDescriptor(
          b, loc,
          sharedAddress(tileByte, atom * cfg.tileAtomElements() * 2 + column));
      Value descB = buildWgmmaDescriptor(
          b, loc,
          sharedAddress(slotByte, atom * cfg.atomElements() * 2 + column));
      d = buildWgmmaBF16(b, loc, descA, descB, d, cfg.wgmmaN());
    }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  unpackWgmmaAcc(d, acc);
  return acc;
}

SmallVector<Value>
DecodeKernelEmitter::computeChunksWgmma(ArrayRef<ChunkLoads> chunks,
                                        ValueRange accIn) {
  const int64_t n = cfg.wgmmaN();
  SmallVector<Value> acc(accIn.begin(), accIn.end());
  MutableArrayRef<Value> outlierAcc =
      MutableArrayRef<Value>(acc).drop_front(numAcc());
  sliceK0 = mul(chunks.front().chunk, kChunk);
  Value d = packWgmmaAcc(acc);
  Value slotByte = mul(mul(kWarp, cfg.slotElements()), 2);
  for (size_t u = 0; u < chunks.size(); ++u) {
    const ChunkLoads &loads = chunks[u];
    SmallVector<SmallVector<SmallVector<Value, 2>>> wf;
    for (const auto &bytes : loads.weightScales)
      wf.push_back(factors(weight, bytes));
    // pairs[half][4 v + p]: pair p of code word v of row g (+ 8 half).
    SmallVector<SmallVector<Value, 16>, 2> pairs = {
        unitPairs(loads, 0, wf[0]), unitPairs(loads, 1, wf[1])};
    SmallVector<SmallVector<Value, 4>> frags;
    for (int64_t s = 0; s < kStepsPerChunk; ++s) {
      int64_t p0 = 4 * (s / 2) + 2 * (s % 2), p1 = p0 + 1;
      frags.push_back(
          {pairs[0][p0], pairs[1][p0], pairs[0][p1], pairs[1][p1]});
    }
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t s = 0; s < kStepsPerChunk; ++s) {
      int64_t atomByte =
          (2 * static_cast<int64_t>(u) + s / 4) * cfg.atomElements() * 2 +
          32 * (s % 4);
      d = buildWgmmaRegisterABF16(
          b, loc, frags[s],
          buildWgmmaDescriptor(b, loc, sharedAddress(slotByte, atomByte)), d,
          n);
    }
    // The sparse form: the entries as the packed A of 8 sparse k32 steps
    // over the zero-padded activations. A lane's groups of every step
    // belong to its own unit, so its four A registers are the unit's
    // packed values of rows g and g + 8 in every step; the metadata places
    // them (SparseWeightEntries.h). Steps alternate the selector: lanes
    // q = 0, 1 supply the even steps' metadata, 2, 3 the odd ones', each
    // from its own word s / 2.
    if (cfg.entrySparse) {
      Value sparseByte =
          add(mul(mul(kWarp, cfg.sparseSlotElements()), 2), sparseOffset);
      SmallVector<Value, 4> a = {loads.outlierValues[0][0],
                                 loads.outlierValues[1][0],
                                 loads.outlierValues[0][0],
                                 loads.outlierValues[1][0]};
      for (int64_t s = 0; s < kStepsPerChunk; ++s) {
        int64_t atomByte =
            (4 * static_cast<int64_t>(u) + s / 2) * cfg.atomElements() * 2 +
            sparseStepByte(s);
        Value meta = loads.outlierIndices[(s / 2) / 2][(s / 2) % 2];
        d = buildWgmmaSparseRegisterABF16(
            b, loc, a,
            buildWgmmaDescriptor(b, loc, sharedAddress(sparseByte, atomByte)),
            meta, s % 2, d, n);
      }
    }
    // The weight outliers' products on the CUDA cores while the tensor
    // cores run (the loop form's gathers, from the group's slice).
    if (!outlierAcc.empty())
      addOutlierProducts(loads, outlierAcc);
  }
  sliceK0 = Value();
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  unpackWgmmaAcc(d, acc);
  return acc;
}

SmallVector<Value> DecodeKernelEmitter::emitPipelinedLoop(Value start,
                                                          Value end,
                                                          ValueRange accIn) {
  // Software pipelining: the weight words of the group `prefetch`
  // iterations ahead are loaded at the top of an iteration, so every lane
  // keeps (prefetch + 1) x unroll x 2 x 16 weight bytes in flight instead of
  // stalling on the loads of the group it is about to convert. Groups past
  // `end` (the last iterations, warps without work) load a clamped group
  // that is in bounds and read by this CTA anyway (L1/L2 hits), and are
  // never used. The mma.sync form loads activations (L1/L2 resident) in
  // the iteration that uses them; the warp-group form carries the words it
  // stages one group ahead (their L2 latency would otherwise come before
  // every group's barrier; one group covers it, deeper would only cost
  // registers).
  int64_t depth = cfg.prefetch;
  int64_t perChunk = numFlatWeightValues();
  int64_t perGroup = perChunk * cfg.unroll;
  int64_t actWords = cfg.wgmma ? numActivationWords(cfg.unroll) : 0;
  Value last = arith::SubIOp::create(b, loc, end, idx(1));
  auto clampGroup = [&](Value group) {
    return select(ult(group, end), group, last);
  };
  auto loadGroup = [&](Value group) {
    Value clamped = clampGroup(group);
    SmallVector<Value> flat;
    for (int64_t u = 0; u < cfg.unroll; ++u) {
      ChunkLoads loads;
      loadWeightChunk(loads, add(mul(clamped, cfg.unroll), u),
                      /*masked=*/false);
      llvm::append_range(flat, flattenWeights(loads));
    }
    return flat;
  };
  auto loadActivations = [&](Value group) {
    return loadActivationWords(mul(clampGroup(group), cfg.unroll), cfg.unroll,
                               /*masked=*/false);
  };

  // InstCombine turns a phi whose incoming values are all loads into one
  // load of a phi of the addresses, i.e. it undoes the pipelining (the PTX
  // then loads and uses in the same iteration again). It does not sink a
  // load past an instruction that may write memory, so the blocks that load
  // end in an empty side-effecting asm statement (no PTX instruction).
  auto sinkBarrier = [&]() {
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{},
                              /*asm_string=*/"", /*constraints=*/"",
                              /*has_side_effects=*/true,
                              /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None,
                              LLVM::AsmDialectAttr(), ArrayAttr());
  };

  // Iteration arguments: the accumulators, `depth` groups of weight
  // values, then (warp-group form) the next group's activation words.
  SmallVector<Value> init(accIn.begin(), accIn.end());
  int64_t numAccValues = init.size();
  for (int64_t d = 0; d < depth; ++d)
    llvm::append_range(init, loadGroup(add(start, d * cfg.kWarps)));
  if (actWords)
    llvm::append_range(init, loadActivations(start));
  sinkBarrier();
  stageActivationSum();

  auto loop = scf::ForOp::create(b, loc, start, end, idx(cfg.kWarps), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value group = loop.getInductionVar();
  ValueRange carried = loop.getRegionIterArgs();
  SmallVector<Value> ahead = loadGroup(add(group, depth * cfg.kWarps));
  SmallVector<Value> actAhead;
  if (actWords)
    actAhead = loadActivations(add(group, cfg.kWarps));
  // Activations chunk by chunk, right before their use: at M > 8 a
  // group's activation words (2 x 16 per chunk) would otherwise double the
  // live registers.
  SmallVector<Value> yielded(carried.take_front(numAccValues));
  Value firstChunk = mul(group, cfg.unroll);
  SmallVector<ChunkLoads, 4> chunks;
  for (int64_t u = 0; u < cfg.unroll; ++u) {
    Value chunk = add(firstChunk, u);
    ChunkLoads loads = unflattenWeights(
        chunk, carried.slice(numAccValues + u * perChunk, perChunk));
    if (epi || entries)
      loads.unitK0 = unitStart(chunk, /*masked=*/false).first;
    if (cfg.wgmma) {
      chunks.push_back(std::move(loads));
      continue;
    }
    loadActChunk(loads, chunk, /*masked=*/false);
    yielded = computeChunks(loads, yielded);
  }
  // The warp-group form: the group's activations staged (and its weight
  // tile written) while the next group's weights are in flight.
  if (cfg.wgmma) {
    stageActivations(firstChunk, cfg.unroll, /*masked=*/false, chunks,
                     carried.slice(numAccValues + depth * perGroup,
                                   actWords));
    yielded = cfg.weightTile ? computeChunksTile(cfg.unroll, yielded)
                             : computeChunksWgmma(chunks, yielded);
  }
  // Shift the queue: groups 1..depth-1 move down, the new one goes last.
  llvm::append_range(
      yielded, carried.slice(numAccValues + perGroup, (depth - 1) * perGroup));
  llvm::append_range(yielded, ahead);
  llvm::append_range(yielded, actAhead);
  sinkBarrier();
  scf::YieldOp::create(b, loc, yielded);
  return SmallVector<Value>(loop.getResults().take_front(numAccValues));
}

Value DecodeKernelEmitter::finalScale() {
  int64_t shift = weight.fragmentShift() + (lhsQ ? lhsQ->fragmentShift() : 0);
  Value scale;
  if (shift != 0)
    scale = f32(static_cast<float>(std::ldexp(1.0, shift)));
  auto applyTensorScale = [&](const QuantOperand &q) {
    if (!q.hasTensorScale)
      return;
    Value ts = memref::LoadOp::create(b, loc, q.extra, ValueRange{});
    scale = scale ? arith::MulFOp::create(b, loc, scale, ts).getResult() : ts;
  };
  applyTensorScale(weight);
  if (lhsQ)
    applyTensorScale(*lhsQ);
  return scale;
}

std::pair<Value, Value> DecodeKernelEmitter::sumPosition(Value sumIndex,
                                                        Value sumLane) {
  Value e = rem(sumIndex, 4);
  Value nt = rem(div(sumIndex, 4), cfg.nTiles);
  Value rt = div(sumIndex, 4 * cfg.nTiles);
  Value laneG = div(sumLane, 4), laneTig = rem(sumLane, 4);
  Value row = add(add(rowBase, mul(rt, 16)), add(laneG, mul(div(e, 2), 8)));
  Value column = add(mul(nt, 8), add(mul(laneTig, 2), rem(e, 2)));
  return {row, column};
}

void DecodeKernelEmitter::storeResult(Value value, Value sumIndex,
                                      Value sumLane) {
  // sumIndex = (rowTile * nTiles + nTile) * 4 + e of the lane `sumLane`:
  // c0, c1 = (row g, columns 2tig, 2tig+1), c2, c3 = row g + 8.
  auto [row, column] = sumPosition(sumIndex, sumLane);
  Value inBounds = arith::AndIOp::create(b, loc, ult(row, idx(cfg.n)),
                                         ult(column, idx(cfg.m)));
  auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  if (cfg.splitK > 1) {
    // `result` is the f32 scratch of the split-K partial sums.
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value,
                                result, ValueRange{column, row});
    return;
  }
  Type elementType = cast<MemRefType>(result.getType()).getElementType();
  if (!elementType.isF32())
    value = arith::TruncFOp::create(b, loc, elementType, value);
  memref::StoreOp::create(b, loc, value, result, ValueRange{column, row});
}

void DecodeKernelEmitter::emit(gpu::GPUFuncOp func) {
  kernel = func;
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = rem(tid, 32);
  warp = div(tid, 32);
  kWarp = cfg.wgmma ? div(warp, cfg.rowWarps) : rem(warp, cfg.kWarps);
  rowWarp = cfg.wgmma ? rem(warp, cfg.rowWarps) : div(warp, cfg.kWarps);
  g = div(lane, 4);
  tig = rem(lane, 4);
  // The weight-tile form's lanes load and dequantize for the tile, not for
  // mma fragments: lane l takes row l % 8 and unit l / 8, so that a warp's
  // 16-byte stores of one chunk position hit 8 rows per 8-lane phase
  // (storeWeightTile). A warp load reads the same 8 rows x 64 bytes.
  if (cfg.weightTile) {
    g = rem(lane, 8);
    tig = div(lane, 8);
  }
  // blockIdx.x = split * numRowCTAs + row CTA (one grid dimension, so that
  // consecutive CTAs stream consecutive weight rows of the same K slice).
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  rowCTA = bid;
  split = idx(0);
  if (cfg.splitK > 1) {
    rowCTA = rem(bid, cfg.numRowCTAs());
    split = div(bid, cfg.numRowCTAs());
  }
  rowBase = add(mul(rowCTA, cfg.rowsPerCTA()), mul(rowWarp, 16 * cfg.rowTiles));
  for (int64_t rt = 0; rt < cfg.rowTiles; ++rt)
    for (int64_t half = 0; half < 2; ++half)
      weightRows.push_back(
          minIdx(add(rowBase, add(g, 16 * rt + 8 * half)), cfg.n - 1));
  for (int64_t nt = 0; nt < cfg.nTiles; ++nt) {
    actRows.push_back(minIdx(add(g, 8 * nt), cfg.m - 1));
    for (int64_t c = 0; c < 2; ++c)
      columnRows.push_back(minIdx(add(mul(tig, 2), 8 * nt + c), cfg.m - 1));
  }

  if (cfg.wgmma) {
    // First, so that every atom starts on a 1024-byte swizzle period.
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    actSlots = sharedBuffer(
        MemRefType::get({cfg.kWarps * cfg.slotElements() / 2}, b.getI32Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        kWgmmaSwizzleBytes);
    sharedBase = buildSharedAddress(b, loc, dynamicShared);
    buildSwizzleBaseCheck(b, loc, sharedBase);
  }
  if (cfg.entrySparse) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    sparseOffset = llvm::alignTo(dynamicBytes, kWgmmaSwizzleBytes);
    sparseSlots = sharedBuffer(
        MemRefType::get({cfg.kWarps * cfg.sparseSlotElements() / 2},
                        b.getI32Type(), MemRefLayoutAttrInterface(), workgroup),
        kWgmmaSwizzleBytes);
  }
  if (entries && (entries->sparse || entries->packed)) {
    // The warp's 16-row block of the packed arrays (both forms' layout).
    auto shape = cast<MemRefType>(entries->values.getType()).getShape();
    sparseRowBlock = minIdx(div(rowBase, 16), shape[0] - 1);
  }
  if (cfg.weightTile) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    tileOffset = llvm::alignTo(dynamicBytes, kWgmmaSwizzleBytes);
    weightTiles = sharedBuffer(
        MemRefType::get({cfg.kWarps * cfg.tileElements() / 2}, b.getI32Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        kWgmmaSwizzleBytes);
    weightTilesBF16 = memref::ViewOp::create(
        b, loc,
        MemRefType::get({cfg.kWarps * cfg.tileElements()}, b.getBF16Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        dynamicShared, idx(tileOffset), ValueRange{});
  }
  if (epi && epi->hasOutliers()) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    epi->staged = sharedBuffer(
        MemRefType::get({cfg.wgmma ? cfg.kWarps * sliceElements()
                                   : cfg.k * epi->rows},
                        b.getF32Type(),
                        MemRefLayoutAttrInterface(), workgroup));
  }
  // Without the pipelined loop the copy goes first.
  if (!(cfg.fullGroups() > 0 && cfg.prefetch > 0) || alternateTail())
    stageActivationSum();
  if (alternateTail()) {
    allocateOutlierStage();
    tailFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      rem(rowCTA, 2), idx(1));
    emitIf(b, loc, tailFirst,
           [&](OpBuilder &, Location) { emitOutlierPhase(); });
  }
  SmallVector<Value> acc(numAcc() + numOutlierAcc(), f32(0.0f));
  TypeRange accTypes = ValueRange(acc).getTypes();
  SmallVector<Type> types(accTypes.begin(), accTypes.end());

  // Main loop: groups of `unroll` full chunks of this split's slice,
  // round-robin over the K warps.
  Value isLastSplit;
  if (cfg.splitK > 1)
    isLastSplit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        split, idx(cfg.splitK - 1));
  if (cfg.fullGroups() > 0) {
    Value first = mul(split, cfg.groupsPerSplit());
    Value end = cfg.splitK > 1
                    ? minIdx(add(first, cfg.groupsPerSplit()), cfg.fullGroups())
                    : idx(cfg.fullGroups());
    if (cfg.prefetch > 0) {
      acc = emitPipelinedLoop(add(first, kWarp), end, acc);
    } else {
      auto loop = scf::ForOp::create(b, loc, add(first, kWarp), end,
                                     idx(cfg.kWarps), acc);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> next =
          emitGroup(loop.getRegionIterArgs(),
                    mul(loop.getInductionVar(), cfg.unroll), cfg.unroll,
                    /*masked=*/false);
      scf::YieldOp::create(b, loc, next);
      acc = SmallVector<Value>(loop.getResults());
    }
  }
  // Remaining full chunks, one per iteration (last split only).
  int64_t tailStart = cfg.fullGroups() * cfg.unroll;
  if (tailStart < cfg.fullChunks()) {
    Value first = add(kWarp, tailStart);
    if (isLastSplit)
      first = select(isLastSplit, first, idx(cfg.fullChunks()));
    auto loop = scf::ForOp::create(b, loc, first, idx(cfg.fullChunks()),
                                   idx(cfg.kWarps), acc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next =
        emitGroup(loop.getRegionIterArgs(), loop.getInductionVar(), 1,
                  /*masked=*/false);
    scf::YieldOp::create(b, loc, next);
    acc = SmallVector<Value>(loop.getResults());
  }
  // The partial last chunk, on the warp whose turn it is.
  if (cfg.hasPartialChunk()) {
    int64_t owner = (cfg.fullChunks() - tailStart) % cfg.kWarps;
    Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       kWarp, idx(owner));
    if (isLastSplit)
      mine = arith::AndIOp::create(b, loc, mine, isLastSplit);
    auto ifOp = scf::IfOp::create(b, loc, types, mine, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(
          b, loc, emitGroup(acc, idx(cfg.fullChunks()), 1, /*masked=*/true));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, acc);
    }
    acc = SmallVector<Value>(ifOp.getResults());
  }

  // Both parities, per (row tile, n-tile, element).
  SmallVector<Value> sums;
  for (int64_t rt = 0; rt < cfg.rowTiles; ++rt)
    for (int64_t nt = 0; nt < cfg.nTiles; ++nt)
      for (int64_t e = 0; e < 4; ++e)
        sums.push_back(arith::AddFOp::create(
            b, loc, acc[accIndex(rt, nt, 0, e)], acc[accIndex(rt, nt, 1, e)]));
  Value scale = finalScale();
  auto scaled = [&](Value v) -> Value {
    return scale ? arith::MulFOp::create(b, loc, v, scale).getResult() : v;
  };

  int64_t perLane = cfg.sumsPerLane();
  // Fused epilogue: the sums are scaled here (before the outlier sums join
  // them), and every finished sum goes to the CTA's stage instead of the
  // result; a last pass sums the row groups.
  Value stage;
  if (epi) {
    for (Value &v : sums)
      v = scaled(v);
    if (epi->outliersInLoop())
      addOutlierSums(sums, ArrayRef<Value>(acc).drop_front(numAcc()));
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    stage = sharedBuffer(
        MemRefType::get({cfg.m * cfg.rowsPerCTA()}, b.getF32Type(),
                        MemRefLayoutAttrInterface(), workgroup));
  }
  auto finished = [&](Value v, Value sumIndex, Value sumLane) {
    if (epi)
      stageSum(stage, v, sumIndex, sumLane);
    else
      storeResult(scaled(v), sumIndex, sumLane);
  };
  // The fused epilogue's last steps: the tail form's outlier product once
  // the main loop's sums are staged (their registers free again), then
  // the pass over the stage.
  auto finalPass = [&] {
    if (alternateTail()) {
      Value tailLast = arith::XOrIOp::create(
          b, loc, tailFirst,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
      emitIf(b, loc, tailLast,
             [&](OpBuilder &, Location) { emitOutlierPhase(); });
    }
    gpu::BarrierOp::create(b, loc);
    emitFinalPass(stage, tid);
  };
  if (cfg.kWarps == 1) {
    for (int64_t i = 0; i < perLane; ++i)
      finished(sums[i], idx(i), lane);
    if (epi)
      finalPass();
    return;
  }

  // Cross-warp reduction: warp w writes its sums to [w][i][lane]
  // (conflict-free), then sum i of lane l is finished by the K warp
  // i % kWarps of the same row group.
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto smemType = MemRefType::get({cfg.warps * perLane * 32}, b.getF32Type(),
                                  MemRefLayoutAttrInterface(), workgroup);
  Value smem = sharedBuffer(smemType);
  for (int64_t i = 0; i < perLane; ++i)
    memref::StoreOp::create(
        b, loc, sums[i], smem,
        ValueRange{add(mul(add(mul(warp, perLane), i), 32), lane)});
  gpu::BarrierOp::create(b, loc);
  for (int64_t it = 0; it * cfg.kWarps < perLane; ++it) {
    Value i = add(kWarp, it * cfg.kWarps);
    Value guarded = i;
    if ((it + 1) * cfg.kWarps > perLane) {
      // Only lanes with i < perLane run `finish`; the clamp keeps the
      // addresses of the others in bounds too (the CPU interpreter of the
      // tests evaluates them under a mask).
      i = minIdx(i, perLane - 1);
    }
    auto finish = [&]() {
      Value total;
      for (int64_t w = 0; w < cfg.kWarps; ++w) {
        Value slot = add(mul(warpOf(rowWarp, w), perLane), i);
        Value part = memref::LoadOp::create(
            b, loc, smem, ValueRange{add(mul(slot, 32), lane)});
        total = total ? arith::AddFOp::create(b, loc, total, part).getResult()
                      : part;
      }
      finished(total, i, lane);
    };
    if ((it + 1) * cfg.kWarps <= perLane) {
      finish();
      continue;
    }
    auto ifOp = scf::IfOp::create(b, loc, ult(guarded, idx(perLane)),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    finish();
  }
  if (epi)
    finalPass();
}

void DecodeKernelEmitter::addOutlierSums(MutableArrayRef<Value> sums,
                                         ArrayRef<Value> out) {
  // A lane's outlier sums cover its own unit of every chunk: the quad's
  // butterfly (xor 1, 2) gives each of its lanes the rows' full sums
  // (this warp's K slice), and each lane adds them to its C sums of
  // group-0 columns (column = 8 nt + 2 tig + e % 2 < rows; the K warps'
  // parts meet in the cross-warp reduction like the mma sums).
  SmallVector<Value> full(out.begin(), out.end());
  for (Value &v : full)
    for (int64_t offset : {1, 2})
      v = arith::AddFOp::create(b, loc, v, shuffleXor(b, loc, v, offset));
  const int64_t rows = epi->rows;
  for (int64_t rt = 0; rt < cfg.rowTiles; ++rt)
    for (int64_t nt = 0; nt < cfg.nTiles; ++nt)
      for (int64_t e = 0; e < 4; ++e) {
        Value contribution;
        for (int64_t t = 0; t < 4; ++t) {
          int64_t m = nt * 8 + 2 * t + e % 2;
          if (m >= rows)
            continue;
          Value v = full[(2 * rt + e / 2) * rows + m];
          Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             tig, idx(t));
          contribution =
              select(mine, v, contribution ? contribution : f32(0.0f));
        }
        if (!contribution)
          continue;
        Value &sum = sums[(rt * cfg.nTiles + nt) * 4 + e];
        sum = arith::AddFOp::create(b, loc, sum, contribution);
      }
}

void DecodeKernelEmitter::stageSum(Value stage, Value value, Value sumIndex,
                                   Value sumLane) {
  // As storeResult, into stage[column][row - CTA's first row].
  auto [row, column] = sumPosition(sumIndex, sumLane);
  Value local = arith::SubIOp::create(b, loc, row,
                                      mul(rowCTA, cfg.rowsPerCTA()));
  Value inBounds = arith::AndIOp::create(b, loc, ult(row, idx(cfg.n)),
                                         ult(column, idx(cfg.m)));
  // Clamped so that masked lanes address the stage too (the interpreter).
  Value slot = add(mul(minIdx(column, cfg.m - 1), cfg.rowsPerCTA()), local);
  emitIf(b, loc, inBounds, [&](OpBuilder &, Location) {
    memref::StoreOp::create(b, loc, value, stage, ValueRange{slot});
  });
}

void DecodeKernelEmitter::emitFinalPass(Value stage, Value tid) {
  // result[m, row] = acc[m, row] + sum over groups g of stage[g * rows + m]
  // [row - first row], one thread per (m, row), rows fastest (coalesced
  // stores), rounded once to the result type.
  const int64_t rows = epi->rows, perCTA = cfg.rowsPerCTA();
  const int64_t items = rows * perCTA, threads = 32 * cfg.warps;
  Value firstRow = mul(rowCTA, perCTA);
  Type resultType = cast<MemRefType>(result.getType()).getElementType();
  for (int64_t it = 0; it * threads < items; ++it) {
    Value item = add(tid, it * threads);
    Value inBounds;
    if ((it + 1) * threads > items) {
      inBounds = ult(item, idx(items));
      item = minIdx(item, items - 1);
    }
    Value m = div(item, perCTA), local = rem(item, perCTA);
    Value row = add(firstRow, local);
    Value rowOk = ult(row, idx(cfg.n));
    inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, rowOk)
                              .getResult()
                        : rowOk;
    row = minIdx(row, cfg.n - 1);
    emitIf(b, loc, inBounds, [&](OpBuilder &, Location) {
      Value total = epi->acc ? loadAsF32(b, loc, epi->acc, {m, row}) : Value();
      for (int64_t group = 0; group < epi->spec.rowGroups; ++group) {
        Value part = memref::LoadOp::create(
            b, loc, stage,
            ValueRange{add(mul(add(m, group * rows), perCTA), local)});
        total = total ? arith::AddFOp::create(b, loc, total, part).getResult()
                      : part;
      }
      if (outlierStage)
        total = arith::AddFOp::create(
            b, loc, total,
            memref::LoadOp::create(b, loc, outlierStage,
                                   ValueRange{add(mul(m, perCTA), local)}));
      memref::StoreOp::create(b, loc, roundFromF32(b, loc, total, resultType),
                              result, ValueRange{m, row});
    });
  }
}

/// H200: SMs, and about the warps of a 64-72 register kernel one SM holds
/// (28 in theory, 24-26 achieved under ncu).
constexpr int64_t kSMs = 132;
constexpr int64_t kResidentWarpsPerSM = 26;

/// Row groups per CTA when the option leaves it open: at M > 8 the
/// activation slice (16 rows) is as large as the weight tile's codes, so
/// two row groups share it (through L1); at M <= 8 one.
int64_t chooseRowWarps(const DecodeConfig &cfg, bool stagedSum,
                       bool outlierTail) {
  // Measured on the H200 (docs/Performance.md, sweeps): at M = 16, two
  // 16-row groups per CTA sharing the activations (27.6 us) beat one
  // (28.6 us) and four (29.0 us). A fused epilogue that stages the
  // activation sum in shared memory copies it once per CTA: four groups
  // (64 rows) amortize that (full recipe, 1 x 14336 x 4096: 27.9 us
  // against 31.7 us with one, 31.6 with two; development measurements of
  // 2026-12-03, logs not kept). The tail form, whose CTAs also copy their
  // entries (planOutlierTail), takes one with twice the K warps
  // (chooseKWarps): 896 CTAs of 16 rows spread evenly over 132 SMs (6 or
  // 7 each; 448 of 32 rows leave 3 or 4, and ncu saw the SMs active 78%
  // of the kernel), and 8 warps share each copy (full recipe 1 x 14336 x
  // 4096 on an H100: 23.3 us against 24.2 with two groups of 4 K warps,
  // 27.1 with one group of 4, 23.2 with 16 warps, which cost outlier
  // top-1 10%; docs/perf/decode_tail_shape_2026-12-05_s19.txt).
  int64_t rowWarps = stagedSum ? (outlierTail ? 1 : 4) : cfg.m > 8 ? 2 : 1;
  while (rowWarps > 1 && 16 * cfg.rowTiles * rowWarps > cfg.n)
    rowWarps /= 2;
  return rowWarps;
}

/// K warps per row group when the option leaves it open: enough that the
/// grid holds about one wave of resident warps (~3500 on 132 SMs), the
/// configuration that measured best at every M = 1 shape (14336x4096: 4
/// warps, 14.9 us; 4096x4096 and 4096x14336: 16 warps, 6.1 / 16.1 us),
/// without leaving a warp less than one main-loop iteration; at most 8 warps
/// per CTA once several row groups share it. The tail form
/// (chooseRowWarps) takes twice that, up to 8, where K still gives every
/// warp an iteration: its CTAs copy the activation sum and their entries
/// once for all their warps.
int64_t chooseKWarps(const DecodeConfig &cfg, bool outlierTail) {
  int64_t chunks = llvm::divideCeil(cfg.k, kChunk);
  int64_t maxWarps = cfg.rowWarps > 1 ? 8 : 16;
  auto fits = [&](int64_t kWarps) {
    return kWarps * cfg.rowWarps <= maxWarps &&
           chunks >= cfg.unroll * kWarps;
  };
  int64_t kWarps = 1;
  while (cfg.numRowCTAs() * kWarps * cfg.rowWarps < kSMs * kResidentWarpsPerSM &&
         fits(2 * kWarps))
    kWarps *= 2;
  if (outlierTail && 2 * kWarps * cfg.rowWarps <= 8 && fits(2 * kWarps))
    kWarps *= 2;
  return kWarps;
}

/// Split-K when the option leaves it open: none. Splitting K across CTAs
/// (atomics into a scratch buffer plus a finalize launch) measured slower
/// than more K warps per CTA at every shape tried (4096x4096: 8.6 vs 6.1 us;
/// 4096x14336: 16.4 vs 16.1 us); it stays available as decode-split-k.
int64_t chooseSplitK(const DecodeConfig &) { return 1; }

/// The split-K epilogue: result = scratch, rounded to the result type, and
/// the scratch zeroed again for the next call (so that repeated launches,
/// e.g. a replayed CUDA graph, need no memset).
KernelLaunch buildSplitKFinalize(OpBuilder &builder, Location loc,
                                 gpu::GPUModuleOp module, StringRef name,
                                 const KernelArg &scratch,
                                 const KernelArg &result, int64_t m,
                                 int64_t n) {
  constexpr int64_t kThreads = 256;
  KernelLaunch launch;
  launch.block = {kThreads, 1, 1};
  launch.grid = {llvm::divideCeilSigned(m * n, kThreads), 1, 1};
  launch.variant = "decode_splitk_finalize";
  SmallVector<KernelArg> args = {scratch, result};
  for (const KernelArg &a : args)
    launch.argNames.push_back(a.name);
  launch.func =
      createKernelShell(builder, loc, module, name, args, launch.block);
  OpBuilder::InsertionGuard guard(builder);
  OpBuilder &b = builder;
  b.setInsertionPoint(launch.func.getBody().front().getTerminator());
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value partial = launch.func.getArgument(0);
  Value out = launch.func.getArgument(1);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value i = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, idx(kThreads)), tid);
  Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                         idx(m * n));
  auto ifOp = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  // Clamped, so that the addresses stay inside the buffers even where a
  // lane is masked off (the CPU interpreter of the tests evaluates them).
  Value clamped = arith::MinUIOp::create(b, loc, i, idx(m * n - 1));
  Value column = arith::DivUIOp::create(b, loc, clamped, idx(n));
  Value row = arith::RemUIOp::create(b, loc, clamped, idx(n));
  Value v = memref::LoadOp::create(b, loc, partial, ValueRange{column, row});
  memref::StoreOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)),
      partial, ValueRange{column, row});
  Type elementType = result.type.getElementType();
  if (!elementType.isF32())
    v = arith::TruncFOp::create(b, loc, elementType, v);
  memref::StoreOp::create(b, loc, v, out, ValueRange{column, row});
  return launch;
}

} // namespace

namespace {
/// What buildDecodeMatmulKernel decides before it creates IR.
struct DecodeSetup {
  QuantOperand weight;
  std::optional<QuantOperand> lhsQ;
  std::optional<FusedEpilogue> epi;
  std::optional<TileEntries> entries;
  DecodeConfig cfg;
};
} // namespace

/// The tail form's copy of a CTA's outlier entries into shared memory
/// (bytes; 0: the tail reads global memory). Taken where every row's
/// entries are whole 16-byte pieces and the copy, the staged sum and the
/// stages leave room for two CTAs per SM: the copy is issued with the sum
/// before the main loop, so the entries' bytes stream alongside the
/// weights instead of after them.
static int64_t planOutlierTail(const MatmulKernelSpec &spec,
                               const GPUTarget &target,
                               const DecodeConfig &cfg,
                               const FusedEpilogue &epi) {
  if (!epi.outliersInTail())
    return 0;
  const int64_t perRow = epi.entriesPerRow(spec.k);
  const int64_t valueBytes =
      epi.spec.outlierValuesType.getIntOrFloatBitWidth() / 8;
  if (perRow % 16 != 0 || valueBytes > 16 || 16 % valueBytes != 0)
    return 0;
  const int64_t perCTA = cfg.rowsPerCTA();
  const int64_t bytes = perCTA * perRow * (valueBytes + 1);
  // With the copy every shared buffer is dynamic (sharedBuffer): the
  // copy, the f32 sum, the result and outlier stages and the K warps'
  // reduction buffer, plus up to 16 bytes of alignment per buffer.
  const int64_t others =
      (spec.k * epi.rows + (cfg.m + epi.rows) * perCTA +
       (cfg.kWarps > 1 ? cfg.warps * cfg.sumsPerLane() * 32 : 0)) * 4 +
      6 * 16;
  if (target.ctasPerSMByShared(bytes + others) < 2)
    return 0;
  return bytes;
}

static FailureOr<DecodeSetup> setUpDecode(const MatmulKernelSpec &spec,
                                          const GPUTarget &target,
                                          GPUConfigAttr config,
                                          std::string &reason) {
  if (target.smVersion < 80) {
    reason = "the decode kernel needs bf16 mma.sync (sm_80 or newer)";
    return failure();
  }
  // Up to four mma n-tiles of activation rows. convert-fp4-to-gpu routes
  // fp4.matmul here for M <= decode-max-m; the fused correction chain
  // stacks up to 32 rows (its activation parts) into one launch.
  if (spec.m < 1 || spec.m > 32) {
    reason = "M = " + std::to_string(spec.m) +
             " is outside the decode kernel's 1..32 activation rows";
    return failure();
  }
  if (spec.k % kUnit != 0) {
    reason = "K = " + std::to_string(spec.k) +
             " is not a multiple of 32 (the decode kernel reads 16-byte "
             "aligned code rows)";
    return failure();
  }
  Type resultType = spec.resultElementType;
  if (!resultType ||
      !(resultType.isF32() || resultType.isBF16() || resultType.isF16())) {
    reason = "the decode kernel writes f32, bf16 or f16 results";
    return failure();
  }
  if (!spec.lhsQuantized &&
      !(spec.lhsElementType && spec.lhsElementType.isBF16())) {
    reason = "the decode kernel takes bf16 or quantized activations (the "
             "tensor cores multiply bf16)";
    return failure();
  }
  if (config.getKUnroll() < kChunk || config.getKUnroll() % kChunk != 0) {
    reason = "decode-k-unroll must be a positive multiple of 128";
    return failure();
  }

  FailureOr<QuantOperand> weight =
      describeOperand(spec.rhs, spec.k, "weight", reason);
  if (failed(weight))
    return failure();
  std::optional<QuantOperand> lhsQ;
  if (spec.lhsQuantized) {
    FailureOr<QuantOperand> q =
        describeOperand(spec.lhsQuantized, spec.k, "activation", reason);
    if (failed(q))
      return failure();
    lhsQ = *q;
  }
  const bool wgmmaForm = config.getMma() == GPUPrefillMMA::WGMMA &&
                         target.hasWGMMA && !weight->macroBlock &&
                         !(lhsQ && lhsQ->macroBlock);
  if (spec.weightEntries) {
    // The entries are written into the tile as they are: the tile must
    // hold the weight's values, not values times a factor applied later.
    const MatmulKernelSpec::WeightEntries &e = *spec.weightEntries;
    if (weight->fragmentShift() != 0 || weight->hasTensorScale ||
        weight->macroBlock) {
      reason = "weight entries need a weight scheme without tensor or macro "
               "factors (its dequantized values are the bf16 tile's)";
      return failure();
    }
    if ((e.blockSize != 16 && e.blockSize % kUnit != 0) || e.entries < 1 ||
        e.entries > e.blockSize || spec.k % e.blockSize != 0) {
      reason = "weight entries come in blocks of 16 or a multiple of 32 "
               "dividing K, with 1..block entries";
      return failure();
    }
    if (spec.epilogue && spec.epilogue->outlierEntries > 0) {
      reason = "weight entries and epilogue weight outliers are two forms "
               "of the same part; a launch takes one";
      return failure();
    }
  }
  std::optional<FusedEpilogue> epi;
  if (spec.epilogue) {
    epi.emplace();
    epi->spec = *spec.epilogue;
    if (wgmmaForm)
      epi->spec.outlierTail = false;
    const MatmulKernelSpec::Epilogue &e = *spec.epilogue;
    if (e.rowGroups < 1 || spec.m % e.rowGroups != 0) {
      reason = "the fused epilogue's " + std::to_string(e.rowGroups) +
               " row groups do not divide M = " + std::to_string(spec.m);
      return failure();
    }
    epi->rows = spec.m / e.rowGroups;
    if (e.outlierEntries < 0 ||
        (e.outlierEntries > 0 &&
         ((e.outlierBlockSize != 16 && e.outlierBlockSize % kUnit != 0) ||
          e.outlierEntries > e.outlierBlockSize ||
          spec.k % e.outlierBlockSize != 0 || !e.outlierValuesType ||
          !isa<FloatType>(e.outlierValuesType)))) {
      reason = "the fused epilogue reads weight outliers in float blocks of "
               "16 or a multiple of 32 elements dividing K";
      return failure();
    }
    if (e.sumBankColumns != 0 &&
        (wgmmaForm || !e.outlierTail || e.outlierEntries == 0 ||
         e.sumBankColumns != laneBankedSumColumns(spec.k, e.outlierBlockSize,
                                                  e.outlierEntries))) {
      reason = "a lane-banked activation sum is the tail form's, with "
               "C = K / 32 where its lanes' runs of entries are whole "
               "outlier blocks (" +
               std::to_string(e.sumBankColumns) + " given)";
      return failure();
    }
    if (e.outlierEntries > 0 && !wgmmaForm &&
        spec.k * epi->rows * 4 > kDecodeEpilogueMaxSumBytes) {
      reason = "the fused epilogue stages the [K, M] f32 activation sum in "
               "shared memory: " + std::to_string(spec.k * epi->rows * 4) +
               " bytes is more than " + std::to_string(kDecodeEpilogueMaxSumBytes);
      return failure();
    }
  }
  DecodeConfig cfg;
  cfg.m = spec.m;
  cfg.n = spec.n;
  cfg.k = spec.k;
  cfg.nTiles = llvm::divideCeil(spec.m, 8);
  cfg.unroll = config.getKUnroll() / kChunk;
  if (config.getPrefetch() < 0 || config.getPrefetch() > 2) {
    reason = "decode-prefetch must be 0, 1 or 2";
    return failure();
  }
  cfg.prefetch = config.getPrefetch();
  if (config.getMaxRegisters() > 0 && config.getMaxRegisters() < 32) {
    reason = "decode-max-registers below 32 leaves no room for the kernel";
    return failure();
  }
  if (config.getRowsPerCta() % 16 != 0) {
    reason = "decode-rows-per-cta must be a multiple of 16";
    return failure();
  }
  bool stagedSum = epi && epi->hasOutliers();
  // The warp-group form takes operands without macro factors; others keep
  // mma.sync (the variant name says which ran). It multiplies weight
  // outliers in its main loop, from per-group slices of the sum (no tail
  // form there).
  cfg.wgmma = wgmmaForm;
  // Weight entries go into the register fragments (both forms) or into the
  // warp-group form's weight tile.
  std::optional<TileEntries> entries;
  if (spec.weightEntries) {
    entries = TileEntries{spec.weightEntries->blockSize,
                          spec.weightEntries->entries, Value(), Value()};
    cfg.entryPatch = spec.weightEntries->inRegisters;
    cfg.entrySparse = entries->sparse = spec.weightEntries->sparse;
    entries->packed = spec.weightEntries->packed;
    if ((cfg.entrySparse || entries->packed) &&
        (!wgmmaForm || entries->perUnit() > 2)) {
      reason = "packed weight entries need the decode kernel's warp-group "
               "form (sm_90a) and at most 2 entries per 32-element unit";
      return failure();
    }
    if (entries->packed && (!cfg.entryPatch || cfg.entrySparse)) {
      reason = "the patch's packed weight entries are for the register patch";
      return failure();
    }
  }
  if (cfg.wgmma) {
    // One or two 64-row warp groups per K warp: two share the K warp's
    // activation slot (half the activation staging per weight row).
    const int64_t rows = config.getRowsPerCta() ? config.getRowsPerCta() : 64;
    if (rows != 64 && rows != 128) {
      reason = "decode mma = wgmma: a K warp's rows are one or two 64-row "
               "warp groups (decode-rows-per-cta = 64 or 128, not " +
               std::to_string(rows) + ")";
      return failure();
    }
    cfg.rowWarps = rows / 16;
    if (cfg.nTiles % (cfg.rowWarps / 4) != 0) {
      reason = "decode mma = wgmma: two warp groups share the staged "
               "activations in whole 16-row pieces (decode-rows-per-cta = "
               "128 needs M in 9..16 or 25..32, not " +
               std::to_string(cfg.m) + ")";
      return failure();
    }
    if (config.getWarps() % cfg.rowWarps != 0) {
      reason = "decode mma = wgmma: decode-warps = " +
               std::to_string(config.getWarps()) +
               " is not a whole number of K warps of " +
               std::to_string(cfg.rowWarps) + " warps";
      return failure();
    }
    if (config.getSplitK() > 1) {
      reason = "decode mma = wgmma has no decode-split-k";
      return failure();
    }
    // 8 warps (two K warps of one warp group, or one of two) unless
    // decode-warps says otherwise.
    cfg.kWarps = (config.getWarps() > 0 ? config.getWarps() : 8) / cfg.rowWarps;
    cfg.warps = cfg.rowWarps * cfg.kWarps;
    cfg.splitK = 1;
    if (entries && !cfg.entryPatch && !cfg.entrySparse) {
      cfg.weightTile = true;
      // Every shared buffer of the form (emit): the activation slots and
      // the tiles (1024-byte aligned), the epilogue's stage, the K warps'
      // reduction buffer.
      const int64_t bytes =
          2 * cfg.kWarps * (cfg.tileElements() + cfg.slotElements()) +
          kWgmmaSwizzleBytes +
          4 * (spec.epilogue ? cfg.m * cfg.rowsPerCTA() : 0) +
          4 * (cfg.kWarps > 1 ? cfg.warps * cfg.sumsPerLane() * 32 : 0) +
          2 * 16;
      if (bytes > target.maxSharedBytesPerBlock) {
        reason = "the decode kernel's weight tiles need " +
                 std::to_string(bytes) + " bytes of shared memory, more "
                 "than the chip's " +
                 std::to_string(target.maxSharedBytesPerBlock) +
                 " (a smaller decode-k-unroll or decode-warps)";
        return failure();
      }
    }
    return DecodeSetup{*weight, lhsQ, epi, entries, cfg};
  }
  // Off the warp-group form only the register patch takes entries: the
  // mma.sync fragments hold the same pairs of the lane's own unit.
  if (entries && !cfg.entryPatch) {
    reason = "weight entries in a weight tile need the decode kernel's "
             "warp-group form (decode-mma = wgmma on a chip with wgmma, no "
             "macro factors)";
    return failure();
  }
  cfg.rowWarps = config.getRowsPerCta() > 0 ? config.getRowsPerCta() / 16
                                            : chooseRowWarps(cfg, stagedSum,
                                                             epi && epi->outliersInTail());
  if (config.getWarps() > 0) {
    if (config.getWarps() % cfg.rowWarps != 0) {
      reason = "decode-warps = " + std::to_string(config.getWarps()) +
               " is not a multiple of the " + std::to_string(cfg.rowWarps) +
               " row groups of decode-rows-per-cta";
      return failure();
    }
    cfg.kWarps = config.getWarps() / cfg.rowWarps;
  } else {
    cfg.kWarps = chooseKWarps(cfg, epi && epi->outliersInTail());
  }
  cfg.warps = cfg.rowWarps * cfg.kWarps;
  if (cfg.warps > 32) {
    reason = "the decode CTA would need more than 32 warps";
    return failure();
  }
  cfg.splitK = config.getSplitK() > 0 ? config.getSplitK() : chooseSplitK(cfg);
  // Never more slices than main-loop groups (at least one split).
  cfg.splitK = std::max<int64_t>(
      1, std::min<int64_t>(cfg.splitK, cfg.fullGroups()));
  if (epi && cfg.splitK > 1) {
    reason = "the fused epilogue needs the whole K in one CTA "
             "(decode-split-k = 1)";
    return failure();
  }

  return DecodeSetup{*weight, lhsQ, epi, entries, cfg};
}

LogicalResult mlir::fp4::checkDecodeMatmulKernel(const MatmulKernelSpec &spec,
                                                 const GPUTarget &target,
                                                 GPUConfigAttr config,
                                                 std::string &reason) {
  return success(succeeded(setUpDecode(spec, target, config, reason)));
}

FailureOr<KernelPlan> mlir::fp4::buildDecodeMatmulKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const MatmulKernelSpec &spec, const GPUTarget &target, GPUConfigAttr config,
    std::string &reason) {
  FailureOr<DecodeSetup> setup = setUpDecode(spec, target, config, reason);
  if (failed(setup))
    return failure();
  QuantOperand &weight = setup->weight;
  std::optional<QuantOperand> &lhsQ = setup->lhsQ;
  std::optional<FusedEpilogue> &epi = setup->epi;
  DecodeConfig &cfg = setup->cfg;
  std::optional<TileEntries> &entries = setup->entries;
  size_t expectedArgs =
      (lhsQ ? lhsQ->numComponents() : 1) + weight.numComponents() + 1 +
      (entries ? 2 : 0);
  if (epi)
    expectedArgs += (epi->hasOutliers() ? 3 : 0) +
                    (spec.epilogue->accElementType ? 1 : 0);
  if (spec.args.size() != expectedArgs) {
    reason = "unexpected kernel argument list for the decode kernel";
    return failure();
  }
  if (entries && (entries->sparse || entries->packed)) {
    // The packed values and metadata or keys (SparseWeightEntries.h).
    size_t at = (lhsQ ? lhsQ->numComponents() : 1) + weight.numComponents();
    const int64_t rb = sparseEntryRowBlocks(spec.n),
                  ch = sparseEntryChunks(spec.k);
    const int64_t metaWords = entries->packed ? 1 : 4;
    const KernelArg &values = spec.args[at], &meta = spec.args[at + 1];
    if (!values.type.getElementType().isInteger(32) ||
        !meta.type.getElementType().isInteger(32) ||
        values.type.getShape() != ArrayRef<int64_t>({rb, ch, 32, 2}) ||
        meta.type.getShape() != ArrayRef<int64_t>({rb, ch, 32, metaWords})) {
      reason = entries->packed
                   ? "the decode kernel's packed patch entries are i32 "
                     "values [ceil(N / 16), ceil(K / 128), 32, 2] and keys "
                     "[.., .., 32, 1]"
                   : "the decode kernel's sparse weight entries are i32 "
                     "packed values [ceil(N / 16), ceil(K / 128), 32, 2] "
                     "and metadata [.., .., 32, 4]";
      return failure();
    }
  } else if (entries) {
    // bf16 values (they go into the bf16 tile as they are), i8 indices,
    // both [N, K / block, entries].
    size_t at = (lhsQ ? lhsQ->numComponents() : 1) + weight.numComponents();
    SmallVector<int64_t> shape = {spec.n, spec.k / entries->blockSize,
                                  entries->entries};
    const KernelArg &values = spec.args[at], &indices = spec.args[at + 1];
    if (!values.type.getElementType().isBF16() ||
        !indices.type.getElementType().isInteger(8) ||
        values.type.getShape() != ArrayRef<int64_t>(shape) ||
        indices.type.getShape() != ArrayRef<int64_t>(shape)) {
      reason = "the decode kernel's weight entries are bf16 values and i8 "
               "indices [N, K / block, entries]";
      return failure();
    }
  }

  // Split-K: the main kernel adds into an f32 scratch [M, N] instead of
  // writing the result, a second kernel rounds it into the result.
  SmallVector<KernelArg> mainArgs(spec.args);
  KernelArg partials{"scratch.partial",
                     MemRefType::get({spec.m, spec.n}, builder.getF32Type()),
                     /*readOnly=*/false};
  if (cfg.splitK > 1)
    mainArgs.back() = partials;

  std::array<int64_t, 3> block = {32 * cfg.warps, 1, 1};
  gpu::GPUFuncOp func =
      createKernelShell(builder, loc, module, name, mainArgs, block);
  // An optional register cap (more CTAs per SM). Not on by default: with
  // .maxnreg 64 ptxas spills the M > 8 variants (and, scheduling loads
  // more eagerly, even some it fits in 56 registers without the cap).
  if (config.getMaxRegisters() > 0)
    func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                  builder.getI32IntegerAttr(config.getMaxRegisters()));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(func.getBody().front().getTerminator());

  auto args = func.getArguments();
  size_t next = 0;
  Value lhs;
  if (lhsQ) {
    lhsQ->codes = args[next++];
    lhsQ->scales = args[next++];
    if (lhsQ->numComponents() == 3)
      lhsQ->extra = args[next++];
  } else {
    lhs = args[next++];
  }
  weight.codes = args[next++];
  weight.scales = args[next++];
  if (weight.numComponents() == 3)
    weight.extra = args[next++];
  if (entries) {
    entries->values = args[next++];
    entries->indices = args[next++];
  }
  if (epi && epi->hasOutliers()) {
    epi->summedT = args[next++];
    epi->outlierValues = args[next++];
    epi->outlierIndices = args[next++];
  }
  if (epi && spec.epilogue->accElementType)
    epi->acc = args[next++];
  Value result = args[next++];

  if (epi)
    epi->entryBytes = planOutlierTail(spec, target, cfg, *epi);
  DecodeKernelEmitter emitter(builder, loc, cfg, weight, lhsQ, lhs, result,
                              epi, entries);
  emitter.emit(func);
  // sharedBuffer's invariant: dynamic shared memory only in a kernel
  // without static workgroup buffers (see there).
  assert((emitter.dynamicBytes == 0 ||
          func.getWorkgroupAttributions().empty()) &&
         "a decode kernel mixes static and dynamic shared memory");

  KernelPlan plan;
  KernelLaunch launch;
  launch.func = func;
  launch.grid = {cfg.numCTAs(), 1, 1};
  launch.block = block;
  launch.sharedBytes = emitter.dynamicBytes;
  launch.variant = lhsQ ? "decode_w4a4" : "decode_w4a16";
  if (cfg.wgmma)
    launch.variant += "_wgmma";
  if (entries)
    launch.variant += cfg.entrySparse     ? "_sparse"
                      : entries->packed   ? "_patch_packed"
                      : cfg.entryPatch    ? "_patch"
                                          : "_entries";
  if (epi)
    launch.variant += "_epilogue";
  if (epi && epi->outliersInTail())
    launch.variant += "_tail";
  for (const KernelArg &arg : mainArgs)
    launch.argNames.push_back(arg.name);
  plan.launches.push_back(launch);
  if (cfg.splitK > 1) {
    plan.scratch.push_back(partials);
    plan.launches.push_back(buildSplitKFinalize(
        builder, loc, module, (name + "_finalize").str(), partials,
        spec.args.back(), spec.m, spec.n));
  }
  return plan;
}
