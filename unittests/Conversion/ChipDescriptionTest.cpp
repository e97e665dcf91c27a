//===- ChipDescriptionTest.cpp - the chip table and its PTX versions ------===//
//
// The chip description feeds nvvm-attach-target's PTX features and the
// kernel builders' capability checks; the prefill kernel's 2:4 residual
// (mma.sp::ordered_metadata) is taken only where ptxVersion() >= 85.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/ChipDescription.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir::fp4;

TEST(ChipDescription, TableIsInEnumOrder) {
  for (const ChipDescription &chip : getChipDescriptions())
    EXPECT_EQ(&getChipDescription(chip.kind), &chip) << chip.chip.str();
}

TEST(ChipDescription, PtxVersionOfEveryRow) {
  for (const ChipDescription &chip : getChipDescriptions()) {
    int64_t version = chip.ptxVersion();
    // bf16 mma.sync and cp.async need PTX 7.0 at least.
    EXPECT_GE(version, 70) << chip.chip.str();
    EXPECT_EQ("+ptx" + std::to_string(version), chip.ptxFeatures.str());
  }
}

TEST(ChipDescription, HopperTargetsOrderedSparseMetadata) {
  for (GPUChip kind : {GPUChip::SM90, GPUChip::SM90a}) {
    const ChipDescription &chip = getChipDescription(kind);
    EXPECT_TRUE(chip.hasSparseMMA) << chip.chip.str();
    EXPECT_GE(chip.ptxVersion(), 85) << chip.chip.str();
  }
  // Ampere stays at LLVM 22's minimum: no ordered metadata there.
  EXPECT_LT(getChipDescription(GPUChip::SM80).ptxVersion(), 85);
}

TEST(ChipDescription, MalformedFeaturesHaveNoVersion) {
  ChipDescription chip = getChipDescription(GPUChip::SM90);
  for (const char *features : {"ptx85", "+ptx", "+ptx8x", "", "+sm_90"}) {
    chip.ptxFeatures = features;
    EXPECT_EQ(chip.ptxVersion(), 0) << features;
  }
}

// The M boundaries of the selection: the medium prefill class starts above
// the decode family (and ends within one row of 128-row CTA tiles), and
// correction chains leave the decode plans only inside the decode range.
TEST(ChipDescription, MatmulClassBoundariesAreOrdered) {
  for (const ChipDescription &chip : getChipDescriptions()) {
    EXPECT_GT(chip.mediumMaxM, chip.decodeMaxM) << chip.chip.str();
    EXPECT_LE(chip.mediumMaxM, 128) << chip.chip.str();
    EXPECT_EQ(chip.mediumMaxM % 16, 0) << chip.chip.str();
    if (chip.correctionPrefillMinM != 0) {
      // The gain was measured with the 2:4 residual on mma.sp.
      EXPECT_TRUE(chip.hasSparseMMA) << chip.chip.str();
      EXPECT_GE(chip.ptxVersion(), 85) << chip.chip.str();
      EXPECT_GT(chip.correctionPrefillMinM, 1) << chip.chip.str();
      EXPECT_LE(chip.correctionPrefillMinM, chip.decodeMaxM)
          << chip.chip.str();
    }
  }
}

// Resident CTAs by shared memory: 228 KB per SM on the H200 with 1 KB
// reserved per CTA, so two 113 KB CTAs fit and two of 113 KB + 1 byte do
// not (the boundary the two-slot prefill ring and the decode entry copy
// plan against); a block at the limit is one CTA.
TEST(ChipDescription, CTAsPerSMBySharedMemory) {
  const ChipDescription &h200 = getChipDescription(GPUChip::SM90a);
  const int64_t perSM = 228 * 1024;
  EXPECT_EQ(h200.ctasPerSMByShared(perSM / 2 - 1024), 2);
  EXPECT_EQ(h200.ctasPerSMByShared(perSM / 2 - 1024 + 1), 1);
  EXPECT_EQ(h200.ctasPerSMByShared(h200.maxSharedBytesPerBlock), 1);
  EXPECT_EQ(h200.ctasPerSMByShared(0), perSM / 1024);
  for (const ChipDescription &chip : getChipDescriptions())
    EXPECT_EQ(chip.ctasPerSMByShared(chip.maxSharedBytesPerBlock), 1)
        << chip.chip.str();
}
