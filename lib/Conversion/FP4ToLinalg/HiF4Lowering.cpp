//===- HiF4Lowering.cpp - #fp4.hif4 to linalg -----------------------------===//
//
// Rewrite (axis-last view [outer..., K], groups of 64 split as [G, 8, 2, 4]:
// eight level-2 blocks of two level-3 blocks of four elements):
//   m4 = max|x| per 4, m8 = max m4 per 8, m64 = max m8 per 64  (reductions)
//   byte = hif4ScaleByte(m64), rec = bf16(1 / e6m2(byte))       per group
//   l2 = hif4Level2Bit(m8, rec), l3 = hif4Level3Bit(m4, rec, l2)
//   metadata = byte | l2 << (8 + i) | l3 << (16 + j)            (i32, ours)
//   codes    = hif4ElementCode(x, rec, 2^(l2 + l3))             (pair-packed)
//   dequantize: hif4Dequant(code, 2^(l2 + l3), e6m2(byte)), the level bits
//   read back from the metadata word.
// All element arithmetic is HiF4.h's rules through ArithOps.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Conversion/FP4ToLinalg/BlockedTensorBuilder.h"
#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Numerics/HiF4.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

constexpr int64_t kGroup = numerics::kHiF4GroupSize;
constexpr int64_t kLevel2 = kGroup / numerics::kHiF4Level2Size;      // 8
constexpr int64_t kLevel3 = numerics::kHiF4Level2Size /
                            numerics::kHiF4Level3Size;               // 2
constexpr int64_t kLevel3Size = numerics::kHiF4Level3Size;          // 4
using utils::IteratorType;

/// linalg.index of loop `dim` as an i32.
Value loopIndexI32(OpBuilder &b, Location loc, int64_t dim) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                    linalg::IndexOp::create(b, loc, dim));
}

struct HiF4LoweringModel
    : public SchemeLoweringAttrInterface::ExternalModel<HiF4LoweringModel,
                                                        HiF4Attr> {
  FailureOr<SmallVector<Value>> buildQuantize(Attribute, OpBuilder &b,
                                              Location loc, Value input,
                                              QuantizedTensorType type) const {
    int64_t numGroups = type.getAxisSize() / kGroup;
    Type i32 = b.getI32Type(), f32 = b.getF32Type();
    BlockedTensorBuilder bt(b, loc, type);
    int64_t numOuter = bt.getNumOuter();
    Value x = bt.toAxisLast(input);
    Value m4 = bt.reduceAbsMax(bt.splitLast(x, {kLevel2, kLevel3, kLevel3Size}),
                               1);
    Value m8 = bt.reduceAbsMax(m4, 1);
    Value m64 = bt.reduceAbsMax(m8, 1);
    Value byte = bt.map(
        m64, {m64}, {bt.identityMap(1)}, i32,
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          return {numerics::hif4ScaleByte(ops, args[0])};
        });
    Value rec = bt.map(
        byte, {byte}, {bt.identityMap(1)}, f32,
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          return {numerics::hif4Reciprocal(
              ops, numerics::e6m2Decode(ops, args[0]))};
        });
    Value l2 = bt.map(
        m8, {m8, rec}, {bt.identityMap(2), bt.outerMap(2, {0})}, i32,
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          return {numerics::hif4Level2Bit(ops, args[0], args[1])};
        });
    Value l3 = bt.map(
        m4, {m4, rec, l2},
        {bt.identityMap(3), bt.outerMap(3, {0}), bt.outerMap(3, {0, 1})}, i32,
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          return {numerics::hif4Level3Bit(ops, args[0], args[1], args[2])};
        });

    // Metadata word: loops [O, G, i, h]; OR in the byte and the level bits
    // of 8-block i (bit 8 + i) and 4-block 2i + h (bit 16 + 2i + h).
    Value zero = bt.filledOuter(x, {numGroups}, b.getI32IntegerAttr(0));
    Value meta = bt.generic(
        {byte, l2, l3},
        {bt.outerMap(3, {0}), bt.outerMap(3, {0, 1}), bt.identityMap(3)}, zero,
        bt.outerMap(3, {0}),
        {IteratorType::parallel, IteratorType::reduction,
         IteratorType::reduction},
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          Value i = loopIndexI32(nb, l, numOuter + 1);
          Value h = loopIndexI32(nb, l, numOuter + 2);
          Value l2Bit = ops.shli(args[1], ops.addi(i, ops.i32(8)));
          Value j = ops.addi(ops.muli(i, ops.i32(kLevel3)), h);
          Value l3Bit = ops.shli(args[2], ops.addi(j, ops.i32(16)));
          return {ops.ori(ops.ori(args[3], args[0]), ops.ori(l2Bit, l3Bit))};
        })[0];

    // Codes: loops [O, G, i, h, q, p], element 8i + 4h + 2q + p of the group.
    Value codes = bt.packCodes(
        x, {numGroups, kLevel2, kLevel3, kLevel3Size / 2},
        {bt.splitLast(x, {kLevel2, kLevel3, kLevel3Size / 2, 2}), rec, l2, l3},
        {bt.identityMap(5), bt.outerMap(5, {0}), bt.outerMap(5, {0, 1}),
         bt.outerMap(5, {0, 1, 2})},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          ArithOps ops(nb, l);
          Value levelScale = numerics::hif4LevelScale(ops, args[2], args[3]);
          return numerics::hif4ElementCode(ops, args[0], args[1], levelScale);
        });
    codes = bt.mergeTrailing(codes, 4);
    return SmallVector<Value>{bt.fromAxisLast(codes), bt.fromAxisLast(meta)};
  }

  FailureOr<Value> buildDequantize(Attribute, OpBuilder &b, Location loc,
                                   ValueRange components,
                                   QuantizedTensorType type) const {
    int64_t numGroups = type.getAxisSize() / kGroup;
    BlockedTensorBuilder bt(b, loc, type);
    int64_t numOuter = bt.getNumOuter();
    Value codes = bt.splitLast(bt.toAxisLast(components[0]),
                               {kLevel2, kLevel3, kLevel3Size / 2});
    Value meta = bt.toAxisLast(components[1]);
    Value values = bt.unpackCodes(
        codes, {numGroups, kLevel2, kLevel3, kLevel3Size / 2}, {meta},
        {bt.outerMap(5, {0})},
        [&](OpBuilder &nb, Location l, Value code, ValueRange args) {
          ArithOps ops(nb, l);
          Value word = args[0];
          Value i = loopIndexI32(nb, l, numOuter + 1);
          Value h = loopIndexI32(nb, l, numOuter + 2);
          Value j = ops.addi(ops.muli(i, ops.i32(kLevel3)), h);
          Value l2 = ops.andi(ops.shrui(word, ops.addi(i, ops.i32(8))),
                              ops.i32(1));
          Value l3 = ops.andi(ops.shrui(word, ops.addi(j, ops.i32(16))),
                              ops.i32(1));
          Value sf = numerics::e6m2Decode(ops, word);
          return numerics::hif4Dequant(
              ops, code, numerics::hif4LevelScale(ops, l2, l3), sf);
        });
    return bt.fromAxisLast(bt.mergeTrailing(values, 5));
  }
};

} // namespace

void mlir::fp4::registerHiF4LoweringModel(MLIRContext *context) {
  HiF4Attr::attachInterface<HiF4LoweringModel>(*context);
}
