//===- PrefillMatmulKernel.cpp - tensor-core matmul for prefill shapes ---===//
//
// C[M, N] = A[M, K] * W[N, K]^T with W quantized (MXFP4, NVFP4, macro-scaled
// MXFP4) and A bf16 (W4A16) or quantized too (W4A4), on mma.sync m16n8k16
// bf16 with f32 accumulators: an Ampere-style multistage GEMM for chips
// without FP4 tensor cores (sm_80..sm_90). HiF4, f16/f32 activations and
// MXFP4 blocks that are not a multiple of 16 are declined (the reference
// kernel takes them).
//
// CTA tile BM x BN x BK, warps WarpsM x WarpsN each owning a WM x WN block
// of C. Per K tile, cp.async copies (zero-filling everything outside M, N,
// K) into a `stages`-deep ring in dynamic shared memory:
//   * A bf16 [BM][BK] (W4A16), 16-byte chunks XOR-swizzled by row;
//   * the packed codes of W [BN][BK/2] (and of A for W4A4), 32-byte groups
//     XOR-swizzled by row.
// Block scales are read from global memory into registers one tile ahead.
//
// The key layout choice is a K permutation inside every 64-wide K group:
// lane (g = lane / 4, q = lane % 4) owns the 16 consecutive elements
// [16q, 16q + 16) of the group, and mma step s (0..3) maps its k slots
// {2q, 2q+1, 2q+8, 2q+9} to elements 16q + 4s + {0, 1, 2, 3}. A dot product
// does not care about the order of k, so both operands just have to agree;
// in exchange every lane reads its weight codes as one 8-byte word per
// 8-row slice (no ldmatrix, no code shuffles) and its A elements as 16-byte
// shared loads, and dequantizes the codes straight into mma B fragments
// (FragmentDequant.h). W is dequantized where it is used, so it never
// exists in bf16 anywhere.
//
// W4A4: the A codes tile is dequantized cooperatively (each element once per
// CTA, not once per warp column) into a double-buffered bf16 tile with the
// same swizzle as the W4A16 A tile, one tile ahead of the mma loop; the mma
// loop is then the W4A16 one.
//
// prefill-dequant=shared (the default) moves the weight dequantization out
// of the mma loop, where every warp column repeated it and the in-register
// B fragments made the loop issue-bound: per K tile, all threads dequantize
// the W codes tile once into a double-buffered bf16 tile [2][BN][BK] (same
// chunk swizzle as the A tile), one tile ahead of the mma loop like the
// W4A4 A tile, with one barrier per K tile. The mma loop then runs in plain
// K order on ldmatrix.x4 (A: 16x16 per m tile; W: 16n x 16k = two n8
// tiles), 6 ldmatrix per 16 mma.sync at a 64x32 warp tile. It needs 3
// stages and warp tiles that are multiples of 16x16; other configurations
// fall back to the register form ("registers"), described above.
//
// A fused correction chain may add a 2:4-sparse second lhs
// (MatmulKernelSpec::sparseLhs, the activation's residual, compressed by
// the activation prep): its values and metadata tiles ride the same ring,
// and per k32 step its mma.sp m16n8k32 (ordered metadata) adds into the
// same accumulators from the same dequantized W fragments
// (mmaTileSharedSparse); variant suffix _sparse24.
//
// Scales are exact in bf16 up to a power of two, which, with the NVFP4
// tensor scales, is applied to the f32 accumulators in the epilogue; the
// epilogue converts to the result type and stores with row/column guards.
// MXFP4 weights take a one-multiply dequantization when all scales of a
// warp's tile are at most 2 (a warp-uniform branch per K tile), else two.
// Macro factors are not exact in bf16: they scale f32 partial sums, folded
// into the accumulators at macro-block ends (or once, in the epilogue, when
// a single macro block spans K).
//
//===----------------------------------------------------------------------===//

#include "BF16PairDequant.h"
#include "ElementwiseKernel.h"
#include "FragmentDequant.h"
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

#include <cmath>
#include <numeric>
#include <tuple>

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// Elements of a K group: the unit of the K permutation (4 mma steps).
constexpr int64_t kGroup = 64;

/// Static facts of one kernel: tiles, warp layout, shared memory plan.
struct PrefillPlan {
  int64_t m, n, k;
  int64_t bm, bn, bk, warpsM, warpsN, stages, threads;
  /// Warp groups splitting each K tile's mma steps (the shared form): group
  /// w takes steps [w, w + 1) * steps / warpsK; their sums meet in shared
  /// memory before the epilogue (chooseWarpsK).
  int64_t warpsK = 1;
  /// Warp tile and its mma tiles (16 rows, 8 columns).
  int64_t wm, wn, mTiles, nTiles;
  /// K groups per tile and K tiles.
  int64_t groups, numK;
  bool w4a4;
  /// cp.async size of code chunks: 16 bytes when rows of codes are 16-byte
  /// aligned (K % 32 == 0), else 8.
  int64_t codeChunk;
  /// Shared memory: byte offsets and sizes.
  int64_t aStageBytes, bStageBytes, aBufBytes;
  int64_t aOffset, bOffset, aBufOffset, sharedBytes;
  /// Macro-scaled operands. A factor per row covering all of K is applied in
  /// the epilogue (*RowFactor); shorter macro blocks (K tiles per block in
  /// *MacroTiles) scale f32 partial sums that are folded into the
  /// accumulators every flushTiles tiles (0: no partial sums).
  bool lhsRowFactor = false, rhsRowFactor = false;
  int64_t lhsMacroTiles = 0, rhsMacroTiles = 0, flushTiles = 0;
  /// prefill-dequant=shared: W is dequantized once per CTA into a
  /// double-buffered bf16 tile [2][BN][BK] (at bBufOffset) that the mma
  /// loop reads with ldmatrix, in plain K order.
  bool shared = false;
  int64_t bBufBytes = 0, bBufOffset = 0;
  /// The shared form on sm_90a's warp-group MMA (planWgmma): the warp
  /// groups (4 warps each) tile C as (BM / 64) x wgN blocks of 64 rows x
  /// BN / wgN columns, each issuing wgmma m64n(BN / wgN)k16 from the bf16
  /// A tile and the dequantized W tile, both stored in the 128-byte-swizzle
  /// atom layout (WarpgroupMMA.h). The warp tile fields then describe a
  /// warp's accumulator slice: 16 rows x BN / wgN (one m tile, wn / 8 n
  /// tiles).
  bool wgmma = false;
  int64_t wgN = 1;
  /// The wgmma form's two-slot ring (planWgmma): the bf16 A tile of K tile
  /// kt + 1 is issued at the top of iteration kt, after the barrier that
  /// follows every warp group's wait for the wgmma reading its slot, and
  /// the weight codes of tile kt + 2 (dequantized one tile ahead) with it;
  /// `stages` is then 2.
  bool lateA = false;
  /// MatmulKernelSpec::lhsGroups: row groups of the bf16 lhs, each with its
  /// own A tile in a ring slot ([stages * groups] slots), all issued into
  /// the same accumulators (wgmma form only).
  int64_t lhsGroups = 1;
  /// MatmulKernelSpec::sparseLhs: the compressed 2:4 lhs tiles ride the
  /// cp.async ring next to A: values [stages][BM][BK/2] bf16 (16-byte
  /// chunks swizzled for ldmatrix, sparseChunkSwizzle) and metadata
  /// [stages][BM][BK/8] i8.
  bool sparse = false;
  int64_t spStageBytes = 0, metaStageBytes = 0, spOffset = 0, metaOffset = 0;
  /// Weight entries (MatmulKernelSpec::WeightEntries) written into the
  /// shared W tile after its dequantization; entryCount == 0: none.
  int64_t entryBlock = 0, entryCount = 0;
  /// Entries of one weight row in a 32-element unit: one block's (a block
  /// of 32 or more holds the unit), or two blocks' (16).
  int64_t entriesPerUnit() const {
    return entryBlock == 16 ? 2 * entryCount : entryCount;
  }
  /// Threads' rounds over the W tile's units (dequantizeTile).
  int64_t weightRounds() const {
    return llvm::divideCeil(bn * (bk / 32), threads);
  }
};

/// Builds the kernel body; one instance per kernel.
class PrefillEmitter {
public:
  PrefillEmitter(OpBuilder &b, Location loc, const PrefillPlan &p,
                 const MatmulKernelSpec &spec,
                 std::optional<BF16FragmentDequant> lhsDequant,
                 BF16FragmentDequant rhsDequant)
      : b(b), loc(loc), p(p), spec(spec), lhsDequant(lhsDequant),
        rhsDequant(rhsDequant) {}

