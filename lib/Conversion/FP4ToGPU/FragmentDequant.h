//===- FragmentDequant.h - E2M1 codes to bf16 pairs in registers -*- C++ -*-===//
//
// The prefill kernel feeds mma.sync bf16 B fragments straight from packed
// codes: eight E2M1 codes in one i32 become the four bf16x2 registers of
// two k16 steps, in the (element 2j, element 2j+1) pairing that bf16
// activations loaded from shared memory have, so the activations need no
// shuffles. Built on the primitives of BF16PairDequant.h, whose pairs are
// (element p, element p + 4); one byte permute per pair regroups them.
//
// Every product here is exact (E2M1 has 2 significant bits, E4M3 4, bf16
// 8), so the bf16 values are the reference's dequantized values, up to a
// power of two (exponentOffset) that the kernel applies to the f32
// accumulator once at the end.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_FRAGMENTDEQUANT_H
#define LIB_CONVERSION_FP4TOGPU_FRAGMENTDEQUANT_H

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::fp4 {

/// How the codes of one quantized operand become bf16, as its scheme's GPU
/// model describes it (SchemeGPULoweringAttrInterface::getBF16FragmentForm:
/// MXFP4, NVFP4, and the MXFP4 part of macro-scaled MXFP4, whose bf16 macro
/// factors are not exact in a bf16 product; the kernel applies them to f32
/// partial sums).
class BF16FragmentDequant {
public:
  /// The dequantizer of `type`'s scheme, or nullopt with `reason` set when
  /// the scheme has no exact bf16 form here (HiF4) or its blocks are not a
  /// multiple of 16 elements.
  static std::optional<BF16FragmentDequant> get(QuantizedTensorType type,
                                                std::string &reason);

  const BF16FragmentForm &getForm() const { return form; }
  int64_t getBlockSize() const { return form.blockSize; }
  bool hasTensorScale() const { return form.hasTensorScale; }
  /// Macro-scaled MXFP4: one f32-applied factor per macro block (the
  /// factors component), spanning getMacroSpan(k) elements of an axis of k.
  bool hasMacroFactors() const { return form.macroBlock >= 0; }
  int64_t getMacroSpan(int64_t k) const {
    return form.macroBlock == 0 ? k : form.macroBlock;
  }

  /// bf16x2 multiplier bits (i32, both halves equal) for the block scale
  /// byte `byte` (i32 holding 0..255). With `fast`, the multiplier of the
  /// one-multiply form (see hasFastForm), valid where fastFormApplies.
  Value emitMultiplier(OpBuilder &b, Location loc, Value byte,
                       bool fast = false) const;

  /// Dequantizes the 8 codes of `word` (i32, element 2i in the low nibble of
  /// byte i, docs/ABI.md) with `multiplier`: result[j] is an i32 holding the
  /// bf16 pair (element 2j, element 2j+1), the lower element in the low half
  /// (the mma.sync fragment convention), valued
  /// e2m1 * scale * 2^-exponentOffset(). `fast` selects the one-multiply
  /// form (the multiplier must come from emitMultiplier(fast = true)).
  std::array<Value, 4> emitDequantWord(OpBuilder &b, Location loc, Value word,
                                       Value multiplier,
                                       bool fast = false) const;

  /// Whether a one-multiply form exists for small scale bytes (MXFP4: the
  /// two multiplies 2^126 and 2^(byte - 127) become one 2^(byte - 1) for
  /// bytes up to 128, i.e. blocks with amax < 16: practically every weight).
  bool hasFastForm() const { return form.hasFastForm; }
  /// i1: whether `byte` may use the fast form.
  Value emitFastFormApplies(OpBuilder &b, Location loc, Value byte) const;

  /// The products carry a factor 2^-exponentOffset(): the accumulator must
  /// be multiplied by 2^exponentOffset() (and the tensor scale, if any).
  int64_t exponentOffset() const { return form.exponentOffset; }

private:
  BF16FragmentDequant(SchemeGPULoweringAttrInterface scheme,
                      BF16FragmentForm form)
      : scheme(scheme), form(form) {}

  SchemeGPULoweringAttrInterface scheme;
  BF16FragmentForm form;
};

/// The form of E8M0-scaled codes (MXFP4 blocks of `blockSize`, and the
/// MXFP4 part of macro scaling with `macroBlock`): 2^126 then 2^(byte - 127),
/// or one 2^(byte - 1) for bytes up to 128.
BF16FragmentForm getE8M0FragmentForm(int64_t blockSize,
                                     int64_t macroBlock = -1);

/// The multiplier of an E8M0 byte for that form (BF16PairDequant.h).
Value emitE8M0Multiplier(OpBuilder &b, Location loc, Value byte, bool fast);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_FRAGMENTDEQUANT_H
