//===- SparseWeightEntriesTest.cpp - packing entries as a 2:4 operand -----===//
//
// packSparseWeightEntries against the layout SparseWeightEntries.h states,
// element by element: where each entry's value and metadata nibble land,
// the defaults of empty groups, rows past N and units past K, blocks of 16
// and 64, and every input it must refuse (the decode kernel's product
// would otherwise be wrong or NaN). The kernel side of the layout is
// checked by test_gpu_decode_sparse_entries.py (CPU interpreter) and
// bench/sparse_entries_check.py (GPU).
//
//===----------------------------------------------------------------------===//

#include "SparseWeightEntries.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct Packed {
  std::vector<uint32_t> values, meta;
  int64_t chunks;
  uint32_t value(int64_t row, int64_t unit) const {
    const int64_t lane = 4 * (row % 8) + unit % 4;
    return values[((row / 16 * chunks + unit / 4) * 32 + lane) * 2 +
                  (row % 16) / 8];
  }
  /// The nibble of the group holding unit element e of `row`, `unit`.
  uint32_t nibble(int64_t row, int64_t unit, int64_t e) const {
    const int64_t lane = 4 * (row % 8) + e % 4;
    const uint32_t word =
        meta[((row / 16 * chunks + unit / 4) * 32 + lane) * 4 + e / 8];
    return word >> (4 * (unit % 4) + 16 * ((row % 16) / 8)) & 0xF;
  }
};

Packed pack(ArrayRef<uint16_t> values, ArrayRef<uint8_t> indices, int64_t n,
            int64_t k, int64_t block, int64_t perBlock) {
  Packed p;
  p.chunks = sparseEntryChunks(k);
  std::string why;
  EXPECT_TRUE(succeeded(packSparseWeightEntries(values, indices, n, k, block,
                                                perBlock, p.values, p.meta,
                                                why)))
      << why;
  return p;
}

TEST(SparseWeightEntries, EntriesLandInTheirLanesGroupsAndSlots) {
  // 20 rows (two row blocks, the second partial), K = 160 (two chunks, the
  // second partial): row 9, unit 4 (chunk 1, lane unit 0) has entries at
  // elements 13 (word 1, pair 1, slot b) and 2 (word 0, pair 2, slot a),
  // given in that order: v0 is the lower position's.
  const int64_t n = 20, k = 160, blocks = 5;
  std::vector<uint16_t> values(n * blocks * 2, 0);
  std::vector<uint8_t> indices(n * blocks * 2, 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      indices[(r * blocks + b) * 2] = 30;
      indices[(r * blocks + b) * 2 + 1] = 31;
    }
  indices[(9 * blocks + 4) * 2] = 13;
  values[(9 * blocks + 4) * 2] = 0x4040;
  indices[(9 * blocks + 4) * 2 + 1] = 2;
  values[(9 * blocks + 4) * 2 + 1] = 0xC000;
  Packed p = pack(values, indices, n, k, 32, 2);
  ASSERT_EQ(p.values.size(), size_t(2 * 2 * 32 * 2));
  EXPECT_EQ(p.value(9, 4), 0xC000u | 0x4040u << 16);
  EXPECT_EQ(p.nibble(9, 4, 2), 1u | 3u << 2);  // v0 alone at slot a
  EXPECT_EQ(p.nibble(9, 4, 13), 0u | 2u << 2); // v1 alone at slot b
  // Elements 30 and 31 (word 3, pairs 2 and 3, slot b) of the other units.
  EXPECT_EQ(p.nibble(0, 0, 30), 2u | 3u << 2);
  EXPECT_EQ(p.nibble(0, 0, 31), 0u | 2u << 2);
  // Every other group of that unit (named by its slot-a element): none,
  // (0, 3). Element 9 is slot a of element 13's group.
  for (int64_t e = 0; e < 32; ++e)
    if (e != 2 && e != 9 && (e % 8) / 4 == 0)
      EXPECT_EQ(p.nibble(9, 4, e), 12u) << e;
  // Rows past N and units past K: no entries.
  EXPECT_EQ(p.value(25, 5), 0u);
  EXPECT_EQ(p.nibble(25, 5, 30), 12u);
  EXPECT_EQ(p.value(3, 6), 0u);
  EXPECT_EQ(p.nibble(3, 6, 30), 12u);
}