  void emit(gpu::GPUFuncOp func);

private:
  // Index arithmetic.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, idx(y)); }
  Value mul(Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, idx(y)).getResult();
  }
  Value div(Value x, int64_t y) {
    return y == 1 ? x : arith::DivUIOp::create(b, loc, x, idx(y)).getResult();
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, idx(y));
  }
  Value xorI(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value andI(Value x, int64_t y) {
    return arith::AndIOp::create(b, loc, x, idx(y));
  }
  Value shr(Value x, int64_t y) {
    return arith::ShRUIOp::create(b, loc, x, idx(y));
  }
  Value minU(Value x, int64_t y) {
    return arith::MinUIOp::create(b, loc, x, idx(y));
  }
  Value ult(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 idx(y));
  }
  Value andB(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }

  /// XOR mask of the 32-byte K groups of codes row `row` (only its low bits
  /// matter): physical group = logical group ^ mask, so that the 8-byte
  /// reads of 4 consecutive rows by a half-warp hit distinct banks.
  Value codeGroupSwizzle(Value row);
  /// Physical 16-byte chunk of logical chunk `chunk` of a bf16 row.
  Value bf16ChunkSwizzle(Value chunk, Value row) {
    return xorI(chunk, andI(row, 7));
  }
  /// Indices into a bf16 tile view (`perChunk` = 8 for the bf16 views, 4
  /// for the i32 ones) of the first element of logical 16-byte chunk
  /// `chunk` of row `row` in slot `slot`: [slot][row][chunk ^ (row & 7)]
  /// for mma.sync, [slot][chunk / 8][row][(chunk % 8) ^ (row & 7)] in the
  /// wgmma atom layout (add an element offset to the last index).
  SmallVector<Value, 4> tileIndex(Value slot, Value row, Value chunk,
                                  int64_t perChunk) {
    if (!p.wgmma)
      return {slot, row, mul(bf16ChunkSwizzle(chunk, row), perChunk)};
    return {slot, div(chunk, 8), row,
            mul(bf16ChunkSwizzle(rem(chunk, 8), row), perChunk)};
  }
  /// Physical 16-byte chunk of the compressed sparse tile's rows (BK / 16
  /// chunks): 8 consecutive rows read by one ldmatrix matrix land in 8
  /// distinct 16-byte bank slots. Rows of 4 chunks (64 bytes) share a
  /// 128-byte bank line in pairs, so the XOR takes row bits 1..2.
  Value sparseChunkSwizzle(Value chunk, Value row) {
    if (p.bk / 16 >= 8)
      return bf16ChunkSwizzle(chunk, row);
    return xorI(chunk, andI(shr(row, 1), 3));
  }

  /// Source row and column of a cp.async chunk of `chunk` elements at
  /// (row, col) of a [totalRows, cols] buffer read in tiles of `tileRows`
  /// rows, and its source element count: 0 (zero fill, address clamped
  /// into the buffer) outside, null when it can never be outside.
  std::tuple<Value, Value, Value> zeroFillSource(Value row, int64_t totalRows,
                                                 int64_t tileRows, Value col,
                                                 int64_t cols, int64_t chunk);
  /// cp.async of K tile `tile` (index) into ring slot `stage`: the lhs
  /// part (issueLhs), the weight codes and the packed sparse tile.
  void issueTile(Value tile, Value stage);
  void issueLhs(Value tile, Value stage);
  void issueWeightCodes(Value tile, Value stage) {
    issueCodeRows(rhsArgs[0], bCodes, n0, p.bn, p.n, tile, stage);
  }
  /// `srcRowOffset`: added to the (clamped) source row, for row group g of
  /// a stacked lhs (g * M).
  void issueBF16Rows(Value src, Value view, Value rowBase, int64_t rows,
                     int64_t totalRows, Value tile, Value stage,
                     int64_t srcRowOffset = 0);
  void issueCodeRows(Value src, Value view, Value rowBase, int64_t rows,
                     int64_t totalRows, Value tile, Value stage);
  /// The sparse lhs' values and metadata of tile `tile` into slot `stage`.
  void issueSparseRows(Value tile, Value stage);
  /// mmaTileShared with the sparse lhs: per k32 step, the W fragments of
  /// each n8 tile (one ldmatrix.x4) feed the dense lhs' two mma.sync steps
  /// and the sparse lhs' mma.sp.
  SmallVector<Value> mmaTileSharedSparse(Value aView, Value aSlot,
                                         Value bSlot, ValueRange acc);
  /// The sparse lhs' mma.sp work of k32 step `s` of the tile in slot
  /// `slot`; `bw` holds each n8 tile's W fragment of the step.
  void mmaSparseStep(Value s, Value slot, ArrayRef<std::array<Value, 4>> bw,
                     SmallVector<Value> &acc);
  /// The sparse lhs' metadata register of k32 step `s` of slot `slot` for
  /// this lane, the warp's 16 rows starting at `rows` (mma.sp m16n8k32's
  /// layout under selector 0, which wgmma.sp's k32 form shares per warp).
  Value sparseMetadata(Value s, Value slot, Value rows);
  /// Emits `body(u, round)` for the units u = tid + round * threads < count
  /// (guarded in the last round when count % threads != 0).
  void forEachThreadUnit(int64_t count,
                         function_ref<void(Value, int64_t)> body);

  /// Raw scale bytes (i32) this lane needs for tile `tile`.
  SmallVector<Value> loadRhsScales(Value tile);
  SmallVector<Value> loadLhsScales(Value tile) {
    return loadUnitScales(*lhsDequant, lhsArgs[1], m0, p.bm, p.m, tile);
  }
  /// Scale bytes (i32) of the 32-code units this thread dequantizes in
  /// dequantizeTile for tile `tile` of a [totalRows, K] operand whose CTA
  /// rows start at `rowBase`.
  SmallVector<Value> loadUnitScales(const BF16FragmentDequant &dq,
                                    Value scalesArg, Value rowBase,
                                    int64_t rows, int64_t totalRows,
                                    Value tile);
  /// The weight entries of the units this thread dequantizes for tile
  /// `tile`: per round, entriesPerUnit() bf16 values then as many i8
  /// indices (loaded a tile ahead with the scales).
  SmallVector<Value> loadUnitEntries(Value tile);
  /// Writes the unit's weight entries (`entries`: this round's values and
  /// indices) over its dequantized elements in bf16 buffer `buf`.
  void writeUnitEntries(ValueRange entries, Value row, Value unit,
                        Value kUnit, Value buf);
  /// `dq`'s multiplier for `byte`, zero when the block starts at or after K
  /// (its codes were zero-filled; a NaN scale must not leak into C).
  Value multiplier(const BF16FragmentDequant &dq, Value byte, Value kStart,
                   bool fast = false);

  /// W4A4: dequantizes the A codes of tile `tile` in ring slot `stage` into
  /// bf16 buffer `buf`.
  void dequantizeLhsTile(Value tile, Value stage, Value buf,
                         ValueRange scales) {
    dequantizeTile(*lhsDequant, aCodes32, aBuf32, p.bm, tile, stage, buf,
                   scales, ValueRange{});
  }
  /// Cooperative dequantization of the codes tile in ring slot `stage` of
  /// `codes32` ([stages][rows][BK/8] i32) into bf16 buffer `buf` of
  /// `buf32` ([2][rows][BK/2] i32), 16-byte chunks swizzled as the W4A16 A
  /// tile (bf16ChunkSwizzle), so that ldmatrix and the fragment loads read
  /// it without bank conflicts.
  /// `entries` (W only): loadUnitEntries' values for this tile.
  void dequantizeTile(const BF16FragmentDequant &dq, Value codes32,
                      Value buf32, int64_t rows, Value tile, Value stage,
                      Value buf, ValueRange scales, ValueRange entries);
  /// prefill-dequant=shared: the mma work of one K tile from the bf16 A
  /// tile (`aView` slot `aSlot`, [*][BM][BK] bf16) and the bf16 W tile
  /// (bBuf slot `bSlot`), both read with ldmatrix.x4.
  SmallVector<Value> mmaTileShared(Value aView, Value aSlot, Value bSlot,
                                   ValueRange acc);
  /// The wgmma form of mmaTileShared: this warp group's 64 rows of the
  /// bf16 A tile (slot `aSlot` of aTile or, W4A4, aBuf) times its wn
  /// columns of the W tile (bBuf slot `bSlot`), BK / 16 wgmma m64n<wn>k16
  /// steps; returns the new accumulator struct (the caller fences, commits
  /// and waits).
  /// `sparseMeta`: with the sparse lhs, each k32 step's metadata register
  /// (sparseMetadata), loaded before the wgmma fence: a register written
  /// between the fence and the wgmma reading it makes ptxas insert a
  /// warpgroup.arrive there.
  Value mmaTileWgmma(Value aSlot, Value bSlot, Value acc,
                     ArrayRef<Value> sparseMeta = {});
  /// ldmatrix.x4 (no transpose) of bf16 `view` at `indices`: the 4 i32
  /// registers of this lane.
  std::array<Value, 4> ldmatrixX4(Value view, ValueRange indices);
  /// The mma work of one K tile; returns the new accumulators. `fast`:
  /// the one-multiply dequantization (BF16FragmentDequant::hasFastForm).
  SmallVector<Value> mmaTile(Value tile, Value aView, Value aSlot,
                             Value stage, ValueRange rhsScales,
                             ValueRange acc, bool fast);
  /// mmaTile in its fast form when every lane of the warp may use it (a
  /// warp-uniform branch per tile), else in the general form.
  SmallVector<Value> mmaTileDispatch(Value tile, Value aView, Value aSlot,
                                     Value stage, ValueRange rhsScales,
                                     ValueRange acc);
  void epilogue(ValueRange acc);

  /// Macro factors (f32) of the lane's output columns (nTiles x {2q, 2q+1})
  /// and rows (mTiles x {g, g + 8}) for macro block `block`.
  SmallVector<Value> loadColumnFactors(Value block);
  SmallVector<Value> loadRowFactors(Value block);
  /// After K tile `kt`: at the end of a flush period (or of K), returns
  /// acc + factors * sums and zero partial sums, else acc and sums.
  SmallVector<Value> flushPartials(Value kt, ValueRange acc, ValueRange sums,
                                   Value zero);
  /// Element e of mma tile (i, jn) times its row and column factors.
  Value applyFactors(Value v, int64_t i, int64_t jn, int64_t e,
                     ArrayRef<Value> colFactors, ArrayRef<Value> rowFactors);

  /// An mma.sync m16n8k16 bf16 step: 4 A words, 2 B words, vector<4xf32>.
  Value mma(ArrayRef<Value> a, ArrayRef<Value> bw, Value c);
  /// An mma.sp m16n8k32 bf16 step (buildMmaSpBF16): 4 compressed A words,
  /// 4 B words, the metadata word, vector<4xf32>.
  Value mmaSp(ArrayRef<Value> a, ArrayRef<Value> bw, Value meta, Value c);

  OpBuilder &b;
  Location loc;
  const PrefillPlan &p;
  const MatmulKernelSpec &spec;
  std::optional<BF16FragmentDequant> lhsDequant;
  BF16FragmentDequant rhsDequant;

  // Kernel arguments.
  SmallVector<Value> lhsArgs, rhsArgs;
  Value entryValues, entryIndices;
  Value sparseValues, sparseMeta;
  Value result;
  // Thread coordinates.
  Value tid, lane, m0, n0, g, q, warpRow, warpCol;
  /// This warp's K group (PrefillPlan::warpsK).
  Value warpK;
  // Shared memory views (i32 views for the reads).
  Value aTile, aTile32, aCodes, aCodes32, aBuf32, bCodes, bCodes32;
  // prefill-dequant=shared: bf16 views of the dequantized tiles.
  Value aBuf, bBuf, bBuf32;
  // The sparse lhs ring (bf16 values; metadata as i8 and i16).
  Value spTile, metaTile, metaTile16;
  /// wgmma: the shared-window byte address (i64) of dynamic shared memory.
  Value smemAddress;
};

} // namespace

Value PrefillEmitter::codeGroupSwizzle(Value row) {
  // Rows of 32 * groups bytes: a half-warp's 8-byte reads touch 4
  // consecutive rows; XOR the group index with row bits so that they fall
  // into distinct 32-byte bank quarters.
  if (p.groups == 1)
    return idx(0);
  if (p.groups == 2)
    return andI(shr(row, 1), 1);
  return andI(row, 3);
}

void PrefillEmitter::forEachThreadUnit(
    int64_t count, function_ref<void(Value, int64_t)> body) {
  for (int64_t round = 0; round * p.threads < count; ++round) {
    int64_t base = round * p.threads;
    Value u = add(tid, base);
    if (base + p.threads <= count) {
      body(u, round);
      continue;
    }
    auto ifOp = scf::IfOp::create(b, loc, ult(u, count), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body(u, round);
  }
}

std::tuple<Value, Value, Value>
PrefillEmitter::zeroFillSource(Value row, int64_t totalRows, int64_t tileRows,
                               Value col, int64_t cols, int64_t chunk) {
  Value valid;
  if (p.k % p.bk != 0) {
    valid = ult(col, cols);
    col = select(valid, col, idx(0));
  }
  if (totalRows % tileRows != 0) {
    Value rowIn = ult(row, totalRows);
    valid = valid ? andB(valid, rowIn) : rowIn;
    row = minU(row, totalRows - 1);
  }
  Value count = valid ? select(valid, idx(chunk), idx(0)) : Value();
  return {row, col, count};
}

void PrefillEmitter::issueBF16Rows(Value src, Value view, Value rowBase,
                                   int64_t rows, int64_t totalRows,
                                   Value tile, Value stage,
                                   int64_t srcRowOffset) {
  // 16-byte chunks of 8 elements; K % 16 == 0 so a chunk is all in or all
  // out of range.
  int64_t chunksPerRow = p.bk / 8;
  Value kBase = mul(tile, p.bk);
  forEachThreadUnit(rows * chunksPerRow, [&](Value u, int64_t) {
    Value row = div(u, chunksPerRow);
    Value chunk = rem(u, chunksPerRow);
    Value gRow = add(rowBase, row);
    Value gK = add(kBase, mul(chunk, 8));
    auto [srcRow, srcK, srcElements] =
        zeroFillSource(gRow, totalRows, rows, gK, p.k, 8);
    srcRow = add(srcRow, srcRowOffset);
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), view,
        tileIndex(stage, row, chunk, 8), src, ValueRange{srcRow, srcK},
        b.getIndexAttr(8), srcElements, b.getUnitAttr());
  });
}

