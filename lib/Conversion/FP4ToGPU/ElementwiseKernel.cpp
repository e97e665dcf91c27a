//===- ElementwiseKernel.cpp - thread-per-chunk quantize kernels ----------===//
//
// Memory accesses are whole-chunk vector loads/stores of at most 16 bytes
// with their natural alignment, so NVPTX emits ld.global.nc.v4.b32 /
// st.global.v4.b32 (toolchain.md: without the alignment attribute it splits
// them into scalar accesses). Bytes are moved as i32 words: vector<16xi8>
// accesses would be split into bytes.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseKernel.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/BF16.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp4;

Value mlir::fp4::indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value mlir::fp4::flattenMemref(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return memref::CollapseShapeOp::create(
      b, loc,
      MemRefType::get({type.getNumElements()}, type.getElementType(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace()),
      memref, ArrayRef<ReassociationIndices>{all});
}

int64_t mlir::fp4::naturalAlignment(int64_t bytes) {
  int64_t a = 1;
  while (a < 16 && bytes % (2 * a) == 0)
    a *= 2;
  return a;
}

SmallVector<Value> mlir::fp4::loadElements(OpBuilder &b, Location loc,
                                           Value memref, ValueRange indices,
                                           int64_t count) {
  Type elt = cast<MemRefType>(memref.getType()).getElementType();
  int64_t bytes = count * elt.getIntOrFloatBitWidth() / 8;
  Value v = vector::LoadOp::create(b, loc, VectorType::get({count}, elt),
                                   memref, indices, /*nontemporal=*/false,
                                   llvm::MaybeAlign(naturalAlignment(bytes)));
  SmallVector<Value> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(vector::ExtractOp::create(b, loc, v, i));
  return out;
}

Value mlir::fp4::emitGlobalThreadId(OpBuilder &b, Location loc,
                                    int64_t blockDim) {
  Type indexType = b.getIndexType();
  Value tid = gpu::ThreadIdOp::create(b, loc, indexType, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, indexType, gpu::Dimension::x);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, indexConst(b, loc, blockDim)),
      tid);
}

ChunkCoords mlir::fp4::emitFlatChunkCoords(OpBuilder &b, Location loc,
                                           Value gid, int64_t rows,
                                           int64_t cols, int64_t chunk) {
  assert(cols % chunk == 0 && "a chunk must not straddle rows");
  int64_t numChunks = rows * cols / chunk;
  ChunkCoords c;
  c.valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, gid,
                                  indexConst(b, loc, numChunks));
  c.chunk =
      arith::MinUIOp::create(b, loc, gid, indexConst(b, loc, numChunks - 1));
  Value perRow = indexConst(b, loc, cols / chunk);
  c.row = arith::DivUIOp::create(b, loc, c.chunk, perRow);
  c.col = arith::MulIOp::create(b, loc,
                                arith::RemUIOp::create(b, loc, c.chunk, perRow),
                                indexConst(b, loc, chunk));
  c.tid = gpu::ThreadIdOp::create(b, loc, b.getIndexType(), gpu::Dimension::x);
  return c;
}

/// Byte size of a float element type.
static int64_t byteWidth(Type t) { return t.getIntOrFloatBitWidth() / 8; }

