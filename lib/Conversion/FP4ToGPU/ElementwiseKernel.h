//===- ElementwiseKernel.h - thread-per-chunk quantize kernels --*- C++ -*-===//
//
// The structure the quantize and dequantize kernels share. A rank-2 [R, K]
// tensor is read as its row-major flattening, cut into *chunks* of E
// consecutive elements (E divides K, so a chunk never straddles two rows);
// thread g of the grid owns chunk g. Because every block, rotation group and
// macro block of the schemes is a whole number of chunks aligned to its own
// size, the L threads that own one such group are L consecutive lanes of a
// warp (L a power of two <= 32) or a run of whole warps of one CTA, and
// cross-thread reductions are warp shuffles (or a shared-memory step).
//
// Tails: the last CTA may have threads past the last chunk. They compute on
// the last chunk (clamped index) so that every lane reaches every shuffle
// and barrier, and skip their stores. A group is never split between valid
// and invalid threads (the number of chunks is a multiple of every group).
//
// Loaded bf16/f16 values are exactly the f32 the CPU lowering computes with
// (castFloatTensor: bf16Decode / f16Decode), and stored results are rounded
// exactly as it rounds (roundToBF16 / roundToF16: IEEE round to nearest
// even). Where a conversion instruction computes the same IEEE operation
// (cvt.f32.f16, cvt.rn.bf16.f32, cvt.rn.f16.f32) it is used instead of the
// rule's integer sequence: the same value for every non-NaN input, a NaN for
// a NaN (the schemes only ever look at whether a value is NaN).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_ELEMENTWISEKERNEL_H
#define LIB_CONVERSION_FP4TOGPU_ELEMENTWISEKERNEL_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::fp4 {

/// Where a thread's chunk is. `row`/`col` locate its first element; `lane`
/// is the thread index within its CTA (a multiple of 32 threads, so
/// `lane mod L` is the position in a group of L <= 32 lanes too).
struct ChunkCoords {
  /// gid < number of chunks: this thread stores.
  Value valid;
  /// The (clamped) chunk index, its first element's row and column (index).
  Value chunk, row, col;
  /// Thread index within the CTA (index).
  Value tid;
};

/// Flat layout: thread `gid` (= block_id * blockDim + thread_id, plus
/// `extraChunks` for grid-stride loops) owns chunk min(gid, numChunks - 1) of
/// a [rows, cols] tensor cut into chunks of `chunk` elements.
ChunkCoords emitFlatChunkCoords(OpBuilder &b, Location loc, Value gid,
                                int64_t rows, int64_t cols, int64_t chunk);

/// The global thread index block_id.x * blockDim + thread_id.x (index).
Value emitGlobalThreadId(OpBuilder &b, Location loc, int64_t blockDim);

/// Loads `count` elements starting at (row, col) of a bf16/f16/f32 memref
/// with 16-byte (or the chunk's natural) vector loads and widens them to f32
/// exactly.
SmallVector<Value> loadFloatsAsF32(OpBuilder &b, Location loc, Value memref,
                                   Value row, Value col, int64_t count);

/// Rounds f32 values to the element type of `memref` (to nearest even, as
/// castFloatTensor) and stores them at (row, col) with vector stores.
void storeF32AsFloats(OpBuilder &b, Location loc, ArrayRef<Value> values,
                      Value memref, Value row, Value col);

/// Packs 4-bit codes (i32 values that must be in 0..15, as every numerics
/// rule's codes are; element 2k in the low nibble, as docs/ABI.md) and stores
/// them at byte (row, col / 2) of an i8 memref; codes.size() is a multiple of 8
/// (whole i32 words).
void storeCodes(OpBuilder &b, Location loc, ArrayRef<Value> codes, Value memref,
                Value row, Value col);

/// Loads `count` (a multiple of 8) 4-bit codes of elements (row, col ..)
/// from an i8 memref; returns i32 values 0..15.
SmallVector<Value> loadCodes(OpBuilder &b, Location loc, Value memref,
                             Value row, Value col, int64_t count);

/// gpu.shuffle xor of a 32-bit value over the full warp.
Value shuffleXor(OpBuilder &b, Location loc, Value v, int64_t offset);
/// gpu.shuffle idx of a 32-bit value from lane `srcLane` (an i32).
Value shuffleIdx(OpBuilder &b, Location loc, Value v, Value srcLane);

/// Combines an i32 value over each aligned group of `lanes` consecutive
/// threads (a power of two <= 32) with `combine`, which must be associative
/// and commutative on the values involved (max of |x| bits, or): every lane
/// ends up with the group's value.
Value groupReduce(OpBuilder &b, Location loc, Value v, int64_t lanes,
                  function_ref<Value(Value, Value)> combine);

/// Same for groups of `lanes` threads spanning whole warps of the CTA
/// (lanes a multiple of 32 dividing blockDim): a warp reduction, then one
/// value per warp through `scratch` (a workgroup memref<?xi32> with one slot
/// per warp of the CTA) between two barriers. Every thread of the CTA must
/// call it.
Value ctaGroupReduce(OpBuilder &b, Location loc, Value v, int64_t lanes,
                     Value tid, Value scratch,
                     function_ref<Value(Value, Value)> combine);

/// Runs `body` only where `cond` holds (an scf.if without results).
void emitIf(OpBuilder &b, Location loc, Value cond,
            function_ref<void(OpBuilder &, Location)> body);

/// index constant.
Value indexConst(OpBuilder &b, Location loc, int64_t v);
/// `count` consecutive elements of `memref` from `indices` on along its last
/// dimension, as scalars, by one vector load aligned to naturalAlignment of
/// its size (the caller guarantees the offset is a multiple of the size).
SmallVector<Value> loadElements(OpBuilder &b, Location loc, Value memref,
                                ValueRange indices, int64_t count);
/// The row-major flat view (memref.collapse_shape of every dimension) of a
/// static, identity-layout `memref`, in its memory space.
Value flattenMemref(OpBuilder &b, Location loc, Value memref);
/// The largest power of two dividing `bytes`, at most 16: the alignment of
/// a vector access of `bytes` bytes at a multiple of `bytes`.
int64_t naturalAlignment(int64_t bytes);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_ELEMENTWISEKERNEL_H