void PrefillEmitter::issueCodeRows(Value src, Value view, Value rowBase,
                                   int64_t rows, int64_t totalRows,
                                   Value tile, Value stage) {
  int64_t rowBytes = p.bk / 2;
  int64_t chunksPerRow = rowBytes / p.codeChunk;
  Value byteBase = mul(tile, rowBytes);
  forEachThreadUnit(rows * chunksPerRow, [&](Value u, int64_t) {
    Value row = div(u, chunksPerRow);
    Value chunk = rem(u, chunksPerRow);
    Value lb = mul(chunk, p.codeChunk);
    Value gRow = add(rowBase, row);
    Value gByte = add(byteBase, lb);
    // Element 2 * gByte is the chunk's first; chunks never straddle K.
    auto [srcRow, srcByte, srcElements] =
        zeroFillSource(gRow, totalRows, rows, gByte, p.k / 2, p.codeChunk);
    Value group = xorI(div(lb, 32), codeGroupSwizzle(row));
    Value dstByte = add(mul(group, 32), rem(lb, 32));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), view,
        ValueRange{stage, row, dstByte}, src, ValueRange{srcRow, srcByte},
        b.getIndexAttr(p.codeChunk), srcElements,
        p.codeChunk == 16 ? b.getUnitAttr() : UnitAttr());
  });
}

void PrefillEmitter::issueSparseRows(Value tile, Value stage) {
  // Values: 16-byte chunks of 8 compressed elements (16 logical ones; K %
  // 32 == 0, so a chunk is all in or all out of range).
  int64_t chunksPerRow = p.bk / 16;
  Value colBase = mul(tile, p.bk / 2);
  forEachThreadUnit(p.bm * chunksPerRow, [&](Value u, int64_t) {
    Value row = div(u, chunksPerRow);
    Value chunk = rem(u, chunksPerRow);
    auto [srcRow, srcCol, srcElements] = zeroFillSource(
        add(m0, row), p.m, p.bm, add(colBase, mul(chunk, 8)), p.k / 2, 8);
    Value dstCol = mul(sparseChunkSwizzle(chunk, row), 8);
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), spTile,
        ValueRange{stage, row, dstCol}, sparseValues,
        ValueRange{srcRow, srcCol}, b.getIndexAttr(8), srcElements,
        b.getUnitAttr());
  });
  // Metadata: 4-byte chunks (32 logical elements). Zero-filled ones read
  // back, after the XOR, as the valid positions (0, 1) of zero values.
  int64_t metaChunks = p.bk / 32;
  Value byteBase = mul(tile, p.bk / 8);
  forEachThreadUnit(p.bm * metaChunks, [&](Value u, int64_t) {
    Value row = div(u, metaChunks);
    Value chunk = rem(u, metaChunks);
    Value lb = mul(chunk, 4);
    auto [srcRow, srcByte, srcElements] = zeroFillSource(
        add(m0, row), p.m, p.bm, add(byteBase, lb), p.k / 8, 4);
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), metaTile,
        ValueRange{stage, row, lb}, sparseMeta, ValueRange{srcRow, srcByte},
        b.getIndexAttr(4), srcElements, UnitAttr());
  });
}

void PrefillEmitter::issueTile(Value tile, Value stage) {
  issueLhs(tile, stage);
  issueWeightCodes(tile, stage);
  if (p.sparse)
    issueSparseRows(tile, stage);
}

void PrefillEmitter::issueLhs(Value tile, Value stage) {
  if (p.w4a4) {
    issueCodeRows(lhsArgs[0], aCodes, m0, p.bm, p.m, tile, stage);
  } else if (p.lhsGroups == 1) {
    issueBF16Rows(lhsArgs[0], aTile, m0, p.bm, p.m, tile, stage);
  } else {
    // Row group g of the stacked lhs into slot stage * groups + g; rows
    // past M of a group are zero-filled like any tail.
    for (int64_t g = 0; g < p.lhsGroups; ++g)
      issueBF16Rows(lhsArgs[0], aTile, m0, p.bm, p.m, tile,
                    add(mul(stage, p.lhsGroups), g), g * p.m);
  }
}

Value PrefillEmitter::multiplier(const BF16FragmentDequant &dq, Value byte,
                                 Value kStart, bool fast) {
  Value mult = dq.emitMultiplier(b, loc, byte, fast);
  if (p.k % p.bk == 0)
    return mult;
  // bf16x2 (+0, +0): the zero-filled codes then give 0 even when the
  // clamped scale byte is NaN.
  return select(ult(kStart, p.k), mult, i32(0));
}

/// Loads byte (row, col) of an i8 memref as i32.
static Value loadByte(OpBuilder &b, Location loc, Value memref, Value row,
                      Value col) {
  Value byte = memref::LoadOp::create(b, loc, memref, ValueRange{row, col});
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

SmallVector<Value> PrefillEmitter::loadRhsScales(Value tile) {
  // Lane (g, q) of n-slice jn needs, per K group, the scale of row
  // n0 + warpCol + 8 jn + g covering elements kg * 64 + 16 q .. + 16.
  SmallVector<Value> bytes;
  int64_t blocks = p.k / rhsDequant.getBlockSize();
  Value kLane = add(mul(tile, p.bk), mul(q, 16));
  for (int64_t jn = 0; jn < p.nTiles; ++jn) {
    Value row = add(add(n0, warpCol), add(g, 8 * jn));
    if (p.n % p.bn != 0)
      row = minU(row, p.n - 1);
    for (int64_t kg = 0; kg < p.groups; ++kg) {
      Value block =
          div(add(kLane, kg * kGroup), rhsDequant.getBlockSize());
      if (p.k % p.bk != 0)
        block = minU(block, blocks - 1);
      bytes.push_back(loadByte(b, loc, rhsArgs[1], row, block));
    }
  }
  return bytes;
}

SmallVector<Value> PrefillEmitter::loadUnitScales(
    const BF16FragmentDequant &dq, Value scalesArg, Value rowBase,
    int64_t rows, int64_t totalRows, Value tile) {
  // One unit = 32 codes (16 bytes) of a row: one scale per 16-element half,
  // or one for both when blocks are multiples of 32 elements.
  SmallVector<Value> bytes;
  int64_t unitsPerRow = p.bk / 32;
  int64_t count = rows * unitsPerRow;
  int64_t bs = dq.getBlockSize();
  int64_t blocks = p.k / bs;
  for (int64_t base = 0; base < count; base += p.threads) {
    Value u = add(tid, base);
    // Units past `count` (last round) load a clamped, unused byte.
    if (base + p.threads > count)
      u = minU(u, count - 1);
    Value row = add(rowBase, div(u, unitsPerRow));
    if (totalRows % rows != 0)
      row = minU(row, totalRows - 1);
    Value k = add(mul(tile, p.bk), mul(rem(u, unitsPerRow), 32));
    for (int64_t h = 0; h < (bs % 32 == 0 ? 1 : 2); ++h) {
      Value block = div(add(k, 16 * h), bs);
      if (p.k % p.bk != 0)
        block = minU(block, blocks - 1);
      bytes.push_back(loadByte(b, loc, scalesArg, row, block));
    }
  }
  return bytes;
}

void PrefillEmitter::dequantizeTile(const BF16FragmentDequant &dq,
                                    Value codes32, Value buf32, int64_t rows,
                                    Value tile, Value stage, Value buf,
                                    ValueRange scales, ValueRange entries) {
  int64_t unitsPerRow = p.bk / 32;
  int64_t count = rows * unitsPerRow;
  int64_t bs = dq.getBlockSize();
  int64_t perUnit = bs % 32 == 0 ? 1 : 2;
  VectorType v4i32 = VectorType::get({4}, b.getI32Type());
  forEachThreadUnit(count, [&](Value u, int64_t round) {
    Value row = div(u, unitsPerRow);
    Value unit = rem(u, unitsPerRow);
    // Source: 16-byte half (unit % 2) of 32-byte group unit / 2.
    Value group = xorI(div(unit, 2), codeGroupSwizzle(row));
    Value srcWord = add(mul(group, 8), mul(rem(unit, 2), 4));
    Value words = vector::LoadOp::create(
        b, loc, v4i32, codes32, ValueRange{stage, row, srcWord},
        /*nontemporal=*/false, llvm::Align(16));
    Value kUnit = add(mul(tile, p.bk), mul(unit, 32));
    // The general (two-multiply) MXFP4 form only: the one-multiply form
    // behind a per-thread branch raised the shared-form kernel from 126 to
    // 146 registers (one CTA per SM instead of two) to save 16 of ~110
    // instructions per unit.
    for (int64_t t = 0; t < 4; ++t) {
      int64_t h = perUnit == 2 ? t / 2 : 0;
      Value mult = multiplier(dq, scales[round * perUnit + h],
                              add(kUnit, 16 * h));
      Value word =
          vector::ExtractOp::create(b, loc, words, ArrayRef<int64_t>{t});
      std::array<Value, 4> pairs =
          dq.emitDequantWord(b, loc, word, mult);
      // Word t holds elements 8t..8t+7 of the unit: bf16 chunk 4u + t.
      Value chunk = add(mul(unit, 4), t);
      SmallVector<Value, 4> at = tileIndex(buf, row, chunk, 4);
      Value out = vector::FromElementsOp::create(b, loc, v4i32, pairs);
      vector::StoreOp::create(b, loc, out, buf32, at,
                              /*nontemporal=*/false, llvm::Align(16));
    }
    if (!entries.empty()) {
      int64_t perRound = 2 * p.entriesPerUnit();
      writeUnitEntries(entries.slice(round * perRound, perRound), row, unit,
                       kUnit, buf);
    }
  });
}

SmallVector<Value> PrefillEmitter::loadUnitEntries(Value tile) {
  // The unit's entries are contiguous in [N, blocks, entries] (one block,
  // or the unit's two blocks of 16): one vector load per operand.
  SmallVector<Value> out;
  int64_t unitsPerRow = p.bk / 32;
  int64_t count = p.bn * unitsPerRow;
  int64_t perUnit = p.entriesPerUnit();
  int64_t blocks = p.k / p.entryBlock;
  for (int64_t base = 0; base < count; base += p.threads) {
    Value u = add(tid, base);
    if (base + p.threads > count)
      u = minU(u, count - 1);
    Value row = add(n0, div(u, unitsPerRow));
    if (p.n % p.bn != 0)
      row = minU(row, p.n - 1);
    Value k = add(mul(tile, p.bk), mul(rem(u, unitsPerRow), 32));
    Value block = div(k, p.entryBlock);
    // Units past K (a partial last tile) load a clamped, unused block.
    if (p.k % p.bk != 0)
      block = minU(block, blocks - (p.entryBlock == 16 ? 2 : 1));
    // The offset is a multiple of the load's size (K % 32 == 0: an even
    // block of 16 and an even number of blocks per row).
    for (Value memref : {entryValues, entryIndices})
      llvm::append_range(out, loadElements(b, loc, memref,
                                           ValueRange{row, block, idx(0)},
                                           perUnit));
  }
  return out;
}

void PrefillEmitter::writeUnitEntries(ValueRange entries, Value row,
                                      Value unit, Value kUnit, Value buf) {
  // Each entry replaces its element of the tile: the quantized weight is
  // +-0 there (the caller's proof), so the replacement is the sum. The same
  // thread stored the unit just before, so no barrier orders the two.
  int64_t perUnit = p.entriesPerUnit();
  Value outsideK = p.k % p.bk != 0 ? arith::CmpIOp::create(
                                         b, loc, arith::CmpIPredicate::uge,
                                         kUnit, idx(p.k))
                                         .getResult()
                                   : Value();
  Value unitOffset =
      p.entryBlock > 32 ? rem(kUnit, p.entryBlock) : Value();
  for (int64_t j = 0; j < perUnit; ++j) {
    Value value = entries[j];
    Value index = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                               entries[perUnit + j]);
    // The entry's column within the unit. An index is < the block size by
    // the op's contract; masking it keeps a corrupt one inside the tile
    // (a wrong product, never a stray shared-memory store).
    Value column = index;
    Value skip = outsideK;
    if (p.entryBlock == 16) {
      column = add(andI(index, 15), 16 * (j / p.entryCount));
    } else if (p.entryBlock == 32) {
      column = andI(index, 31);
    } else if (unitOffset) {
      // A block wider than the unit: only the unit holding the entry.
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          index, unitOffset);
      column = arith::SubIOp::create(b, loc, index, unitOffset);
      Value beyond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           column, idx(32));
      Value out = arith::OrIOp::create(b, loc, below, beyond);
      skip = skip ? arith::OrIOp::create(b, loc, skip, out).getResult() : out;
      column = andI(column, 31);
    }
    Value chunk = add(mul(unit, 4), div(column, 8));
    SmallVector<Value, 4> at = tileIndex(buf, row, chunk, 8);
    at.back() = add(at.back(), rem(column, 8));
    auto store = [&] { memref::StoreOp::create(b, loc, value, bBuf, at); };
    if (!skip) {
      store();
      continue;
    }
    auto ifOp = scf::IfOp::create(b, loc, skip, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    store();
  }
}