SmallVector<Value> mlir::fp4::loadFloatsAsF32(OpBuilder &b, Location loc,
                                              Value memref, Value row,
                                              Value col, int64_t count) {
  Type elt = cast<MemRefType>(memref.getType()).getElementType();
  int64_t width = byteWidth(elt);
  int64_t pieceBytes = naturalAlignment(count * width);
  int64_t perPiece = pieceBytes / width;
  ArithOps ops(b, loc);
  SmallVector<Value> values;
  for (int64_t p = 0; p < count / perPiece; ++p) {
    Value c = p == 0 ? col
                     : arith::AddIOp::create(b, loc, col,
                                             indexConst(b, loc, p * perPiece));
    Value v = vector::LoadOp::create(
        b, loc, VectorType::get({perPiece}, elt), memref, ValueRange{row, c},
        /*nontemporal=*/false, llvm::MaybeAlign(pieceBytes));
    if (elt.isF32()) {
      for (int64_t i = 0; i < perPiece; ++i)
        values.push_back(vector::ExtractOp::create(b, loc, v, i));
      continue;
    }
    if (elt.isF16()) {
      // cvt.f32.f16 is the exact IEEE widening, the value f16Decode
      // computes with eight integer operations (NaN stays NaN; only its
      // NaN-ness is ever read).
      for (int64_t i = 0; i < perPiece; ++i)
        values.push_back(arith::ExtFOp::create(
            b, loc, b.getF32Type(),
            vector::ExtractOp::create(b, loc, v, i).getResult()));
      continue;
    }
    // bf16: two values per i32 word, the lower index in the low half
    // (little-endian); bf16Decode is one shift or mask.
    Value words = vector::BitCastOp::create(
        b, loc, VectorType::get({perPiece / 2}, b.getI32Type()), v);
    for (int64_t i = 0; i < perPiece / 2; ++i) {
      Value w = vector::ExtractOp::create(b, loc, words, i);
      values.push_back(numerics::bf16Decode(ops, w));
      values.push_back(numerics::bf16Decode(ops, ops.shrui(w, ops.i32(16))));
    }
  }
  return values;
}

void mlir::fp4::storeF32AsFloats(OpBuilder &b, Location loc,
                                 ArrayRef<Value> values, Value memref,
                                 Value row, Value col) {
  Type elt = cast<MemRefType>(memref.getType()).getElementType();
  int64_t width = byteWidth(elt);
  int64_t count = values.size();
  int64_t pieceBytes = naturalAlignment(count * width);
  int64_t perPiece = pieceBytes / width;
  ArithOps ops(b, loc);
  for (int64_t p = 0; p < count / perPiece; ++p) {
    ArrayRef<Value> piece = values.slice(p * perPiece, perPiece);
    // castFloatTensor rounds with roundToBF16 / roundToF16: IEEE
    // round-to-nearest-even with overflow to Inf, which is what arith.truncf
    // (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32) does in one instruction per
    // pair, bit for bit on every non-NaN value (a NaN stays a NaN).
    SmallVector<Value> rounded;
    for (Value x : piece)
      rounded.push_back(elt.isF32() ? x
                                    : arith::TruncFOp::create(b, loc, elt, x));
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({perPiece}, elt), rounded);
    Value c = p == 0 ? col
                     : arith::AddIOp::create(b, loc, col,
                                             indexConst(b, loc, p * perPiece));
    vector::StoreOp::create(b, loc, v, memref, ValueRange{row, c},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(pieceBytes));
  }
}

void mlir::fp4::storeCodes(OpBuilder &b, Location loc, ArrayRef<Value> codes,
                           Value memref, Value row, Value col) {
  assert(codes.size() % 8 == 0 && "codes are stored as whole i32 words");
  ArithOps ops(b, loc);
  SmallVector<Value> words;
  for (size_t w = 0; w < codes.size() / 8; ++w) {
    Value word;
    for (int64_t j = 0; j < 8; ++j) {
      // The rules' codes are sign << 3 | magnitude, already in 0..15.
      Value nibble = codes[8 * w + j];
      if (j)
        nibble = ops.shli(nibble, ops.i32(4 * j));
      word = j ? ops.ori(word, nibble) : nibble;
    }
    words.push_back(word);
  }
  int64_t bytes = codes.size() / 2;
  int64_t pieceBytes = naturalAlignment(bytes);
  int64_t wordsPerPiece = pieceBytes / 4;
  Value byteCol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, 2));
  for (int64_t p = 0; p < bytes / pieceBytes; ++p) {
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({wordsPerPiece}, b.getI32Type()),
        ArrayRef(words).slice(p * wordsPerPiece, wordsPerPiece));
    v = vector::BitCastOp::create(
        b, loc, VectorType::get({pieceBytes}, b.getI8Type()), v);
    Value c = p == 0 ? byteCol
                     : arith::AddIOp::create(
                           b, loc, byteCol, indexConst(b, loc, p * pieceBytes));
    vector::StoreOp::create(b, loc, v, memref, ValueRange{row, c},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(pieceBytes));
  }
}

