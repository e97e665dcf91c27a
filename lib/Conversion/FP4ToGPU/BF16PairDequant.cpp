//===- BF16PairDequant.cpp - bf16x2 mma operands from 4-bit codes ---------===//
//
// The exact bit manipulations are explained in BF16PairDequant.h. The block
// scale decoders reuse the numerics rules (E8M0.h, E4M3.h) through ArithOps
// and take the top half of the f32 result: both factors are exact in bf16,
// so this truncation is exact too.
//
//===----------------------------------------------------------------------===//

#include "BF16PairDequant.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Numerics/E4M3.h"
#include "fp4/Numerics/E8M0.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <array>
#include <cstring>

using namespace mlir;
using namespace mlir::fp4;

static Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

Value mlir::fp4::buildE2M1PairBits(OpBuilder &b, Location loc, Value word,
                                   int64_t pair) {
  assert(pair >= 0 && pair < 4 && "pair index out of range");
  auto shift = [&](int64_t amount) -> Value {
    if (amount > 0)
      return arith::ShLIOp::create(b, loc, word, i32Const(b, loc, amount));
    if (amount < 0)
      return arith::ShRUIOp::create(b, loc, word, i32Const(b, loc, -amount));
    return word;
  };
  Value magnitude = arith::AndIOp::create(b, loc, shift(6 - 4 * pair),
                                          i32Const(b, loc, 0x01C001C0));
  Value sign = arith::AndIOp::create(b, loc, shift(12 - 4 * pair),
                                     i32Const(b, loc, 0x80008000));
  return arith::OrIOp::create(b, loc, magnitude, sign);
}

uint32_t mlir::fp4::bf16PairSelector(int64_t pair) {
  // Element `pair` is half (pair % 2) of word pair / 2 (pool bytes 0..3),
  // element `pair` + 4 the same half of word pair / 2 + 2 (bytes 4..7).
  return pair % 2 == 0 ? 0x5410u : 0x7632u;
}

Value mlir::fp4::buildBF16PairFromWords(OpBuilder &b, Location loc,
                                        ValueRange words, int64_t pair) {
  assert(words.size() == 4 && pair >= 0 && pair < 4 && "bad bf16 pair");
  return buildPermuteBytes(b, loc, words[pair / 2], words[pair / 2 + 2],
                           bf16PairSelector(pair));
}

Value mlir::fp4::buildPermuteBytes(OpBuilder &b, Location loc, Value lo,
                                   Value hi, uint32_t selector) {
  return NVVM::PermuteOp::create(b, loc, b.getI32Type(), lo, hi,
                                 i32Const(b, loc, selector),
                                 NVVM::PermuteMode::DEFAULT);
}

Value mlir::fp4::buildMulBF16x2(OpBuilder &b, Location loc, Value x, Value y) {
  auto pairType = VectorType::get({2}, b.getBF16Type());
  Value xv = LLVM::BitcastOp::create(b, loc, pairType, x);
  Value yv = LLVM::BitcastOp::create(b, loc, pairType, y);
  Value product = arith::MulFOp::create(b, loc, xv, yv);
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), product);
}

Value mlir::fp4::buildBF16x2Constant(OpBuilder &b, Location loc, float value) {
  uint32_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  assert((bits & 0xFFFFu) == 0 && "constant not exact in bf16");
  uint32_t half = bits >> 16;
  return i32Const(b, loc, static_cast<int32_t>(half | (half << 16)));
}

Value mlir::fp4::buildSplatBF16Bits(OpBuilder &b, Location loc, Value bits) {
  return arith::MulIOp::create(b, loc, bits, i32Const(b, loc, 0x00010001));
}

Value mlir::fp4::buildE8M0FactorTimes2Pow126(OpBuilder &b, Location loc,
                                             Value byte) {
  // bf16 exponent field byte + 126 (2^(byte - 1)), mantissa 0, in both
  // halves: (byte + 126) * 0x00800080.
  Value scaled =
      arith::MulIOp::create(b, loc, byte, i32Const(b, loc, 0x00800080));
  return arith::AddIOp::create(b, loc, scaled,
                               i32Const(b, loc, 126 * 0x00800080));
}

/// The upper half of an f32 that is exact in bf16, in both halves.
static Value splatUpperHalf(OpBuilder &b, Location loc, Value f32Value) {
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), f32Value);
  Value half = arith::ShRUIOp::create(b, loc, bits, i32Const(b, loc, 16));
  return buildSplatBF16Bits(b, loc, half);
}

Value mlir::fp4::buildE8M0Factor(OpBuilder &b, Location loc, Value byte) {
  ArithOps ops(b, loc);
  return splatUpperHalf(b, loc, numerics::e8m0Decode(ops, byte));
}

Value mlir::fp4::buildE4M3FactorTimes2Pow118(OpBuilder &b, Location loc,
                                             Value byte) {
  ArithOps ops(b, loc);
  Value scale = numerics::e4m3Decode(ops, byte);
  return splatUpperHalf(b, loc, ops.mulf(scale, ops.f32(0x1p118f)));
}

SmallVector<Value, 4> mlir::fp4::buildMmaBF16(OpBuilder &b, Location loc,
                                              ValueRange a, ValueRange bFrag,
                                              ValueRange c) {
  assert(a.size() == 4 && bFrag.size() == 2 && c.size() == 4 &&
         "m16n8k16 bf16 fragments are 4, 2 and 4 registers");
  Type f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto mma = NVVM::MmaOp::create(
      b, loc, resultType, a, bFrag, c, /*shape=*/{16, 8, 16},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value, 4> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getResult(), i));
  return d;
}