Value PrefillEmitter::mma(ArrayRef<Value> a, ArrayRef<Value> bw, Value c) {
  SmallVector<Value> cs;
  for (int64_t i = 0; i < 4; ++i)
    cs.push_back(vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{i}));
  SmallVector<Value, 4> d = buildMmaBF16(b, loc, a, bw, cs);
  return vector::FromElementsOp::create(b, loc, c.getType(), d);
}

Value PrefillEmitter::mmaSp(ArrayRef<Value> a, ArrayRef<Value> bw, Value meta,
                            Value c) {
  SmallVector<Value> cs;
  for (int64_t i = 0; i < 4; ++i)
    cs.push_back(vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{i}));
  SmallVector<Value, 4> d = buildMmaSpBF16(b, loc, a, bw, cs, meta);
  return vector::FromElementsOp::create(b, loc, c.getType(), d);
}

SmallVector<Value> PrefillEmitter::mmaTile(Value tile, Value aView,
                                           Value aSlot, Value stage,
                                           ValueRange rhsScales,
                                           ValueRange accIn, bool fast) {
  SmallVector<Value> acc(accIn);
  VectorType v4i32 = VectorType::get({4}, b.getI32Type());
  VectorType v2i32 = VectorType::get({2}, b.getI32Type());
  Value kLane = add(mul(tile, p.bk), mul(q, 16));
  // Rows of this lane: low three bits are g (tiles start at multiples of 8).
  Value rowG = add(warpRow, g);
  Value colG = add(warpCol, g);
  Value codeSwizzle = codeGroupSwizzle(g);
  Value q2 = mul(q, 2);
  for (int64_t kg = 0; kg < p.groups; ++kg) {
    // Codes of elements [16q, 16q + 16) of the group: 8 bytes per n-slice.
    Value codeWord = add(mul(xorI(idx(kg), codeSwizzle), 8), q2);
    SmallVector<Value> codes, mults;
    for (int64_t jn = 0; jn < p.nTiles; ++jn) {
      codes.push_back(vector::LoadOp::create(
          b, loc, v2i32, bCodes32,
          ValueRange{stage, add(colG, 8 * jn), codeWord},
          /*nontemporal=*/false, llvm::Align(8)));
      mults.push_back(multiplier(rhsDequant,
                                 rhsScales[jn * p.groups + kg],
                                 add(kLane, kg * kGroup), fast));
    }
    for (int64_t j = 0; j < 2; ++j) {
      // 16-byte chunk kg * 8 + 2q + j of the row: elements 8j..8j+7 of the
      // lane's run, i.e. mma steps 2j and 2j + 1.
      Value chunk = add(idx(kg * 8), add(q2, idx(j)));
      Value aWord = mul(bf16ChunkSwizzle(chunk, g), 4);
      SmallVector<Value> aLo, aHi;
      for (int64_t i = 0; i < p.mTiles; ++i) {
        Value row = add(rowG, 16 * i);
        aLo.push_back(vector::LoadOp::create(
            b, loc, v4i32, aView, ValueRange{aSlot, row, aWord},
            /*nontemporal=*/false, llvm::Align(16)));
        aHi.push_back(vector::LoadOp::create(
            b, loc, v4i32, aView, ValueRange{aSlot, add(row, 8), aWord},
            /*nontemporal=*/false, llvm::Align(16)));
      }
      SmallVector<std::array<Value, 4>> pairs;
      for (int64_t jn = 0; jn < p.nTiles; ++jn) {
        Value word = vector::ExtractOp::create(b, loc, codes[jn],
                                               ArrayRef<int64_t>{j});
        pairs.push_back(
            rhsDequant.emitDequantWord(b, loc, word, mults[jn], fast));
      }
      for (int64_t t = 0; t < 2; ++t) {
        auto aElem = [&](Value v, int64_t w) -> Value {
          return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{w});
        };
        for (int64_t i = 0; i < p.mTiles; ++i) {
          Value a[4] = {aElem(aLo[i], 2 * t), aElem(aHi[i], 2 * t),
                        aElem(aLo[i], 2 * t + 1), aElem(aHi[i], 2 * t + 1)};
          for (int64_t jn = 0; jn < p.nTiles; ++jn) {
            Value bw[2] = {pairs[jn][2 * t], pairs[jn][2 * t + 1]};
            Value &c = acc[i * p.nTiles + jn];
            c = mma(a, bw, c);
          }
        }
      }
    }
  }
  return acc;
}

std::array<Value, 4> PrefillEmitter::ldmatrixX4(Value view,
                                                ValueRange indices) {
  Type bf16 = b.getBF16Type();
  Value m = nvgpu::LdMatrixOp::create(b, loc, VectorType::get({4, 2}, bf16),
                                      view, indices, /*transpose=*/false,
                                      /*numTiles=*/4);
  std::array<Value, 4> regs;
  for (int64_t r = 0; r < 4; ++r) {
    Value pair = vector::ExtractOp::create(b, loc, m, ArrayRef<int64_t>{r});
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pair);
    regs[r] = vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
  }
  return regs;
}

SmallVector<Value> PrefillEmitter::mmaTileShared(Value aView, Value aSlot,
                                                 Value bSlot,
                                                 ValueRange accIn) {
  if (p.sparse)
    return mmaTileSharedSparse(aView, aSlot, bSlot, accIn);
  SmallVector<Value> acc(accIn);
  // ldmatrix.x4: lanes 8j..8j+7 give the row addresses of 8x8 matrix j,
  // whose rows land as register j of every lane (lane (g, q) holds row g,
  // columns 2q, 2q+1). A [16 rows][16 k] = matrices (rows 0-7 | 8-15) x
  // (k 0-7 | 8-15) in the order a0..a3 of the mma A fragment: lane l reads
  // row l % 16, 8-element chunk l / 16. W [16 n][16 k] (rows are n: the
  // "col" B layout): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
  // k 0-7), (n 8-15, k 8-15) are b0, b1 of two n8 tiles: lane l reads row
  // 8 (l / 16) + l % 8, chunk (l / 8) % 2.
  // Warp tiles start at multiples of 16 rows, so the swizzle (row & 7) of
  // every row a lane reads is lane & 7.
  Value rowSwizzle = andI(lane, 7);
  Value aRowLane = rem(lane, 16), aChunkLane = div(lane, 16);
  Value bRowLane = add(mul(div(lane, 16), 8), rem(lane, 8));
  Value bChunkLane = rem(div(lane, 8), 2);
  Value aRow = add(warpRow, aRowLane), bRow = add(warpCol, bRowLane);
  const int64_t steps = p.bk / 16 / p.warpsK;
  Value firstStep = mul(warpK, steps);
  for (int64_t local = 0; local < steps; ++local) {
    Value ks2 = mul(add(firstStep, local), 2);
    Value aCol = mul(xorI(add(aChunkLane, ks2), rowSwizzle), 8);
    Value bCol = mul(xorI(add(bChunkLane, ks2), rowSwizzle), 8);
    SmallVector<std::array<Value, 4>> a;
    for (int64_t i = 0; i < p.mTiles; ++i)
      a.push_back(ldmatrixX4(aView, ValueRange{aSlot, add(aRow, 16 * i),
                                               aCol}));
    SmallVector<std::array<Value, 2>> bw;
    for (int64_t jp = 0; jp < p.nTiles / 2; ++jp) {
      std::array<Value, 4> r =
          ldmatrixX4(bBuf, ValueRange{bSlot, add(bRow, 16 * jp), bCol});
      bw.push_back({r[0], r[1]});
      bw.push_back({r[2], r[3]});
    }
    for (int64_t i = 0; i < p.mTiles; ++i)
      for (int64_t jn = 0; jn < p.nTiles; ++jn) {
        Value &c = acc[i * p.nTiles + jn];
        c = mma(a[i], bw[jn], c);
      }
  }
  return acc;
}

Value PrefillEmitter::mmaTileWgmma(Value aSlot, Value bSlot, Value acc,
                                   ArrayRef<Value> sparseMeta) {
  // Byte offsets in dynamic shared memory (atom layout, tileIndex): slot
  // s of a [slots][BK / 64][rows][64] tile starts at s * rows * BK * 2;
  // atom a at + a * rows * 128; this warp group's rows at + 64 * wg * 128;
  // k16 step j of an atom at + 32 j (the descriptor's start address moves
  // inside the swizzled line; the hardware applies the XOR).
  Type i64 = b.getI64Type();
  auto bytes = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, i64, v).getResult();
  };
  auto i64c = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
  };
  auto addI64 = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  // warpRow - 16 (warp % 4) and warpCol are this warp group's first row
  // and column (emit).
  int64_t aOffset = p.w4a4 ? p.aBufOffset : p.aOffset;
  Value groupRow = mul(div(warpRow, 64), 64);
  // Row group g of a stacked lhs (lhsGroups) is slot aSlot * groups + g.
  Value aBase = addI64(
      smemAddress,
      bytes(add(mul(aSlot, p.lhsGroups * p.bm * p.bk * 2),
                add(mul(groupRow, kWgmmaAtomRowBytes), aOffset))));
  Value bBase = addI64(
      smemAddress,
      bytes(add(mul(bSlot, p.bn * p.bk * 2),
                add(mul(warpCol, kWgmmaAtomRowBytes), p.bBufOffset))));
  // The 2:4-sparse lhs (p.sparse): its packed tile [slot][BM][BK / 2] has
  // rows of BK bytes in the swizzle of that width (sparseChunkSwizzle is
  // the hardware's 64- or 128-byte pattern), this warp group's rows at
  // groupRow * BK bytes; k32 step s's 16 packed columns at + 32 s.
  Value spBase =
      p.sparse ? addI64(smemAddress,
                        bytes(add(mul(aSlot, p.spStageBytes),
                                  add(mul(groupRow, p.bk), p.spOffset))))
               : Value();
  for (int64_t step = 0; step < p.bk / 16; ++step) {
    int64_t atom = step / 4, inAtom = (step % 4) * 32;
    Value descA = buildWgmmaDescriptor(
        b, loc, addI64(aBase, i64c(atom * p.bm * kWgmmaAtomRowBytes + inAtom)));
    Value descB = buildWgmmaDescriptor(
        b, loc, addI64(bBase, i64c(atom * p.bn * kWgmmaAtomRowBytes + inAtom)));
    acc = buildWgmmaBF16(b, loc, descA, descB, acc, p.wn);
    for (int64_t g = 1; g < p.lhsGroups; ++g) {
      Value descG = buildWgmmaDescriptor(
          b, loc,
          addI64(aBase, i64c(g * p.bm * p.bk * 2 +
                             atom * p.bm * kWgmmaAtomRowBytes + inAtom)));
      acc = buildWgmmaBF16(b, loc, descG, descB, acc, p.wn);
    }
    if (!p.sparse || step % 2 == 0)
      continue;
    // After the dense k16 steps 2s and 2s + 1: the sparse lhs' k32 step s
    // against the same 32 columns of W (B starts at step 2s's slice).
    int64_t s = step / 2;
    Value descSp = buildWgmmaDescriptor(b, loc, addI64(spBase, i64c(32 * s)),
                                        /*rowBytes=*/p.bk);
    Value descB32 = buildWgmmaDescriptor(
        b, loc,
        addI64(bBase, i64c(atom * p.bn * kWgmmaAtomRowBytes + inAtom - 32)));
    acc = buildWgmmaSparseBF16(b, loc, descSp, descB32, sparseMeta[s], acc,
                               p.wn);
  }
  return acc;
}

