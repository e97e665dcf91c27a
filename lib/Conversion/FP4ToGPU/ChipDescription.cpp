//===- ChipDescription.cpp - the table of supported GPUs ------------------===//
//
// Facts from the CUDA C Programming Guide (compute capabilities table) and
// the PTX ISA (instruction availability per target); the PTX versions are
// LLVM 22's minimum for each chip (toolchain.md), except Hopper's: 8.5,
// the first with mma.sp::ordered_metadata (the prefill kernel's 2:4 sparse
// residual, whose layout and rate were measured in that form). The bf16
// mma.sync every kernel uses needs sm_80, so nothing older is listed.
//
//===----------------------------------------------------------------------===//

#include "fp4/Conversion/FP4ToGPU/ChipDescription.h"

#include "llvm/ADT/StringExtras.h"

#include <string>

using namespace mlir;
using namespace mlir::fp4;

namespace {

constexpr int64_t kKiB = 1024;

// clang-format off
const ChipDescription kChips[] = {
  // kind, chip, sm, ptx, nativeFP4, fp8 mma, wgmma, tcgen05, tma, mma.sp,
  // warp group, smem per block, regs per SM, regs per thread, threads per
  // block, warp size, native FP4 implemented, decode max M, medium max M,
  // correction chains on prefill from M (0 where the 2:4 residual cannot
  // use mma.sp with ordered metadata: the measured gain is with it),
  // summary
  {GPUChip::SM80, "sm_80", 80, "+ptx70", false, false, false, false, false,
   true, 0, 163 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 0,
   "Ampere A100: bf16 mma.sync, FP4 emulated"},
  {GPUChip::SM86, "sm_86", 86, "+ptx71", false, false, false, false, false,
   true, 0, 99 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 0,
   "Ampere GA10x: bf16 mma.sync, FP4 emulated"},
  {GPUChip::SM89, "sm_89", 89, "+ptx78", false, true, false, false, false,
   true, 0, 99 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 0,
   "Ada: FP8 mma.sync, FP4 emulated"},
  {GPUChip::SM90, "sm_90", 90, "+ptx85", false, true, false, false, true,
   true, 128, 227 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 9,
   "Hopper H100/H200 (default): TMA, FP4 emulated on bf16 mma.sync"},
  {GPUChip::SM90a, "sm_90a", 90, "+ptx85", false, true, true, false, true,
   true, 128, 227 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 9,
   "Hopper with the sm_90a features: wgmma, TMA, FP4 emulated"},
  {GPUChip::SM100a, "sm_100a", 100, "+ptx86", true, true, false, true, true,
   true, 128, 227 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 9,
   "Blackwell B200: tcgen05 block-scaled FP4 MMA (native kernels not yet "
   "generated)"},
  {GPUChip::SM120a, "sm_120a", 120, "+ptx87", true, true, false, false, true,
   true, 0, 99 * kKiB, 65536, 255, 1024, 32, false, 16, 128, 9,
   "Blackwell RTX: block-scaled FP4 mma.sync (native kernels not yet "
   "generated)"},
};
// clang-format on

} // namespace

ArrayRef<ChipDescription> mlir::fp4::getChipDescriptions() { return kChips; }

int64_t ChipDescription::ptxVersion() const {
  int64_t version = 0;
  StringRef digits = ptxFeatures;
  if (!digits.consume_front("+ptx") || digits.getAsInteger(10, version))
    return 0;
  return version;
}

int64_t ChipDescription::ctasPerSMByShared(int64_t bytesPerBlock) const {
  // On every chip of the table an SM's shared memory is the block limit
  // plus 1 KB, and the hardware reserves 1 KB of it per resident CTA (CUDA
  // programming guide, compute capability tables: e.g. sm_90 228 KB per SM,
  // 227 KB per block).
  constexpr int64_t kReservedPerCTA = 1024;
  return (maxSharedBytesPerBlock + kReservedPerCTA) /
         (bytesPerBlock + kReservedPerCTA);
}

const ChipDescription &mlir::fp4::getChipDescription(GPUChip chip) {
  const ChipDescription &description = kChips[static_cast<unsigned>(chip)];
  assert(description.kind == chip && "chip table out of GPUChip order");
  return description;
}

const ChipDescription *mlir::fp4::lookupChipDescription(StringRef chip) {
  for (const ChipDescription &description : kChips)
    if (description.chip == chip)
      return &description;
  return nullptr;
}

std::string mlir::fp4::getSupportedChipList() {
  return llvm::join(llvm::map_range(kChips,
                                    [](const ChipDescription &description) {
                                      return description.chip;
                                    }),
                    ", ");
}