TEST(SparseWeightEntries, TwoEntriesOfOnePairShareItsGroup) {
  // Elements 5 and 1 of a unit: pair 1 of word 0, slots a and b.
  std::vector<uint16_t> values = {0x3F80, 0x4000};
  std::vector<uint8_t> indices = {5, 1};
  Packed p = pack(values, indices, 1, 32, 32, 2);
  EXPECT_EQ(p.value(0, 0), 0x4000u | 0x3F80u << 16);
  EXPECT_EQ(p.nibble(0, 0, 1), 1u | 2u << 2);
}

TEST(SparseWeightEntries, BlocksOf16And64) {
  // Blocks of 16 (one entry each: two per unit) and of 64 (two entries,
  // both in the second unit of the block).
  {
    std::vector<uint16_t> values = {0x3F80, 0x4000};
    std::vector<uint8_t> indices = {7, 0}; // elements 7 and 16
    Packed p = pack(values, indices, 1, 32, 16, 1);
    EXPECT_EQ(p.value(0, 0), 0x3F80u | 0x4000u << 16);
    EXPECT_EQ(p.nibble(0, 0, 7), 2u | 3u << 2);
    EXPECT_EQ(p.nibble(0, 0, 16), 0u | 1u << 2);
  }
  {
    std::vector<uint16_t> values = {0x3F80, 0x4000};
    std::vector<uint8_t> indices = {40, 33}; // unit 1, elements 8 and 1
    Packed p = pack(values, indices, 1, 64, 64, 2);
    EXPECT_EQ(p.value(0, 0), 0u);
    EXPECT_EQ(p.value(0, 1), 0x4000u | 0x3F80u << 16);
    EXPECT_EQ(p.nibble(0, 1, 1), 1u | 3u << 2);
    EXPECT_EQ(p.nibble(0, 1, 8), 0u | 1u << 2);
  }
}

TEST(SparseWeightEntries, RefusesWhatTheKernelCannotMultiply) {
  std::vector<uint32_t> values, meta;
  std::string why;
  auto fails = [&](ArrayRef<uint16_t> v, ArrayRef<uint8_t> i, int64_t k,
                   int64_t block, int64_t per, StringRef expected) {
    why.clear();
    EXPECT_TRUE(failed(
        packSparseWeightEntries(v, i, 1, k, block, per, values, meta, why)));
    EXPECT_NE(why.find(expected.str()), std::string::npos) << why;
  };
  fails({1, 2, 3}, {0, 1, 2}, 32, 32, 3, "more than 2 entries");
  fails({1, 2}, {4, 4}, 32, 32, 2, "two entries at one position");
  fails({1, 2}, {4, 32}, 32, 32, 2, "not inside its block");
  fails({0x7F80, 2}, {4, 5}, 32, 32, 2, "non-finite");
  fails({0xFFC1, 2}, {4, 5}, 32, 32, 2, "non-finite");
  fails({1, 2}, {4, 5}, 48, 48, 2, "blocks of 16");
  fails({1, 2, 3}, {4, 5, 6}, 32, 32, 2, "do not match");
}