SmallVector<Value> PrefillEmitter::mmaTileSharedSparse(Value aView,
                                                       Value aSlot,
                                                       Value bSlot,
                                                       ValueRange accIn) {
  SmallVector<Value> acc(accIn);
  Value rowSwizzle = andI(lane, 7);
  Value aRow = add(warpRow, rem(lane, 16)), aChunkLane = div(lane, 16);
  // W per k32 step and n8 tile: one ldmatrix.x4 of matrices (n 0-7) x (k
  // 0-7 | 8-15 | 16-23 | 24-31): lane l reads row l % 8, chunk 4s + l / 8.
  // Its 4 registers are, in order, mma.sp's B operand, and pairs (0, 1)
  // and (2, 3) the two k16 steps' mma.sync B operands. (The dense loop's
  // n16 x k16 loads would put mma.sp's operand in two register pairs of
  // two loads, which ptxas joins with 4 moves per mma.sp: 128 moves per K
  // tile, measured in the SASS of the first version.)
  Value bRow = add(warpCol, rem(lane, 8)), bChunkLane = div(lane, 8);
  const int64_t steps = p.bk / 32 / p.warpsK;
  Value firstStep = mul(warpK, steps);
  for (int64_t local = 0; local < steps; ++local) {
    Value s = add(firstStep, local);
    SmallVector<std::array<Value, 4>> bw;
    for (int64_t jn = 0; jn < p.nTiles; ++jn) {
      Value bCol = mul(xorI(add(bChunkLane, mul(s, 4)), rowSwizzle), 8);
      bw.push_back(
          ldmatrixX4(bBuf, ValueRange{bSlot, add(bRow, 8 * jn), bCol}));
    }
    for (int64_t h = 0; h < 2; ++h) {
      Value ks2 = add(mul(s, 4), 2 * h);
      Value aCol = mul(xorI(add(aChunkLane, ks2), rowSwizzle), 8);
      for (int64_t i = 0; i < p.mTiles; ++i) {
        std::array<Value, 4> a =
            ldmatrixX4(aView, ValueRange{aSlot, add(aRow, 16 * i), aCol});
        for (int64_t jn = 0; jn < p.nTiles; ++jn) {
          Value &c = acc[i * p.nTiles + jn];
          c = mma(a, {bw[jn][2 * h], bw[jn][2 * h + 1]}, c);
        }
      }
    }
    mmaSparseStep(s, aSlot, bw, acc);
  }
  return acc;
}

void PrefillEmitter::mmaSparseStep(Value s, Value slot,
                                   ArrayRef<std::array<Value, 4>> bw,
                                   SmallVector<Value> &acc) {
  // A: the compressed 16 x 16 tile (compressed columns 16s..16s+15, i.e.
  // logical k 32s..32s+31) by ldmatrix.x4 exactly as a dense A tile.
  Value spCol =
      mul(sparseChunkSwizzle(add(div(lane, 16), mul(s, 2)), lane), 8);
  Value aRow = add(warpRow, rem(lane, 16));
  for (int64_t i = 0; i < p.mTiles; ++i) {
    std::array<Value, 4> a =
        ldmatrixX4(spTile, ValueRange{slot, add(aRow, 16 * i), spCol});
    Value meta = sparseMetadata(s, slot, add(warpRow, 16 * i));
    for (int64_t jn = 0; jn < p.nTiles; ++jn) {
      Value &c = acc[i * p.nTiles + jn];
      c = mmaSp(a, bw[jn], meta, c);
    }
  }
}

Value PrefillEmitter::sparseMetadata(Value s, Value slot, Value rows) {
  // Lanes q = 0, 1 (lanes 2, 3 load a copy, unused under sparsity selector
  // 0): 16 logical columns 32s + 16q.. of rows g and g + 8, two bytes
  // each; stored XOR 0x44 (a zero-filled byte reads back as positions 0
  // and 1 of zero values).
  Value metaCol = add(mul(s, 2), andI(q, 1));
  Type i32t = b.getI32Type();
  Value row = add(rows, g);
  Value lo = arith::ExtUIOp::create(
      b, loc, i32t,
      memref::LoadOp::create(b, loc, metaTile16,
                             ValueRange{slot, row, metaCol}));
  Value hi = arith::ExtUIOp::create(
      b, loc, i32t,
      memref::LoadOp::create(b, loc, metaTile16,
                             ValueRange{slot, add(row, 8), metaCol}));
  Value meta = arith::OrIOp::create(
      b, loc, lo, arith::ShLIOp::create(b, loc, hi, i32(16)));
  return arith::XOrIOp::create(b, loc, meta, i32(0x44444444));
}

SmallVector<Value> PrefillEmitter::mmaTileDispatch(Value tile, Value aView,
                                                   Value aSlot, Value stage,
                                                   ValueRange rhsScales,
                                                   ValueRange acc) {
  if (!rhsDequant.hasFastForm())
    return mmaTile(tile, aView, aSlot, stage, rhsScales, acc, false);
  Value ok;
  for (Value byte : rhsScales) {
    Value applies = rhsDequant.emitFastFormApplies(b, loc, byte);
    ok = ok ? andB(ok, applies) : applies;
  }
  Value all = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), i32(-1), ok,
                                       NVVM::VoteSyncKind::all);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(acc), all,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(
      b, loc, mmaTile(tile, aView, aSlot, stage, rhsScales, acc, true));
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(
      b, loc, mmaTile(tile, aView, aSlot, stage, rhsScales, acc, false));
  return SmallVector<Value>(ifOp.getResults());
}

SmallVector<Value> PrefillEmitter::loadColumnFactors(Value block) {
  SmallVector<Value> factors;
  for (int64_t jn = 0; jn < p.nTiles; ++jn) {
    for (int64_t e = 0; e < 2; ++e) {
      Value col = add(add(n0, warpCol), add(mul(q, 2), 8 * jn + e));
      if (p.n % p.bn != 0 || p.n % 2 != 0)
        col = minU(col, p.n - 1);
      Value f = memref::LoadOp::create(b, loc, rhsArgs[2],
                                       ValueRange{col, block});
      factors.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), f));
    }
  }
  return factors;
}

SmallVector<Value> PrefillEmitter::loadRowFactors(Value block) {
  SmallVector<Value> factors;
  for (int64_t i = 0; i < p.mTiles; ++i) {
    for (int64_t half = 0; half < 2; ++half) {
      Value row = add(add(m0, warpRow), add(g, 16 * i + 8 * half));
      if (p.m % p.bm != 0)
        row = minU(row, p.m - 1);
      Value f = memref::LoadOp::create(b, loc, lhsArgs[2],
                                       ValueRange{row, block});
      factors.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), f));
    }
  }
  return factors;
}

SmallVector<Value> PrefillEmitter::flushPartials(Value kt, ValueRange acc,
                                                 ValueRange sums,
                                                 Value zero) {
  Value next = add(kt, 1);
  Value flush = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                            rem(next, p.flushTiles), idx(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next,
                            idx(p.numK)));
  SmallVector<Type> types(acc.size() + sums.size(), zero.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, flush, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  // The flush period divides each macro block, so tile kt names the block.
  SmallVector<Value> colFactors, rowFactors;
  if (p.rhsMacroTiles)
    colFactors = loadColumnFactors(div(kt, p.rhsMacroTiles));
  if (p.lhsMacroTiles)
    rowFactors = loadRowFactors(div(kt, p.lhsMacroTiles));
  SmallVector<Value> folded;
  for (int64_t i = 0; i < p.mTiles; ++i) {
    for (int64_t jn = 0; jn < p.nTiles; ++jn) {
      int64_t t = i * p.nTiles + jn;
      SmallVector<Value> elements;
      for (int64_t e = 0; e < 4; ++e) {
        Value a = vector::ExtractOp::create(b, loc, acc[t],
                                            ArrayRef<int64_t>{e});
        Value s = vector::ExtractOp::create(b, loc, sums[t],
                                            ArrayRef<int64_t>{e});
        s = applyFactors(s, i, jn, e, colFactors, rowFactors);
        elements.push_back(arith::AddFOp::create(b, loc, a, s));
      }
      folded.push_back(vector::FromElementsOp::create(
          b, loc, zero.getType(), elements));
    }
  }
  folded.append(sums.size(), zero);
  scf::YieldOp::create(b, loc, folded);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  SmallVector<Value> kept(acc);
  llvm::append_range(kept, sums);
  scf::YieldOp::create(b, loc, kept);
  return SmallVector<Value>(ifOp.getResults());
}

Value PrefillEmitter::applyFactors(Value v, int64_t i, int64_t jn, int64_t e,
                                   ArrayRef<Value> colFactors,
                                   ArrayRef<Value> rowFactors) {
  // Accumulator element e: row g + 8 (e / 2), column 2q + (e % 2).
  if (!colFactors.empty())
    v = arith::MulFOp::create(b, loc, v, colFactors[2 * jn + e % 2]);
  if (!rowFactors.empty())
    v = arith::MulFOp::create(b, loc, v, rowFactors[2 * i + e / 2]);
  return v;
}

void PrefillEmitter::epilogue(ValueRange acc) {
  Type f32 = b.getF32Type();
  Type outType = spec.resultElementType;
  // The products carry 2^-(offsets); the tensor scales (NVFP4) multiply the
  // result (numerics: e2m1 * s * g_dec, g_dec applied last).
  int64_t offset = rhsDequant.exponentOffset() +
                   (lhsDequant ? lhsDequant->exponentOffset() : 0);
  SmallVector<Value> factors;
  if (offset != 0)
    factors.push_back(arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(std::ldexp(1.0f, offset))));
  if (rhsDequant.hasTensorScale())
    factors.push_back(
        memref::LoadOp::create(b, loc, rhsArgs[2], ValueRange{}));
  if (lhsDequant && lhsDequant->hasTensorScale())
    factors.push_back(
        memref::LoadOp::create(b, loc, lhsArgs[2], ValueRange{}));

  // Macro factors covering all of K.
  SmallVector<Value> colFactors, rowFactors;
  if (p.rhsRowFactor)
    colFactors = loadColumnFactors(idx(0));
  if (p.lhsRowFactor)
    rowFactors = loadRowFactors(idx(0));

  bool rowGuard = p.m % p.bm != 0;
  bool colGuard = p.n % p.bn != 0;
  // Pairs are 2 * sizeof(T)-aligned only when rows have even length.
  bool pairStores = p.n % 2 == 0;
  auto convert = [&](Value v) -> Value {
    for (Value f : factors)
      v = arith::MulFOp::create(b, loc, v, f);
    if (outType != f32)
      v = arith::TruncFOp::create(b, loc, outType, v);
    return v;
  };
  auto guarded = [&](Value cond, function_ref<void()> store) {
    if (!cond) {
      store();
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, cond, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    store();
  };
  unsigned pairAlign = 2 * outType.getIntOrFloatBitWidth() / 8;
  for (int64_t i = 0; i < p.mTiles; ++i) {
    for (int64_t jn = 0; jn < p.nTiles; ++jn) {
      Value c = acc[i * p.nTiles + jn];
      Value col = add(add(n0, warpCol), add(mul(q, 2), 8 * jn));
      for (int64_t half = 0; half < 2; ++half) {
        Value row = add(add(m0, warpRow), add(g, 16 * i + 8 * half));
        auto element = [&](int64_t e) {
          Value v = vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{e});
          return convert(applyFactors(v, i, jn, e, colFactors, rowFactors));
        };
        Value v0 = element(2 * half);
        Value v1 = element(2 * half + 1);
        Value rowOk = rowGuard ? ult(row, p.m) : Value();
        if (pairStores) {
          Value cond = rowOk;
          if (colGuard)
            cond = cond ? andB(cond, ult(col, p.n)) : ult(col, p.n);
          guarded(cond, [&] {
            Value pair = vector::FromElementsOp::create(
                b, loc, VectorType::get({2}, outType), ValueRange{v0, v1});
            vector::StoreOp::create(b, loc, pair, result,
                                    ValueRange{row, col},
                                    /*nontemporal=*/false,
                                    llvm::Align(pairAlign));
          });
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Value v = e == 0 ? v0 : v1;
          Value cc = add(col, e);
          Value colOk = ult(cc, p.n);
          Value cond = rowOk ? andB(rowOk, colOk) : colOk;
          guarded(cond, [&] {
            memref::StoreOp::create(b, loc, v, result, ValueRange{row, cc});
          });
        }
      }
    }
  }
}

