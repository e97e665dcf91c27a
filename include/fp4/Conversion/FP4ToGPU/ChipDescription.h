//===- ChipDescription.h - what each supported GPU can do -------*- C++ -*-===//
//
// One table of the chips the GPU lowering knows (ChipDescription.cpp): the
// instructions each has natively (FP4/FP8 block-scaled MMA, wgmma, TMA,
// tcgen05, mma.sp), its per-block limits and the PTX ISA its NVVM target
// needs. convert-fp4-to-gpu checks options and kernel configurations
// against it, the config selection reads its defaults from it and
// fp4-pipeline-nvvm takes the NVVM target (chip, PTX features) from it, so
// the three cannot disagree. A new chip, or the Blackwell-native kernels,
// start here.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_CONVERSION_FP4TOGPU_CHIPDESCRIPTION_H
#define FP4_CONVERSION_FP4TOGPU_CHIPDESCRIPTION_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

#include <cstdint>
#include <optional>

namespace mlir::fp4 {

/// The chips of the table, the values of the `chip` options.
enum class GPUChip { SM80, SM86, SM89, SM90, SM90a, SM100a, SM120a };

/// What one chip can do. Limits are per thread block (CTA).
struct ChipDescription {
  GPUChip kind;
  /// The NVVM target chip ("sm_90").
  StringRef chip;
  /// Compute capability * 10 (80, 90, 100, 120).
  int64_t smVersion;
  /// PTX ISA feature string for nvvm-attach-target: LLVM 22's minimum for
  /// the chip (toolchain.md; the upstream default +ptx60 is rejected), 8.5
  /// on Hopper for mma.sp::ordered_metadata.
  StringRef ptxFeatures;
  /// The PTX ISA version of ptxFeatures times 10 (85 for "+ptx85").
  int64_t ptxVersion() const;
  /// Block-scaled FP4 MMA and FP4 conversion instructions (Blackwell).
  /// Without them FP4 is emulated on bf16 tensor cores.
  bool hasNativeFP4;
  /// FP8 (E4M3/E5M2) tensor-core MMA (Ada and newer).
  bool hasNativeFP8MMA;
  /// Warp-group MMA (wgmma.mma_async): sm_90a only.
  bool hasWGMMA;
  /// Tensor-memory MMA (tcgen05): sm_100a.
  bool hasTcgen05;
  /// Tensor memory accelerator (cp.async.bulk.tensor).
  bool hasTMA;
  /// 2:4 sparse tensor-core MMA (mma.sp).
  bool hasSparseMMA;
  /// Threads of a warp group (wgmma's unit); 0 where there is none.
  int64_t warpGroupThreads;
  /// Largest shared memory of one block, dynamic included, in bytes.
  int64_t maxSharedBytesPerBlock;
  /// How many CTAs of `bytesPerBlock` shared memory (static + dynamic) one
  /// SM holds at once, as far as shared memory goes.
  int64_t ctasPerSMByShared(int64_t bytesPerBlock) const;
  /// 32-bit registers of one SM and of one thread.
  int64_t registersPerSM;
  int64_t maxRegistersPerThread;
  int64_t maxThreadsPerBlock;
  int64_t warpSize;
  /// Whether the kernels of this compiler use the native FP4 instructions
  /// on this chip (none yet: the Blackwell-native path plugs in here).
  bool nativeFP4Implemented;
  /// The selection's default boundary between the decode and the prefill
  /// matmul families (largest M of decode), measured on the H200.
  int64_t decodeMaxM;
  /// Largest M of the prefill family's medium class: K steps of 128, and
  /// up to 64 rows tiles of roundUp(M, 16) rows (selectPrefillConfig),
  /// which the 128x128x64 tiles lose to below it
  /// (docs/perf/medium_m_2026-12-04.txt, prefill_k128_2026-12-04.txt).
  int64_t mediumMaxM;
  /// Smallest M at which a correction chain that the decode kernels would
  /// run as stacked rows or a separate outlier epilogue runs on the prefill
  /// kernel's medium class instead (its 2:4 residual on mma.sp, its weight
  /// outliers in the weight tile); 0: never (chips without mma.sp's
  /// ordered metadata). Measured on the H200.
  int64_t correctionPrefillMinM;
  /// One line for option help.
  StringRef summary;
};

/// Every chip of the table, in GPUChip order.
ArrayRef<ChipDescription> getChipDescriptions();
const ChipDescription &getChipDescription(GPUChip chip);
/// The description of `chip` ("sm_90"), or nullptr.
const ChipDescription *lookupChipDescription(StringRef chip);
/// Prints the chip's name ("sm_90"), e.g. in a printed pass pipeline.
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, GPUChip chip) {
  return os << getChipDescription(chip).chip;
}
/// "sm_80, sm_86, ..." for diagnostics.
std::string getSupportedChipList();

} // namespace mlir::fp4

#endif // FP4_CONVERSION_FP4TOGPU_CHIPDESCRIPTION_H