TEST(PatchWeightEntries, KeysNameEachEntrysPairAndHalf) {
  // The register patch's keys (packPatchWeightEntries): 20 rows, K = 160
  // as above; row 9 (row block 0, h = 1), unit 4 (chunk 1, lane unit 0)
  // has entries at elements 13 (word 1, pair 1: pair index 5, half 1) and
  // 2 (word 0, pair 2: pair index 2, half 0), given in that order; row 17
  // (row block 1, h = 0), unit 1 one entry at element 31 (word 3, pair 3:
  // index 15, half 1), +Inf (the patch replaces the element; no zero-slot
  // product, so it packs).
  const int64_t n = 20, k = 160, blocks = 5;
  std::vector<uint16_t> values(n * blocks, 0);
  std::vector<uint8_t> indices(n * blocks, 0);
  std::vector<uint16_t> values2(n * blocks * 2, 0);
  std::vector<uint8_t> indices2(n * blocks * 2, 0);
  // Every unit first gets two entries at its elements 0 and 1.
  for (int64_t i = 0; i < n * blocks; ++i) {
    indices2[2 * i] = 0;
    indices2[2 * i + 1] = 1;
    values2[2 * i] = 0x3F80;
    values2[2 * i + 1] = 0x4000;
  }
  values2[(9 * blocks + 4) * 2] = 0x4040;
  indices2[(9 * blocks + 4) * 2] = 13;
  values2[(9 * blocks + 4) * 2 + 1] = 0xC000;
  indices2[(9 * blocks + 4) * 2 + 1] = 2;
  std::vector<uint32_t> packed, keys;
  std::string why;
  ASSERT_TRUE(succeeded(packPatchWeightEntries(values2, indices2, n, k, 32, 2,
                                               packed, keys, why)))
      << why;
  const int64_t chunks = sparseEntryChunks(k);
  ASSERT_EQ(keys.size(), static_cast<size_t>(2 * chunks * 32));
  auto lane = [&](int64_t row, int64_t unit) {
    return (row / 16 * chunks + unit / 4) * 32 + 4 * (row % 8) + unit % 4;
  };
  auto key = [&](int64_t row, int64_t unit, int64_t j) {
    return keys[lane(row, unit)] >> (16 * ((row % 16) / 8) + 8 * j) & 0xFF;
  };
  // v0 is the lower position's, and so is key byte 0.
  EXPECT_EQ(packed[lane(9, 4) * 2 + 1], 0xC000u | 0x4040u << 16);
  EXPECT_EQ(key(9, 4, 0), 2u);
  EXPECT_EQ(key(9, 4, 1), 5u | 1u << 5);
  // Elements 0 and 1 elsewhere: pairs 0 and 1 of word 0, low halves.
  EXPECT_EQ(key(1, 0, 0), 0u);
  EXPECT_EQ(key(1, 0, 1), 1u);
  // Rows past N (row block 1: 20..31) hold no entries: key 16.
  EXPECT_EQ(key(21, 0, 0), 16u);
  EXPECT_EQ(key(21, 0, 1), 16u);

  // One entry per unit, one of them +Inf at element 31; the second byte
  // says "none".
  values[17 * blocks + 1] = 0x7F80;
  indices[17 * blocks + 1] = 31;
  ASSERT_TRUE(succeeded(packPatchWeightEntries(values, indices, n, k, 32, 1,
                                               packed, keys, why)))
      << why;
  EXPECT_EQ(packed[lane(17, 1) * 2], 0x7F80u);
  EXPECT_EQ(key(17, 1, 0), 15u | 1u << 5);
  EXPECT_EQ(key(17, 1, 1), 16u);

  // What it refuses, as the sparse packer (more than 2 entries, a
  // repeated position, an index out of its block).
  why.clear();
  EXPECT_TRUE(failed(packPatchWeightEntries({1, 2, 3}, {0, 1, 2}, 1, 32, 32,
                                            3, packed, keys, why)));
  EXPECT_NE(why.find("more than 2 entries"), std::string::npos) << why;
  why.clear();
  EXPECT_TRUE(failed(packPatchWeightEntries({1, 2}, {4, 4}, 1, 32, 32, 2,
                                            packed, keys, why)));
  EXPECT_NE(why.find("two entries at one position"), std::string::npos)
      << why;
  why.clear();
  EXPECT_TRUE(failed(packPatchWeightEntries({1, 2}, {4, 32}, 1, 32, 32, 2,
                                            packed, keys, why)));
  EXPECT_NE(why.find("not inside its block"), std::string::npos) << why;
}

} // namespace