void PrefillEmitter::emit(gpu::GPUFuncOp func) {
  Block &body = func.getBody().front();
  int64_t numLhs = spec.lhsQuantized
                       ? static_cast<int64_t>(
                             spec.lhsQuantized.getComponentTypes().size())
                       : 1;
  int64_t numRhs = spec.rhs.getComponentTypes().size();
  lhsArgs.assign(body.getArguments().begin(),
                 body.getArguments().begin() + numLhs);
  rhsArgs.assign(body.getArguments().begin() + numLhs,
                 body.getArguments().begin() + numLhs + numRhs);
  int64_t nextArg = numLhs + numRhs;
  if (p.sparse) {
    sparseValues = body.getArgument(nextArg++);
    sparseMeta = body.getArgument(nextArg++);
  }
  if (p.entryCount) {
    entryValues = body.getArgument(nextArg);
    entryIndices = body.getArgument(nextArg + 1);
  }
  result = body.getArguments().back();

  Type indexType = b.getIndexType();
  tid = gpu::ThreadIdOp::create(b, loc, indexType, gpu::Dimension::x);
  n0 = mul(gpu::BlockIdOp::create(b, loc, indexType, gpu::Dimension::x),
           p.bn);
  m0 = mul(gpu::BlockIdOp::create(b, loc, indexType, gpu::Dimension::y),
           p.bm);
  lane = rem(tid, 32);
  Value warp = div(tid, 32);
  g = div(lane, 4);
  q = rem(lane, 4);
  Value tileWarp = rem(warp, p.warpsM * p.warpsN);
  warpK = div(warp, p.warpsM * p.warpsN);
  if (p.wgmma) {
    // Warp group wg = warp / 4 owns rows 64 (wg / wgN) and columns
    // wn (wg % wgN); its warp w % 4 holds accumulator rows 16 (w % 4).
    Value group = div(warp, 4);
    warpRow = add(mul(div(group, p.wgN), 64), mul(rem(warp, 4), 16));
    warpCol = mul(rem(group, p.wgN), p.wn);
  } else {
    warpRow = mul(div(tileWarp, p.warpsN), p.wm);
    warpCol = mul(rem(tileWarp, p.warpsN), p.wn);
  }

  // Shared memory views.
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup));
  auto view = [&](int64_t offset, ArrayRef<int64_t> shape,
                  Type elt) -> Value {
    return memref::ViewOp::create(
        b, loc,
        MemRefType::get(shape, elt, MemRefLayoutAttrInterface(), workgroup),
        smem, idx(offset), ValueRange{});
  };
  Type i8 = b.getI8Type(), i32t = b.getI32Type(), bf16 = b.getBF16Type();
  // A bf16 tile of `rows` rows: [slots][rows][BK] for mma.sync,
  // [slots][BK / 64][rows][64] atoms for wgmma (tileIndex).
  auto bf16Tile = [&](int64_t offset, int64_t slots, int64_t rows,
                      Type elt) {
    int64_t perRow = elt == i32t ? 2 : 1;
    if (p.wgmma)
      return view(offset, {slots, p.bk / 64, rows, 64 / perRow}, elt);
    return view(offset, {slots, rows, p.bk / perRow}, elt);
  };
  if (p.w4a4) {
    aCodes = view(p.aOffset, {p.stages, p.bm, p.bk / 2}, i8);
    aCodes32 = view(p.aOffset, {p.stages, p.bm, p.bk / 8}, i32t);
    aBuf32 = bf16Tile(p.aBufOffset, 2, p.bm, i32t);
    aBuf = bf16Tile(p.aBufOffset, 2, p.bm, bf16);
  } else {
    aTile = bf16Tile(p.aOffset, p.stages * p.lhsGroups, p.bm, bf16);
    aTile32 = view(p.aOffset, {p.stages, p.bm, p.bk / 2}, i32t);
  }
  bCodes = view(p.bOffset, {p.stages, p.bn, p.bk / 2}, i8);
  bCodes32 = view(p.bOffset, {p.stages, p.bn, p.bk / 8}, i32t);
  if (p.shared) {
    bBuf32 = bf16Tile(p.bBufOffset, 2, p.bn, i32t);
    bBuf = bf16Tile(p.bBufOffset, 2, p.bn, bf16);
  }
  if (p.wgmma) {
    smemAddress = buildSharedAddress(b, loc, smem);
    buildSwizzleBaseCheck(b, loc, smemAddress);
  }
  if (p.sparse) {
    spTile = view(p.spOffset, {p.stages, p.bm, p.bk / 2}, b.getBF16Type());
    metaTile = view(p.metaOffset, {p.stages, p.bm, p.bk / 8}, i8);
    metaTile16 =
        view(p.metaOffset, {p.stages, p.bm, p.bk / 16}, b.getI16Type());
  }
  // The weight's scales (and entries) of a tile, carried one tile ahead.
  auto loadWeightScales = [&](Value tile) {
    if (!p.shared)
      return loadRhsScales(tile);
    SmallVector<Value> values =
        loadUnitScales(rhsDequant, rhsArgs[1], n0, p.bn, p.n, tile);
    if (p.entryCount)
      llvm::append_range(values, loadUnitEntries(tile));
    return values;
  };
  // Scale values of loadWeightScales (the entries follow them).
  const int64_t weightScaleValues =
      p.weightRounds() * (rhsDequant.getBlockSize() % 32 == 0 ? 1 : 2);
  auto dequantizeWeightTile = [&](Value tile, Value stage, Value buf,
                                  ValueRange values) {
    dequantizeTile(rhsDequant, bCodes32, bBuf32, p.bn, tile, stage, buf,
                   values.take_front(weightScaleValues),
                   p.entryCount ? values.drop_front(weightScaleValues)
                                : ValueRange{});
  };

  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };
  auto waitGroups = [&](int64_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
  };
  // W4A4 dequantizes A (and the shared form W) one tile ahead of the mma
  // loop, so it waits for one more tile at the top of an iteration.
  int64_t lead = (p.w4a4 || p.shared) ? 1 : 0;

  // Prologue: the first stages - 1 tiles in flight (lateA: tile 0 and the
  // codes of tile 1).
  for (int64_t t = 0; t + 1 < p.stages; ++t) {
    if (t < p.numK)
      issueTile(idx(t), idx(t));
    commit();
  }
  if (p.lateA && p.numK > 1) {
    issueWeightCodes(idx(1), idx(1));
    commit();
  }
  SmallVector<Value> rhsScales;
  SmallVector<Value> lhsScales;
  if (p.shared) {
    // Tile 0 dequantized before the loop; the loop dequantizes tile kt + 1
    // with scales loaded one iteration earlier.
    SmallVector<Value> firstR = loadWeightScales(idx(0));
    SmallVector<Value> firstL;
    if (p.w4a4)
      firstL = loadLhsScales(idx(0));
    waitGroups(p.stages - 2);
    gpu::BarrierOp::create(b, loc);
    if (p.w4a4)
      dequantizeLhsTile(idx(0), idx(0), idx(0), firstL);
    dequantizeWeightTile(idx(0), idx(0), idx(0), firstR);
    Value second = idx(std::min<int64_t>(1, p.numK - 1));
    rhsScales = loadWeightScales(second);
    if (p.w4a4)
      lhsScales = loadLhsScales(second);
  } else if (p.w4a4) {
    rhsScales = loadRhsScales(idx(0));
    SmallVector<Value> first = loadLhsScales(idx(0));
    waitGroups(p.stages - 2);
    gpu::BarrierOp::create(b, loc);
    dequantizeLhsTile(idx(0), idx(0), idx(0), first);
    lhsScales = loadLhsScales(idx(std::min<int64_t>(1, p.numK - 1)));
  } else {
    rhsScales = loadRhsScales(idx(0));
  }

  VectorType accType = VectorType::get({4}, b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  // wgmma: one accumulator struct (WarpgroupMMA.h), unpacked into the
  // mma.sync tiles for the epilogue.
  int64_t numAcc = p.wgmma ? 1 : p.mTiles * p.nTiles;
  // Macro partial sums (same layout as the accumulators) when flushing.
  int64_t numPartial = p.flushTiles ? numAcc : 0;
  SmallVector<Value> init(numAcc + numPartial, zero);
  if (p.wgmma)
    init[0] = buildWgmmaZeroAccumulator(b, loc, p.wn);
  int64_t numRhsScales = rhsScales.size();
  llvm::append_range(init, rhsScales);
  llvm::append_range(init, lhsScales);

  auto loop = scf::ForOp::create(b, loc, idx(0), idx(p.numK), idx(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    ValueRange iter = loop.getRegionIterArgs();
    ValueRange acc = iter.take_front(numAcc);
    ValueRange partial = iter.slice(numAcc, numPartial);
    ValueRange rScales = iter.slice(numAcc + numPartial, numRhsScales);
    ValueRange lScales = iter.drop_front(numAcc + numPartial + numRhsScales);

    waitGroups(p.lateA ? 0 : p.stages - 2 - lead);
    if (p.wgmma) {
      // wgmma reads shared memory through the async proxy: this thread's
      // landed copies and its dequantized stores (generic proxy) must be
      // fenced before the barrier that publishes them.
      NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_shared,
                                 NVVM::SharedSpaceAttr::get(
                                     b.getContext(), NVVM::SharedSpace::shared_cta));
    }
    gpu::BarrierOp::create(b, loc);
    // Refill the slot the previous iteration finished reading.
    auto issueIf = [&](int64_t ahead, function_ref<void(Value, Value)> fn) {
      Value next = add(kt, ahead);
      auto ifOp = scf::IfOp::create(b, loc, ult(next, p.numK), false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      fn(next, rem(next, p.stages));
    };
    if (p.lateA) {
      // The A slot of tile kt - 1 (every warp group waited for its wgmma
      // before this barrier) and the codes slot of tile kt (dequantized in
      // the previous iteration).
      issueIf(1, [&](Value t, Value s) {
        issueLhs(t, s);
        if (p.sparse)
          issueSparseRows(t, s);
      });
      issueIf(2, [&](Value t, Value s) { issueWeightCodes(t, s); });
    } else {
      issueIf(p.stages - 1, [&](Value t, Value s) { issueTile(t, s); });
    }
    commit();
    // Scales one tile ahead (clamped on the last tiles; unused there).
    SmallVector<Value> yielded;
    SmallVector<Value> nextR =
        loadWeightScales(minU(add(kt, p.shared ? 2 : 1), p.numK - 1));
    SmallVector<Value> nextL;
    Value stage = rem(kt, p.stages);
    Value aView = aTile32, aSlot = stage;
    if (p.shared) {
      if (p.w4a4)
        nextL = loadLhsScales(minU(add(kt, 2), p.numK - 1));
      Value ahead = add(kt, 1);
      auto dequantizeAhead = [&] {
        auto ifOp = scf::IfOp::create(b, loc, ult(ahead, p.numK), false);
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value aheadStage = rem(ahead, p.stages), aheadBuf = rem(ahead, 2);
        if (p.w4a4)
          dequantizeLhsTile(ahead, aheadStage, aheadBuf, lScales);
        dequantizeWeightTile(ahead, aheadStage, aheadBuf, rScales);
      };
      Value aBf16Slot = p.w4a4 ? rem(kt, 2) : stage;
      if (p.wgmma) {
        // The tensor cores work on tile kt while the threads dequantize
        // tile kt + 1 into the other buffer; the wait before the next
        // barrier frees tile kt's slots for the refills.
        SmallVector<Value> sparseMeta;
        if (p.sparse)
          for (int64_t s = 0; s < p.bk / 32; ++s)
            sparseMeta.push_back(sparseMetadata(idx(s), stage, warpRow));
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        Value out = mmaTileWgmma(aBf16Slot, rem(kt, 2), acc[0], sparseMeta);
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        dequantizeAhead();
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
        yielded = {out};
      } else {
        dequantizeAhead();
        Value aBf16 = p.w4a4 ? aBuf : aTile;
        ValueRange in = p.flushTiles ? partial : acc;
        SmallVector<Value> out =
            mmaTileShared(aBf16, aBf16Slot, rem(kt, 2), in);
        yielded = p.flushTiles ? flushPartials(kt, acc, out, zero) : out;
      }
    } else if (p.w4a4) {
      nextL = loadLhsScales(minU(add(kt, 2), p.numK - 1));
      Value ahead = add(kt, 1);
      auto ifOp = scf::IfOp::create(b, loc, ult(ahead, p.numK), false);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        dequantizeLhsTile(ahead, rem(ahead, p.stages), rem(ahead, 2),
                          lScales);
      }
      aView = aBuf32;
      aSlot = rem(kt, 2);
    }
    if (p.shared) {
      // Done above.
    } else if (!p.flushTiles) {
      yielded = mmaTileDispatch(kt, aView, aSlot, stage, rScales, acc);
    } else {
      SmallVector<Value> sums =
          mmaTileDispatch(kt, aView, aSlot, stage, rScales, partial);
      yielded = flushPartials(kt, acc, sums, zero);
    }
    llvm::append_range(yielded, nextR);
    llvm::append_range(yielded, nextL);
    scf::YieldOp::create(b, loc, yielded);
  }
  // Drain (empty groups only, but leave no copy in flight at exit).
  waitGroups(0);
  SmallVector<Value> sums(loop.getResults().take_front(numAcc));
  if (p.wgmma)
    sums = unpackWgmmaAccumulator(b, loc, sums[0], p.wn);
  if (p.warpsK == 1) {
    epilogue(sums);
    return;
  }
  // The K groups' sums meet in shared memory (the ring is free once every
  // warp has left the loop): group w > 0 stores [w - 1][warp of the tile]
  // [acc][lane] x 4 floats, group 0 adds them and writes the result.
  const int64_t tileWarps = p.warpsM * p.warpsN;
  const int64_t scratchRows = (p.warpsK - 1) * tileWarps * numAcc * 32;
  assert(scratchRows * 16 <= p.sharedBytes &&
         "the K groups' sums must fit the drained ring");
  Value scratch = view(0, {scratchRows, 4}, b.getF32Type());
  auto slot = [&](Value group, int64_t a) {
    return add(mul(add(mul(add(mul(group, tileWarps), tileWarp), numAcc), a),
                   32),
               lane);
  };
  gpu::BarrierOp::create(b, loc);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpK,
                                      idx(0));
  Value later = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, warpK,
                                      idx(0));
  emitIf(b, loc, later,
         [&](OpBuilder &, Location) {
           Value group = arith::SubIOp::create(b, loc, warpK, idx(1));
           for (int64_t a = 0; a < numAcc; ++a)
             vector::StoreOp::create(b, loc, sums[a], scratch,
                                     ValueRange{slot(group, a), idx(0)});
         });
  gpu::BarrierOp::create(b, loc);
  emitIf(b, loc, first, [&](OpBuilder &, Location) {
    SmallVector<Value> total(sums);
    for (int64_t w = 1; w < p.warpsK; ++w)
      for (int64_t a = 0; a < numAcc; ++a) {
        Value part = vector::LoadOp::create(
            b, loc, VectorType::get({4}, b.getF32Type()), scratch,
            ValueRange{slot(idx(w - 1), a), idx(0)});
        total[a] = arith::AddFOp::create(b, loc, total[a], part);
      }
    epilogue(total);
  });
}

