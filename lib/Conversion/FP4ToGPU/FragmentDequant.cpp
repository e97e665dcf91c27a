//===- FragmentDequant.cpp - E2M1 codes to mma B fragments ----------------===//
//
// buildE2M1PairBits gives the bf16x2 (element l, element l + 4) of a code
// word, valued e2m1 * 2^-126; two of them hold elements l, l + 1, l + 4,
// l + 5, and a prmt picks (l, l + 1) or (l + 4, l + 5). The multiplier then
// restores the 2^126 and applies the block scale; bf16x2 multiplies of these
// exact values are exact.
//
//===----------------------------------------------------------------------===//

#include "FragmentDequant.h"

#include "BF16PairDequant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fp4;

std::optional<BF16FragmentDequant>
BF16FragmentDequant::get(QuantizedTensorType type, std::string &reason) {
  Attribute scheme = type.getScheme();
  if (auto mx = dyn_cast<MXFP4Attr>(scheme)) {
    // A lane's 16-element run of a K group must not straddle two blocks.
    if (mx.getBlockSize() % 16 != 0) {
      reason = "MXFP4 block size " + std::to_string(mx.getBlockSize()) +
               " is not a multiple of 16";
      return std::nullopt;
    }
    return BF16FragmentDequant(/*nvfp4=*/false, mx.getBlockSize());
  }
  if (isa<NVFP4Attr>(scheme))
    return BF16FragmentDequant(/*nvfp4=*/true, 16);
  if (auto macro = dyn_cast<MXFP4MacroAttr>(scheme))
    return BF16FragmentDequant(/*nvfp4=*/false, 32, macro.getMacroBlock());
  reason = "scheme '" +
           cast<QuantSchemeAttrInterface>(scheme).getFormatName().str() +
           "' has no bf16 fragment dequantizer";
  return std::nullopt;
}

Value BF16FragmentDequant::emitMultiplier(OpBuilder &b, Location loc,
                                          Value byte, bool fast) const {
  // NVFP4: e4m3 * 2^(126 - kNVFP4Offset). MXFP4: 2^(byte - 127) alone, as
  // 2^(byte - 1) overflows bf16 for scales above 2; the 2^126 is a
  // separate multiply in emitDequantWord unless `fast`.
  static_assert(kNVFP4Offset == 8, "buildE4M3FactorTimes2Pow118");
  if (nvfp4)
    return buildE4M3FactorTimes2Pow118(b, loc, byte);
  return fast ? buildE8M0FactorTimes2Pow126(b, loc, byte)
              : buildE8M0Factor(b, loc, byte);
}

Value BF16FragmentDequant::emitFastFormApplies(OpBuilder &b, Location loc,
                                               Value byte) const {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule, byte,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 128));
}

std::array<Value, 4>
BF16FragmentDequant::emitDequantWord(OpBuilder &b, Location loc, Value word,
                                     Value multiplier, bool fast) const {
  Value p0 = buildE2M1PairBits(b, loc, word, 0); // (n0, n4)
  Value p1 = buildE2M1PairBits(b, loc, word, 1); // (n1, n5)
  Value p2 = buildE2M1PairBits(b, loc, word, 2); // (n2, n6)
  Value p3 = buildE2M1PairBits(b, loc, word, 3); // (n3, n7)
  // Pool {hi, lo}: selector 0x5410 = (lo.low, hi.low), 0x7632 = (lo.high,
  // hi.high).
  std::array<Value, 4> pairs = {
      buildPermuteBytes(b, loc, p0, p1, 0x5410), // (n0, n1)
      buildPermuteBytes(b, loc, p2, p3, 0x5410), // (n2, n3)
      buildPermuteBytes(b, loc, p0, p1, 0x7632), // (n4, n5)
      buildPermuteBytes(b, loc, p2, p3, 0x7632), // (n6, n7)
  };
  Value restore = (nvfp4 || fast) ? Value()
                                  : buildBF16x2Constant(b, loc, 0x1p126f);
  for (Value &pair : pairs) {
    if (restore)
      pair = buildMulBF16x2(b, loc, pair, restore);
    pair = buildMulBF16x2(b, loc, pair, multiplier);
  }
  return pairs;
}
