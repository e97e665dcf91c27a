//===- TransposedSumTest.cpp - the lane-banked activation sum -------------===//
//
// laneBankedSumColumns decides where the decode tail form reads the
// activation sum lane-banked. Checked here against the tail's own lane
// mapping, brute force: lane l takes entries [l per, (l + 1) per) of a
// row's [K / blockSize x entries] (per = ceil(perRow / 32)); the layout
// is right exactly where every column a lane can read (any index of its
// entries' blocks) lies in [l C, (l + 1) C). That the generated tail's
// gathers then hit distinct banks is test_gpu_interp_shared_stats.py's
// (the kernel itself, interpreted, with a bank model).
//
//===----------------------------------------------------------------------===//

// A header private to the FP4ToGPU library (its directory is on this
// test's include path).
#include "TransposedSum.h"

#include "gtest/gtest.h"

using namespace mlir::fp4;

namespace {

/// Whether the tail's lanes each read only their own K / 32 columns.
bool lanesOwnTheirColumns(int64_t k, int64_t blockSize, int64_t entries) {
  const int64_t perRow = k / blockSize * entries;
  if (perRow % 32 != 0)
    return false; // lanes with partial or no runs
  const int64_t per = perRow / 32, c = k / 32;
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t e = lane * per; e < (lane + 1) * per; ++e) {
      const int64_t block = e / entries;
      const int64_t first = block * blockSize, last = first + blockSize - 1;
      if (first < lane * c || last >= (lane + 1) * c)
        return false;
    }
  return true;
}

TEST(TransposedSum, LaneBankedExactlyWhereLanesOwnTheirColumns) {
  int64_t banked = 0;
  for (int64_t k = 32; k <= 16384; k += 32)
    for (int64_t blockSize : {16, 32, 64, 128})
      for (int64_t entries = 1; entries <= 4; ++entries) {
        if (k % blockSize != 0)
          continue;
        const int64_t c = laneBankedSumColumns(k, blockSize, entries);
        const bool owned = lanesOwnTheirColumns(k, blockSize, entries);
        EXPECT_EQ(c != 0, owned)
            << "k " << k << " block " << blockSize << " entries " << entries;
        if (c != 0) {
          EXPECT_EQ(c, k / 32);
          ++banked;
        }
      }
  // The common shapes are among them.
  EXPECT_GT(banked, 0);
  EXPECT_EQ(laneBankedSumColumns(4096, 32, 2), 128);
  EXPECT_EQ(laneBankedSumColumns(14336, 32, 2), 448);
  EXPECT_EQ(laneBankedSumColumns(4096, 16, 1), 128);
}

TEST(TransposedSum, RejectsShapesTheTailCannotBank) {
  EXPECT_EQ(laneBankedSumColumns(0, 32, 2), 0);
  EXPECT_EQ(laneBankedSumColumns(4096, 0, 2), 0);
  EXPECT_EQ(laneBankedSumColumns(4096, 32, 0), 0);
  EXPECT_EQ(laneBankedSumColumns(4000, 32, 2), 0);  // K % 32
  EXPECT_EQ(laneBankedSumColumns(4096, 48, 2), 0);  // K % block
  EXPECT_EQ(laneBankedSumColumns(512, 32, 2), 0);   // 32 entries per row
  EXPECT_EQ(laneBankedSumColumns(2048, 64, 4), 64); // whole 64-blocks
  EXPECT_EQ(laneBankedSumColumns(1024, 64, 4), 0);  // half a block per lane
}

} // namespace