/// K groups of warps for the medium class's 16-row tiles: one 16 x 64
/// tile per CTA gives 4 warps and N / 64 CTAs (896 warps at N = 14336, 7
/// per SM; ncu: 10.8% achieved occupancy, the SMs idle most cycles), so the
/// tile's mma steps are split over two warp groups, which also share the
/// tile's copies and dequantization (full recipe at 16 x 14336 x 4096,
/// same call: kernel 51.7 -> 48.5 us; in another call four groups 52.6-54.1
/// against 50.0 for two; docs/perf/medium_warps_k_2026-12-04.txt). The shared form only (the register
/// form dequantizes per warp), without macro partial sums.
static int64_t chooseWarpsK(const PrefillPlan &p) {
  if (p.bm != 16 || !p.shared || p.w4a4 || p.flushTiles ||
      (p.bk / 32) % 2 != 0 || 2 * p.threads > 1024)
    return 1;
  return 2;
}

/// Checks the spec and the config and lays out shared memory.
/// mma = wgmma on sm_90a: the shared form on wgmma when its tiles fit the
/// instruction (64-row warp groups, K atoms of 64, the CTA's warps a whole
/// number of warp groups per 64 rows, each taking BN / wgN columns, a
/// multiple of 8 up to 256). The 2:4 sparse lhs goes to wgmma.sp (inline
/// PTX, buildWgmmaSparseBF16) when its packed rows are 64 or 128 bytes
/// (BK 64 or 128). The 16-row tiles' K groups and macro partial sums keep
/// mma.sync.
static void planWgmma(PrefillPlan &p, const GPUTarget &target) {
  if (!target.hasWGMMA || !p.shared || p.warpsK != 1 || p.flushTiles ||
      p.bm % 64 != 0 || p.bk % 64 != 0 || p.threads % 128 != 0)
    return;
  // The sparse lhs' packed rows (BK bytes) must be a swizzle width the
  // descriptor has (64 or 128 bytes: sparseChunkSwizzle's two patterns).
  if (p.sparse && p.bk != 64 && p.bk != 128)
    return;
  int64_t groups = p.threads / 128, rowGroups = p.bm / 64;
  if (groups % rowGroups != 0)
    return;
  int64_t wgN = groups / rowGroups;
  if (p.bn % (8 * wgN) != 0 || p.bn / wgN > 256)
    return;
  // Every tile slot must start on a 1024-byte swizzle period (the layout
  // below puts the bf16 tiles after the rings).
  int64_t aStage =
      (p.w4a4 ? p.bm * p.bk / 2 : p.bm * p.bk * 2) * p.lhsGroups;
  int64_t bStage = p.bn * p.bk / 2;
  int64_t aBufOffset = p.stages * (aStage + bStage);
  if (aBufOffset % kWgmmaSwizzleBytes != 0)
    return;
  // W4A16: a third ring slot only covers the A tile (and the packed sparse
  // tile) read by the running wgmma (the codes are consumed a tile
  // earlier); where dropping it lets a second CTA onto the SM (the stacked
  // row groups' tiles: 143 KB at 3 slots, 104 KB at 2, for 128 x 128 x 64
  // and two groups; the sparse residual's 119 KB -> 90 KB), the A tile is
  // issued one iteration later instead (lateA).
  int64_t spStage = p.sparse ? p.bm * (p.bk / 2) * 2 + p.bm * (p.bk / 8) : 0;
  int64_t stages = p.stages;
  bool lateA = false;
  if (!p.w4a4 && stages == 3) {
    int64_t bufs = 2 * p.bn * p.bk * 2;
    auto ctas = [&](int64_t n) {
      return target.ctasPerSMByShared(n * (aStage + bStage + spStage) + bufs);
    };
    if (ctas(3) == 1 && ctas(2) >= 2) {
      lateA = true;
      stages = 2;
      aBufOffset = stages * (aStage + bStage);
      if (aBufOffset % kWgmmaSwizzleBytes != 0)
        return;
    }
  }
  // The packed sparse tiles follow the bf16 tiles (W4A16: no A buffer).
  int64_t spOffset = aBufOffset + (p.w4a4 ? 2 * p.bm * p.bk * 2 : 0) +
                     2 * p.bn * p.bk * 2;
  if (p.sparse && (spOffset % kWgmmaSwizzleBytes != 0 ||
                   (p.bm * p.bk) % kWgmmaSwizzleBytes != 0))
    return;
  p.lateA = lateA;
  p.stages = stages;
  p.wgmma = true;
  p.wgN = wgN;
  p.wm = 16;
  p.wn = p.bn / wgN;
  p.mTiles = 1;
  p.nTiles = p.wn / 8;
}

