//===- WarpgroupMMA.h - wgmma.mma_async building blocks ---------*- C++ -*-===//
//
// sm_90a's warp-group MMA for the prefill kernels: shared-memory matrix
// descriptors for K-major bf16 tiles in the 128- and 64-byte swizzles, the
// m64nNk16 bf16 -> f32 instruction and its 2:4-sparse m64nNk32 form, and
// the accumulator in the mma.sync C-fragment form the kernels' epilogues
// already take.
//
// Tile layout (what the descriptor describes). A K-major tile of R rows and
// K bf16 is stored as K / 64 "atoms" [R][64] (one 128-byte line per row,
// atoms R * 128 bytes apart), and inside an atom row r's 16-byte chunk c
// sits at chunk c ^ (r & 7). Every atom starts at a multiple of 1024 bytes
// of the shared window, so the XOR is the hardware's 128-byte swizzle
// (address bits 4..6 ^= bits 7..9). wgmmaTileChunk gives the position.
//
// Why raw NVVM and not nvgpu.warpgroup.mma: nvgpu's descriptors come from
// a TMA tensor map (nvgpu.warpgroup.generate.descriptor); our weight tiles
// are written by the threads that dequantize them, so no tensor map
// exists for them.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_WARPGROUPMMA_H
#define LIB_CONVERSION_FP4TOGPU_WARPGROUPMMA_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::fp4 {

/// Bytes of one 128-byte-swizzle atom row and of an 8-row swizzle period.
constexpr int64_t kWgmmaAtomRowBytes = 128;
constexpr int64_t kWgmmaSwizzleBytes = 1024;

/// The shared-window byte address (i64) of the first byte of `memref`, a
/// workgroup-memory memref.
Value buildSharedAddress(OpBuilder &b, Location loc, Value memref);

/// Traps unless `address` (a shared-window address, i64) starts a 1024-byte
/// swizzle period: the descriptors assume 1024-byte-aligned atoms (the
/// swizzle pattern repeats on absolute address bits). Dynamic shared
/// memory starts at the CTA's shared window, which is aligned; a launch
/// where it is not traps instead of computing with misplaced tiles.
void buildSwizzleBaseCheck(OpBuilder &b, Location loc, Value address);

/// wgmma matrix descriptor (i64) of a K-major bf16 tile whose rows are
/// `rowBytes` long (128: the 128-byte swizzle, mode 1; 64: the 64-byte
/// swizzle, mode 2, 16-byte chunk c of row r at c ^ ((r >> 1) & 3), 8-row
/// periods of 512 bytes) and whose current k slice starts at shared byte
/// address `address` (i64): start address >> 4, leading byte offset 1
/// (unused by K-major swizzled tiles), stride byte offset 8 rows, base
/// offset 0 (every period starts on its own size).
Value buildWgmmaDescriptor(OpBuilder &b, Location loc, Value address,
                           int64_t rowBytes = kWgmmaAtomRowBytes);

/// A zero accumulator of wgmma m64nNk16 f32: an LLVM struct of n / 2 f32.
Value buildWgmmaZeroAccumulator(OpBuilder &b, Location loc, int64_t n);

/// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.bf16.bf16, both operands
/// K-major in shared memory (descriptors), D += A B^T; returns the new
/// accumulator struct. Needs wgmma.fence before the first of a batch and
/// commit / wait after it (the caller orders them).
Value buildWgmmaBF16(OpBuilder &b, Location loc, Value descA, Value descB,
                     Value acc, int64_t n);

/// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.bf16.bf16 with A from
/// registers: `a` 4 x i32 (bf16 pairs) in the mma.sync m16n8k16 A fragment
/// layout of each warp's 16 rows (warp w of the group: rows 16 w..), B
/// K-major in shared memory (descB); D += A B^T. Inline PTX (the NVVM
/// dialect's op takes A as a descriptor only). A's registers must not
/// change before the wgmma completes (wait); fencing as buildWgmmaBF16.
Value buildWgmmaRegisterABF16(OpBuilder &b, Location loc, ValueRange a,
                              Value descB, Value acc, int64_t n);

/// wgmma.mma_async.sp.sync.aligned.m64n<n>k32.f32.bf16.bf16: A 2:4-sparse
/// along K, its packed M x K/2 values K-major in shared memory (descA: the
/// k32 step's 16 packed columns), B as buildWgmmaBF16 (descB: the step's
/// 32 columns); `meta` (i32) is the sparsity metadata of this thread under
/// selector 0, laid out per warp as mma.sp m16n8k32's (each warp of the
/// group covers its 16 rows). Inline PTX: the NVVM dialect of LLVM 22 has
/// no sparse wgmma. Same fencing as buildWgmmaBF16.
Value buildWgmmaSparseBF16(OpBuilder &b, Location loc, Value descA,
                           Value descB, Value meta, Value acc, int64_t n);

/// wgmma.mma_async.sp.sync.aligned.m64n<n>k32.f32.bf16.bf16 with the
/// packed A from registers: `a` 4 x i32, each the two kept bf16 values of
/// one 4-element group (lower position in the low half), in mma.sp
/// m16n8k32's A layout per warp (lane (g, q): groups q and q + 4 of rows
/// g and g + 8, registers {g, q}, {g + 8, q}, {g, q + 4}, {g + 8, q + 4});
/// B's 32 columns K-major in shared memory (descB); `meta` (i32) this
/// thread's sparsity metadata under `selector` (0: lanes q = 0, 1 of each
/// quad supply it, 1: lanes 2, 3; lane q % 2 = 0 holds groups 0..3, 1
/// groups 4..7, row g in bits 0..15 and g + 8 in 16..31, nibble lo | hi
/// << 2, lo < hi). D += A B^T. Inline PTX (LLVM 22's NVVM dialect has no
/// sparse wgmma); fencing as buildWgmmaRegisterABF16.
Value buildWgmmaSparseRegisterABF16(OpBuilder &b, Location loc, ValueRange a,
                                    Value descB, Value meta, int64_t selector,
                                    Value acc, int64_t n);

/// The accumulator as n / 8 vector<4xf32>, the mma.sync C fragment of each
/// n8 column tile: lane (g, q) of warp w of the warp group holds rows
/// 16 w + g and 16 w + g + 8, columns 8 j + 2 q and 8 j + 2 q + 1 of tile j.
SmallVector<Value> unpackWgmmaAccumulator(OpBuilder &b, Location loc,
                                          Value acc, int64_t n);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_WARPGROUPMMA_H
