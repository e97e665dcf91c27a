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
  auto scheme = dyn_cast<SchemeGPULoweringAttrInterface>(type.getScheme());
  std::optional<BF16FragmentForm> form;
  if (scheme)
    form = scheme.getBF16FragmentForm(type, reason);
  else
    reason = "scheme '" +
             cast<QuantSchemeAttrInterface>(type.getScheme())
                 .getFormatName()
                 .str() +
             "' has no GPU lowering model";
  if (!form)
    return std::nullopt;
  return BF16FragmentDequant(scheme, *form);
}

BF16FragmentForm mlir::fp4::getE8M0FragmentForm(int64_t blockSize,
                                                int64_t macroBlock) {
  BF16FragmentForm form;
  form.blockSize = blockSize;
  form.macroBlock = macroBlock;
  form.restoreFactor = 0x1p126f;
  form.hasFastForm = true;
  form.fastFormMaxByte = 128;
  form.unitScaleByte = 127;
  return form;
}

Value mlir::fp4::emitE8M0Multiplier(OpBuilder &b, Location loc, Value byte,
                                    bool fast) {
  // 2^(byte - 127) alone in general, as 2^(byte - 1) overflows bf16 for
  // scales above 2; the 2^126 is a separate multiply unless `fast`.
  return fast ? buildE8M0FactorTimes2Pow126(b, loc, byte)
              : buildE8M0Factor(b, loc, byte);
}

Value BF16FragmentDequant::emitMultiplier(OpBuilder &b, Location loc,
                                          Value byte, bool fast) const {
  return scheme.buildBF16ScaleMultiplier(b, loc, byte, fast);
}

Value BF16FragmentDequant::emitFastFormApplies(OpBuilder &b, Location loc,
                                               Value byte) const {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule, byte,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                   form.fastFormMaxByte));
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
  Value restore = (form.restoreFactor == 0.0f || fast)
                      ? Value()
                      : buildBF16x2Constant(b, loc, form.restoreFactor);
  for (Value &pair : pairs) {
    if (restore)
      pair = buildMulBF16x2(b, loc, pair, restore);
    pair = buildMulBF16x2(b, loc, pair, multiplier);
  }
  return pairs;
}
