//===- SparseWeightEntries.h - weight entries as a 2:4 operand ---*- C++ -*-===//
//
// The decode kernel's warp-group form can multiply block-sparse weight
// entries (at most 2 per 32-element unit of a row) on the sparse tensor
// cores instead of patching them into its dequantized A fragments
// (DecodeConfig::entrySparse). The staged activations get a zero-padded
// copy in which every pair (a, b) of the dense B operand is the 4-element
// group (0, a, b, 0); the dense A's pairs are then exactly the groups of a
// 2:4 A operand, and lane (g, q)'s groups of every k32 step belong to its
// own unit q. So its four packed A registers hold the same values in
// every step, the unit's entries (v0, v1) of rows g and g + 8, and only
// the metadata varies: a group with entry 0 alone at slot s (1 for a, 2
// for b) selects (s, 3), entry 1 alone (0, s), both (1, 2), none (0, 3);
// the zero slots make the unused value's product 0 (so the values must be
// finite: Inf x 0 is NaN). The metadata depends only on the entries'
// positions, so for constant weights it is computed here, at compile
// time, in the order the kernel's lanes load it.
//
// Layout (row block R: rows 16 R .. 16 R + 15; chunk c: K elements
// 128 c .. 128 c + 127; lane l = 4 g + q; unit u of a chunk: its
// elements 32 u .. 32 u + 31, pair p of code word v of a unit: unit
// elements 8 v + p (a) and 8 v + p + 4 (b)):
//   values [R][c][l][h], h = 0, 1: i32, the entries of row 16 R + g + 8 h
//     in unit q of chunk c, v0 in bits 0..15 and v1 in 16..31 (bf16 bits;
//     v0 at the lower position; +0 where missing);
//   meta [R][c][l][i], i = 0..3: i32, the metadata lane l supplies for
//     k32 step s = 2 i + q / 2 under selector s % 2: bits 4 u (row
//     16 R + g) and 16 + 4 u (row 16 R + g + 8) for the group of pair q of
//     code word i of unit u, each nibble lo | hi << 2.
// Rows past N and units past K hold no entries.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_SPARSEWEIGHTENTRIES_H
#define LIB_CONVERSION_FP4TOGPU_SPARSEWEIGHTENTRIES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::fp4 {

/// The packed arrays' leading dimensions for an [n, k] weight.
inline int64_t sparseEntryRowBlocks(int64_t n) { return (n + 15) / 16; }
inline int64_t sparseEntryChunks(int64_t k) { return (k + 127) / 128; }

/// Packs block-sparse entries (`values` bf16 bits and `indices` of
/// [n][k / blockSize][perBlock]; blockSize 16 or a multiple of 32) into
/// the layout above. Fails with `why` when a unit holds more than 2
/// entries, an index is out of its block or repeated, or a value is not
/// finite.
LogicalResult packSparseWeightEntries(ArrayRef<uint16_t> values,
                                      ArrayRef<uint8_t> indices, int64_t n,
                                      int64_t k, int64_t blockSize,
                                      int64_t perBlock,
                                      std::vector<uint32_t> &packedValues,
                                      std::vector<uint32_t> &meta,
                                      std::string &why);

/// The register patch's packed form (DecodeConfig::entryPatch with
/// WeightEntries::packed): the same values [R][c][l][h], and per lane and
/// chunk one key word keys [R][c][l]: byte 2 h + j is entry j of row
/// 16 R + g + 8 h in unit q, its pair index 4 v + p (pair p of code word
/// v) in bits 0..4 and its half (0: element 8 v + p, 1: 8 v + p + 4) in
/// bit 5; 16 where the entry is missing (no pair has it). Values need not
/// be finite (they replace elements; no zero-slot products).
LogicalResult packPatchWeightEntries(ArrayRef<uint16_t> values,
                                     ArrayRef<uint8_t> indices, int64_t n,
                                     int64_t k, int64_t blockSize,
                                     int64_t perBlock,
                                     std::vector<uint32_t> &packedValues,
                                     std::vector<uint32_t> &keys,
                                     std::string &why);

/// packSparseWeightEntries (or, `forPatch`, packPatchWeightEntries) on
/// constant `values` (bf16) and `indices` (i8) of a chain's weight part:
/// the two i32 tensors [rowBlocks][chunks][32][2] and [..][..][32][4] (the
/// patch's keys: [..][..][32][1]) as dense_resource attributes, or failure
/// with `why` (not constants, or not packable).
LogicalResult packConstantSparseEntries(Value values, Value indices, int64_t n,
                                        int64_t k, int64_t blockSize,
                                        DenseResourceElementsAttr &packed,
                                        DenseResourceElementsAttr &meta,
                                        std::string &why,
                                        bool forPatch = false);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_SPARSEWEIGHTENTRIES_H