static FailureOr<PrefillPlan>
planPrefill(const MatmulKernelSpec &spec, const GPUTarget &target,
            GPUConfigAttr config,
            const std::optional<BF16FragmentDequant> &lhsDequant,
            const BF16FragmentDequant &rhsDequant, std::string &reason) {
  auto decline = [&](const Twine &why) -> FailureOr<PrefillPlan> {
    reason = ("prefill: " + why).str();
    return failure();
  };
  if (target.smVersion < 80)
    return decline("mma.sync bf16 and cp.async need sm_80 or newer");
  PrefillPlan p;
  p.m = spec.m;
  p.n = spec.n;
  p.k = spec.k;
  p.bm = config.getTileM();
  p.bn = config.getTileN();
  p.bk = config.getTileK();
  p.warpsM = config.getWarpsM();
  p.warpsN = config.getWarpsN();
  p.stages = config.getStages();
  p.shared = config.getDequant() == GPUPrefillDequant::Shared;
  p.threads = 32 * p.warpsM * p.warpsN;
  p.w4a4 = static_cast<bool>(spec.lhsQuantized);
  if (p.m < 1 || p.n < 1 || p.k < 1)
    return decline("empty matmul");
  if (p.bk != 64 && p.bk != 128 && p.bk != 256)
    return decline("prefill-tile-k must be 64, 128 or 256 (K groups of 64 "
                   "with a power-of-two swizzle)");
  if (p.bm % (16 * p.warpsM) != 0 || p.bn % (8 * p.warpsN) != 0)
    return decline("each warp needs a whole number of 16x8 mma tiles "
                   "(prefill-tile-m % (16 * warps-m), prefill-tile-n % "
                   "(8 * warps-n))");
  p.wm = p.bm / p.warpsM;
  p.wn = p.bn / p.warpsN;
  p.mTiles = p.wm / 16;
  p.nTiles = p.wn / 8;
  if (p.mTiles * p.nTiles * 4 > 128)
    return decline("a warp tile of " + Twine(p.wm) + "x" + Twine(p.wn) +
                   " needs more than 128 accumulator registers per lane");
  if (p.threads > 1024)
    return decline("more than 1024 threads per CTA");
  if (p.w4a4 && p.stages < 3)
    return decline("W4A4 dequantizes A one tile ahead and needs "
                   "prefill-stages >= 3");
  if (p.stages < 2)
    return decline("prefill-stages must be at least 2");
  if (p.k % 16 != 0)
    return decline("K must be a multiple of 16");
  p.groups = p.bk / kGroup;
  p.numK = llvm::divideCeil(p.k, p.bk);
  // Macro factors: per row in the epilogue, or per macro block of whole K
  // tiles on f32 partial sums.
  auto macro = [&](const BF16FragmentDequant &dq, bool &rowFactor,
                   int64_t &tiles) -> LogicalResult {
    if (!dq.hasMacroFactors())
      return success();
    int64_t span = dq.getMacroSpan(p.k);
    if (span >= p.k) {
      rowFactor = true;
      return success();
    }
    if (span % p.bk != 0)
      return failure();
    tiles = span / p.bk;
    p.flushTiles = p.flushTiles ? std::gcd(p.flushTiles, tiles) : tiles;
    return success();
  };
  if (failed(macro(rhsDequant, p.rhsRowFactor, p.rhsMacroTiles)) ||
      (lhsDequant &&
       failed(macro(*lhsDequant, p.lhsRowFactor, p.lhsMacroTiles))))
    return decline("macro blocks must be a multiple of prefill-tile-k (" +
                   Twine(p.bk) + ") or span all of K");
  // W4A4 with partial sums keeps two accumulator sets next to the A
  // dequantization: a 64x32 warp tile needs more than 255 registers, so
  // narrow the N tile (ptxas -v: 0 spills at 64x16).
  while (p.w4a4 && p.flushTiles && p.mTiles * p.nTiles * 4 > 32 &&
         (p.bn / 2) % (8 * p.warpsN) == 0) {
    p.bn /= 2;
    p.wn = p.bn / p.warpsN;
    p.nTiles = p.wn / 8;
  }
  // The shared form dequantizes one tile ahead (3 stages) and reads 16x16
  // ldmatrix.x4 tiles; other configurations keep the register form, which
  // takes them all.
  if (p.shared &&
      (p.stages < 3 || p.wm % 16 != 0 || p.wn % 16 != 0))
    p.shared = false;
  if (spec.weightEntries) {
    // Written over the dequantized bf16 W tile, unscaled: only the shared
    // form has that tile, and only schemes whose scales all go into it.
    const MatmulKernelSpec::WeightEntries &e = *spec.weightEntries;
    if (!p.shared)
      return decline("weight entries are written into the shared bf16 "
                     "weight tile: they need prefill-dequant=shared, "
                     "prefill-stages >= 3 and warp tiles of multiples of 16");
    if (rhsDequant.hasTensorScale() || rhsDequant.hasMacroFactors())
      return decline("weight entries need a weight scheme without tensor or "
                     "macro factors (those scale the accumulators)");
    if ((e.blockSize != 16 && e.blockSize % 32 != 0) || e.entries < 1 ||
        e.entries > e.blockSize || p.k % e.blockSize != 0 || p.k % 32 != 0)
      return decline("weight entries come in blocks of 16 or a multiple of "
                     "32 elements dividing K (a multiple of 32), with "
                     "1..block entries");
    p.entryBlock = e.blockSize;
    p.entryCount = e.entries;
  }
  if (spec.sparseLhs) {
    // Read with ldmatrix next to the bf16 A tile and the shared W tile.
    if (!p.shared || p.w4a4)
      return decline("the 2:4-sparse lhs needs W4A16 with "
                     "prefill-dequant=shared, prefill-stages >= 3 and warp "
                     "tiles of multiples of 16");
    if (p.k % 32 != 0)
      return decline("the 2:4-sparse lhs needs K a multiple of 32 (mma.sp "
                     "m16n8k32 steps)");
    if (!target.hasSparseMMA || target.ptxVersion() < 85)
      return decline("the 2:4-sparse lhs needs mma.sp::ordered_metadata "
                     "(PTX 8.5; " + target.chip + " targets PTX " +
                     Twine(target.ptxVersion() / 10) + "." +
                     Twine(target.ptxVersion() % 10) + ")");
    p.sparse = true;
  }
  p.lhsGroups = spec.lhsGroups;
  if (p.lhsGroups < 1 || (p.lhsGroups > 1 && (p.w4a4 || p.sparse)))
    return decline("lhs row groups are a bf16 lhs without a sparse part");
  p.warpsK = chooseWarpsK(p);
  p.threads *= p.warpsK;
  if (config.getMma() == GPUPrefillMMA::WGMMA)
    planWgmma(p, target);
  if (p.lhsGroups > 1 && !p.wgmma)
    return decline("the lhs's " + Twine(p.lhsGroups) +
                   " row groups are summed in the accumulators only by the "
                   "wgmma form (mma = wgmma on sm_90a, 64-row warp groups, "
                   "the shared dequantization)");
  p.codeChunk = p.k % 32 == 0 ? 16 : 8;
  p.aStageBytes = (p.w4a4 ? p.bm * p.bk / 2 : p.bm * p.bk * 2) * p.lhsGroups;
  p.bStageBytes = p.bn * p.bk / 2;
  p.aBufBytes = p.w4a4 ? 2 * p.bm * p.bk * 2 : 0;
  p.aOffset = 0;
  p.bOffset = p.aOffset + p.stages * p.aStageBytes;
  p.aBufOffset = p.bOffset + p.stages * p.bStageBytes;
  p.bBufBytes = p.shared ? 2 * p.bn * p.bk * 2 : 0;
  p.bBufOffset = p.aBufOffset + p.aBufBytes;
  p.spStageBytes = p.sparse ? p.bm * (p.bk / 2) * 2 : 0;
  p.metaStageBytes = p.sparse ? p.bm * (p.bk / 8) : 0;
  p.spOffset = p.bBufOffset + p.bBufBytes;
  p.metaOffset = p.spOffset + p.stages * p.spStageBytes;
  p.sharedBytes = p.metaOffset + p.stages * p.metaStageBytes;
  assert(p.sharedBytes == prefillSharedBytes(p.bm, p.bn, p.bk, p.stages,
                                             p.w4a4, p.shared, p.sparse,
                                             p.lhsGroups) &&
         "the layout and prefillSharedBytes disagree");
  // The chip's limit (ChipDescription), not a fixed one.
  if (p.sharedBytes > target.maxSharedBytesPerBlock)
    return decline("needs " + Twine(p.sharedBytes) +
                   " bytes of shared memory (max " +
                   Twine(target.maxSharedBytesPerBlock) + " on " + target.chip +
                   "); reduce the tiles or prefill-stages");
  return p;
}

/// The operands' dequantizers and the plan of `spec`, or failure with
/// `reason`.
struct PrefillSetup {
  std::optional<BF16FragmentDequant> lhsDequant, rhsDequant;
  PrefillPlan plan;
};
static FailureOr<PrefillSetup> setUpPrefill(const MatmulKernelSpec &spec,
                                            const GPUTarget &target,
                                            GPUConfigAttr config,
                                            std::string &reason) {
  // Operands: bf16 or an exact-in-bf16 scheme; results f32/bf16/f16.
  PrefillSetup setup;
  std::optional<BF16FragmentDequant> &lhsDequant = setup.lhsDequant;
  if (spec.lhsQuantized) {
    std::string why;
    lhsDequant = BF16FragmentDequant::get(spec.lhsQuantized, why);
    if (!lhsDequant) {
      reason = "prefill: lhs: " + why;
      return failure();
    }
  } else if (!spec.lhsElementType || !spec.lhsElementType.isBF16()) {
    reason = "prefill: W4A16 needs bf16 activations (mma.sync bf16)";
    return failure();
  }
  std::string why;
  std::optional<BF16FragmentDequant> rhsDequant =
      BF16FragmentDequant::get(spec.rhs, why);
  if (!rhsDequant) {
    reason = "prefill: rhs: " + why;
    return failure();
  }
  Type out = spec.resultElementType;
  if (!out || !(out.isF32() || out.isBF16() || out.isF16())) {
    reason = "prefill: result must be f32, bf16 or f16";
    return failure();
  }
  FailureOr<PrefillPlan> plan =
      planPrefill(spec, target, config, lhsDequant, *rhsDequant, reason);
  if (failed(plan))
    return failure();
  setup.rhsDequant = rhsDequant;
  setup.plan = *plan;
  return setup;
}

int64_t mlir::fp4::prefillSharedBytes(int64_t bm, int64_t bn, int64_t bk,
                                      int64_t stages, bool w4a4, bool sharedW,
                                      bool sparse, int64_t lhsGroups) {
  int64_t aStage = (w4a4 ? bm * bk / 2 : bm * bk * 2) * lhsGroups;
  int64_t bStage = bn * bk / 2;
  int64_t aBuf = w4a4 ? 2 * bm * bk * 2 : 0;
  int64_t bBuf = sharedW ? 2 * bn * bk * 2 : 0;
  int64_t sparseStage = sparse ? bm * (bk / 2) * 2 + bm * (bk / 8) : 0;
  return stages * (aStage + bStage + sparseStage) + aBuf + bBuf;
}

LogicalResult mlir::fp4::checkPrefillMatmulKernel(const MatmulKernelSpec &spec,
                                                  const GPUTarget &target,
                                                  GPUConfigAttr config,
                                                  std::string &reason) {
  return success(succeeded(setUpPrefill(spec, target, config, reason)));
}

FailureOr<KernelPlan> mlir::fp4::buildPrefillMatmulKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const MatmulKernelSpec &spec, const GPUTarget &target, GPUConfigAttr config,
    std::string &reason) {
  FailureOr<PrefillSetup> setup = setUpPrefill(spec, target, config, reason);
  if (failed(setup))
    return failure();
  const PrefillPlan &plan = setup->plan;
  const std::optional<BF16FragmentDequant> &lhsDequant = setup->lhsDequant;
  const std::optional<BF16FragmentDequant> &rhsDequant = setup->rhsDequant;
  // lhs components, rhs components, [sparse lhs values (bf16) and metadata
  // (i8)], [entry values (bf16: they go into the bf16 tile as they are) and
  // indices], result.
  size_t numOperands = (spec.lhsQuantized
                            ? spec.lhsQuantized.getComponentTypes().size()
                            : 1) +
                       spec.rhs.getComponentTypes().size();
  size_t sparseArgs = plan.sparse ? 2 : 0;
  bool argsOk = spec.args.size() ==
                numOperands + sparseArgs + (plan.entryCount ? 3 : 1);
  auto elementOf = [&](size_t i) {
    return spec.args[i].type.getElementType();
  };
  auto shapeOf = [&](size_t i) { return spec.args[i].type.getShape(); };
  if (argsOk && plan.sparse)
    argsOk = elementOf(numOperands).isBF16() &&
             elementOf(numOperands + 1).isInteger(8) &&
             shapeOf(numOperands) ==
                 ArrayRef<int64_t>{spec.m, spec.k / 2} &&
             shapeOf(numOperands + 1) == ArrayRef<int64_t>{spec.m, spec.k / 8};
  if (argsOk && plan.lhsGroups > 1)
    argsOk = shapeOf(0) == ArrayRef<int64_t>{plan.lhsGroups * spec.m, spec.k};
  if (argsOk && plan.entryCount)
    argsOk = elementOf(numOperands + sparseArgs).isBF16() &&
             elementOf(numOperands + sparseArgs + 1).isInteger(8);
  if (!argsOk) {
    reason = "prefill: unexpected kernel argument list (a sparse lhs is bf16 "
             "values [M, K/2] and i8 metadata [M, K/8]; weight entries are "
             "bf16 values and i8 indices; a stacked lhs is [groups * M, K])";
    return failure();
  }

  KernelLaunch launch;
  launch.block = {plan.threads, 1, 1};
  launch.grid = {static_cast<int64_t>(llvm::divideCeil(spec.n, plan.bn)),
                 static_cast<int64_t>(llvm::divideCeil(spec.m, plan.bm)), 1};
  launch.sharedBytes = plan.sharedBytes;
  launch.variant = spec.lhsQuantized ? "prefill_w4a4" : "prefill_w4a16";
  if (plan.shared)
    launch.variant += "_smem";
  if (plan.sparse)
    launch.variant += "_sparse24";
  if (plan.entryCount)
    launch.variant += "_entries";
  if (plan.lhsGroups > 1)
    launch.variant += "_groups" + std::to_string(plan.lhsGroups);
  if (plan.wgmma)
    launch.variant += "_wgmma";
  for (const KernelArg &arg : spec.args)
    launch.argNames.push_back(arg.name);
  launch.func =
      createKernelShell(builder, loc, module, name, spec.args, launch.block);

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(launch.func.getBody().front().getTerminator());
  PrefillEmitter(builder, loc, plan, spec, lhsDequant, *rhsDequant)
      .emit(launch.func);
  return KernelPlan{{launch}, {}};
}
