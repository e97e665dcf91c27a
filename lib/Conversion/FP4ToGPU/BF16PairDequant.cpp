//===- BF16PairDequant.cpp - bf16x2 mma operands from 4-bit codes ---------===//
//
// The code and scale decoders are the numerics templates of
// fp4/Numerics/BF16Pair.h emitted through ArithOps (checked exhaustively
// against the scalar rules by unittests/Numerics/BF16PairTest.cpp); this
// file adds the instructions that are not numerics: byte permutes, bf16x2
// multiplies and mma.sync.
//
//===----------------------------------------------------------------------===//

#include "BF16PairDequant.h"

#include "fp4/Numerics/BF16Pair.h"
#include "fp4/Numerics/IR/ArithOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <array>

using namespace mlir;
using namespace mlir::fp4;

static Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

Value mlir::fp4::buildE2M1PairBits(OpBuilder &b, Location loc, Value word,
                                   int64_t pair) {
  assert(pair >= 0 && pair < 4 && "pair index out of range");
  return numerics::e2m1PairBits(ArithOps(b, loc), word, pair);
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
  return i32Const(b, loc, numerics::bf16x2SplatBits(value));
}

Value mlir::fp4::buildSplatBF16Bits(OpBuilder &b, Location loc, Value bits) {
  return numerics::splatBF16Bits(ArithOps(b, loc), bits);
}

Value mlir::fp4::buildE8M0FactorTimes2Pow126(OpBuilder &b, Location loc,
                                             Value byte) {
  return numerics::e8m0FactorTimes2Pow126Pair(ArithOps(b, loc), byte);
}

Value mlir::fp4::buildE8M0Factor(OpBuilder &b, Location loc, Value byte) {
  return numerics::e8m0FactorPair(ArithOps(b, loc), byte);
}

Value mlir::fp4::buildE4M3FactorTimes2Pow118(OpBuilder &b, Location loc,
                                             Value byte) {
  return numerics::e4m3FactorTimes2Pow118Pair(ArithOps(b, loc), byte);
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

SmallVector<Value, 4> mlir::fp4::buildMmaSpBF16(OpBuilder &b, Location loc,
                                                ValueRange a, ValueRange bFrag,
                                                ValueRange c, Value meta) {
  assert(a.size() == 4 && bFrag.size() == 4 && c.size() == 4 &&
         "m16n8k32 sparse bf16 fragments are 4, 4 and 4 registers");
  Type f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value selector = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  auto mma = NVVM::MmaSpOp::create(
      b, loc, resultType, a, bFrag, c, meta, selector, /*shape=*/{16, 8, 32},
      /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                    NVVM::MMATypes::bf16});
  // Ordered metadata (sm_90's form; PTX 8.5): positions within a group in
  // ascending order, which the producer guarantees.
  mma.setOrderedMetadata(true);
  SmallVector<Value, 4> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getResult(), i));
  return d;
}