SmallVector<Value> mlir::fp4::loadCodes(OpBuilder &b, Location loc,
                                        Value memref, Value row, Value col,
                                        int64_t count) {
  assert(count % 8 == 0 && "codes are loaded as whole i32 words");
  ArithOps ops(b, loc);
  int64_t bytes = count / 2;
  int64_t pieceBytes = naturalAlignment(bytes);
  Value byteCol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, 2));
  SmallVector<Value> codes;
  for (int64_t p = 0; p < bytes / pieceBytes; ++p) {
    Value c = p == 0 ? byteCol
                     : arith::AddIOp::create(
                           b, loc, byteCol, indexConst(b, loc, p * pieceBytes));
    Value v = vector::LoadOp::create(
        b, loc, VectorType::get({pieceBytes}, b.getI8Type()), memref,
        ValueRange{row, c}, /*nontemporal=*/false,
        llvm::MaybeAlign(pieceBytes));
    Value words = vector::BitCastOp::create(
        b, loc, VectorType::get({pieceBytes / 4}, b.getI32Type()), v);
    for (int64_t w = 0; w < pieceBytes / 4; ++w) {
      Value word = vector::ExtractOp::create(b, loc, words, w);
      // Element 2k is the low nibble of byte k (docs/ABI.md).
      for (int64_t j = 0; j < 8; ++j)
        codes.push_back(
            ops.andi(j ? ops.shrui(word, ops.i32(4 * j)) : word, ops.i32(0xF)));
    }
  }
  return codes;
}

Value mlir::fp4::shuffleXor(OpBuilder &b, Location loc, Value v,
                            int64_t offset) {
  return gpu::ShuffleOp::create(b, loc, v, static_cast<int32_t>(offset),
                                /*width=*/32, gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value mlir::fp4::shuffleIdx(OpBuilder &b, Location loc, Value v,
                            Value srcLane) {
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 32);
  return gpu::ShuffleOp::create(
             b, loc, v, srcLane, width,
             gpu::ShuffleModeAttr::get(b.getContext(), gpu::ShuffleMode::IDX))
      .getShuffleResult();
}

Value mlir::fp4::groupReduce(OpBuilder &b, Location loc, Value v, int64_t lanes,
                             function_ref<Value(Value, Value)> combine) {
  assert(lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0 &&
         "lane groups are powers of two within a warp");
  for (int64_t offset = 1; offset < lanes; offset *= 2)
    v = combine(v, shuffleXor(b, loc, v, offset));
  return v;
}

Value mlir::fp4::ctaGroupReduce(OpBuilder &b, Location loc, Value v,
                                int64_t lanes, Value tid, Value scratch,
                                function_ref<Value(Value, Value)> combine) {
  assert(lanes % 32 == 0 && "CTA groups are whole warps");
  v = groupReduce(b, loc, v, 32, combine);
  Value warp = arith::DivUIOp::create(b, loc, tid, indexConst(b, loc, 32));
  Value lane = arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, 32));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      indexConst(b, loc, 0));
  emitIf(b, loc, first, [&](OpBuilder &nb, Location l) {
    memref::StoreOp::create(nb, l, v, scratch, ValueRange{warp});
  });
  gpu::BarrierOp::create(b, loc);
  int64_t warps = lanes / 32;
  Value firstWarp = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, warp, indexConst(b, loc, warps)),
      indexConst(b, loc, warps));
  Value r = memref::LoadOp::create(b, loc, scratch, ValueRange{firstWarp});
  for (int64_t w = 1; w < warps; ++w) {
    Value idx = arith::AddIOp::create(b, loc, firstWarp, indexConst(b, loc, w));
    r = combine(r, memref::LoadOp::create(b, loc, scratch, ValueRange{idx}));
  }
  // The slots are reused by the next reduction.
  gpu::BarrierOp::create(b, loc);
  return r;
}

void mlir::fp4::emitIf(OpBuilder &b, Location loc, Value cond,
                       function_ref<void(OpBuilder &, Location)> body) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(b, loc);
}
