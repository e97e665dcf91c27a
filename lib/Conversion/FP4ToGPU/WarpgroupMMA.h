//===- WarpgroupMMA.h - wgmma.mma_async building blocks ---------*- C++ -*-===//
//
// sm_90a's warp-group MMA for the prefill kernels: shared-memory matrix
// descriptors for K-major bf16 tiles in the 128-byte swizzle, the
// m64nNk16 bf16 -> f32 instruction, and the accumulator in the mma.sync
// C-fragment form the kernels' epilogues already take.
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

/// wgmma matrix descriptor (i64) of a K-major bf16 tile in the 128-byte
/// swizzle whose current k16 slice starts at shared byte address `address`
/// (i64): start address >> 4, leading byte offset 1 (unused by K-major
/// swizzled tiles), stride byte offset 1024 >> 4 (8-row groups), base
/// offset 0 (atoms are 1024-byte aligned), swizzle mode 1 (128 bytes).
Value buildWgmmaDescriptor(OpBuilder &b, Location loc, Value address);

/// A zero accumulator of wgmma m64nNk16 f32: an LLVM struct of n / 2 f32.
Value buildWgmmaZeroAccumulator(OpBuilder &b, Location loc, int64_t n);

/// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.bf16.bf16, both operands
/// K-major in shared memory (descriptors), D += A B^T; returns the new
/// accumulator struct. Needs wgmma.fence before the first of a batch and
/// commit / wait after it (the caller orders them).
Value buildWgmmaBF16(OpBuilder &b, Location loc, Value descA, Value descB,
                     Value acc, int64_t n);

/// The accumulator as n / 8 vector<4xf32>, the mma.sync C fragment of each
/// n8 column tile: lane (g, q) of warp w of the warp group holds rows
/// 16 w + g and 16 w + g + 8, columns 8 j + 2 q and 8 j + 2 q + 1 of tile j.
SmallVector<Value> unpackWgmmaAccumulator(OpBuilder &b, Location loc,
                                          Value acc, int64_t n);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_WARPGROUPMMA_H
