//===- MXFP4MacroLowering.cpp - #fp4.mxfp4_macro to linalg ----------------===//
//
// Rewrite (axis-last view [outer..., K], macro blocks of Bm = nb * 32):
//   default:  m[o, M] = macroFactorFromAmax(max |x| over the macro block)
//   search=N: for every candidate m_j = bf16(1 + j/N) (a constant table),
//             the candidate's block bytes and codes of y = x / m_j and the
//             f64 sum of squared errors over the macro block in element
//             order (loops [O, M, j, block, i], reductions over block, i);
//             then m = m_j of the first strictly lowest sum (a reduction over
//             j that always takes j = 0, exactly the reference's loop)
//   y        = macroScaledInput(x, m)
//   scales   = mxScaleByte(max |y| per 32, rule)                  (E8M0, i8)
//   codes    = mxfp4ElementCode(y, e8m0QuantizeFactor(scale))     (packed)
//   factors  = m as bf16
//   dequantize: macroDequant(code, scale, m).
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Conversion/FP4ToLinalg/BlockedTensorBuilder.h"
#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Numerics/MacroBlock.h"
#include "fp4/Numerics/ScalarOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

constexpr int64_t kBlock = 32;
using utils::IteratorType;

Value extByte(OpBuilder &b, Location loc, Value i8) {
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), i8);
}

struct MacroShape {
  int64_t macro;     // Bm
  int64_t numMacro;  // K / Bm
  int64_t numBlocks; // Bm / 32
};

MacroShape getMacroShape(MXFP4MacroAttr scheme, QuantizedTensorType type) {
  int64_t k = type.getAxisSize();
  int64_t macro = scheme.getMacroBlock() == 0 ? k : scheme.getMacroBlock();
  return {macro, k / macro, macro / kBlock};
}

struct MXFP4MacroLoweringModel
    : public SchemeLoweringAttrInterface::ExternalModel<
          MXFP4MacroLoweringModel, MXFP4MacroAttr> {
  FailureOr<SmallVector<Value>> buildQuantize(Attribute attr, OpBuilder &b,
                                              Location loc, Value input,
                                              QuantizedTensorType type) const {
    auto scheme = cast<MXFP4MacroAttr>(attr);
    MacroShape shape = getMacroShape(scheme, type);
    int64_t macro = shape.macro, numMacro = shape.numMacro,
            numBlocks = shape.numBlocks;
    numerics::ScaleRounding rule = toNumerics(scheme.getScaleRounding());
    numerics::ElementRounding mode = toNumerics(scheme.getRounding());
    bool stochastic = mode == numerics::ElementRounding::Stochastic;
    uint32_t seed = scheme.getSeed();
    int64_t search = scheme.getSearch();
    Type f32 = b.getF32Type(), i8 = b.getI8Type();

    BlockedTensorBuilder bt(b, loc, type);
    int64_t numOuter = bt.getNumOuter();
    if (stochastic)
      bt.setLogicalShapeFrom(input);
    Value x = bt.toAxisLast(input);
    Value xs = bt.splitLast(x, {numBlocks, kBlock}); // [O, M, nb, 32]

    Value m;
    if (search == 0) {
      Value amax = bt.reduceAbsMax(xs, 2);
      m = bt.map(amax, {amax}, {bt.identityMap(1)}, f32,
                 [&](OpBuilder &nb, Location l,
                     ValueRange args) -> SmallVector<Value> {
                   ArithOps ops(nb, l);
                   return {numerics::macroFactorFromAmax(ops, args[0])};
                 });
    } else {
      // The candidates are compile-time constants: the same rule, run by
      // the C++ backend.
      SmallVector<float> candidates;
      numerics::ScalarOps scalar;
      for (int64_t j = 0; j < search; ++j)
        candidates.push_back(numerics::macroSearchFactor(
            scalar, static_cast<int32_t>(j), static_cast<int32_t>(search)));
      auto tableType = RankedTensorType::get({search}, f32);
      Value table = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(tableType, ArrayRef(candidates)));
      // Loops [O, M, j, block, i].
      AffineMap xMap = bt.outerMap(4, {0, 2, 3});
      AffineMap candidateMap = AffineMap::get(
          numOuter + 4, 0, b.getAffineDimExpr(numOuter + 1), b.getContext());
      AffineMap perCandidateBlock = bt.outerMap(4, {0, 1, 2});
      Value zeroF32 =
          bt.filledOuter(x, {numMacro, search, numBlocks}, b.getF32FloatAttr(0));
      Value amax = bt.generic(
          {xs, table}, {xMap, candidateMap}, zeroF32, perCandidateBlock,
          {IteratorType::parallel, IteratorType::parallel,
           IteratorType::parallel, IteratorType::reduction},
          [&](OpBuilder &nb, Location l,
              ValueRange args) -> SmallVector<Value> {
            ArithOps ops(nb, l);
            Value y = numerics::macroScaledInput(ops, args[0], args[1]);
            Value next = numerics::maxAbsBits(ops, ops.bitcastToI32(args[2]),
                                              numerics::absBits(ops, y));
            return {ops.bitcastToF32(next)};
          })[0];
      Value bytes = bt.map(
          amax, {amax}, {bt.identityMap(3)}, i8,
          [&](OpBuilder &nb, Location l,
              ValueRange args) -> SmallVector<Value> {
            ArithOps ops(nb, l);
            return {arith::TruncIOp::create(
                nb, l, i8, numerics::mxScaleByte(ops, args[0], rule))};
          });
      Value zeroF64 =
          bt.filledOuter(x, {numMacro, search}, b.getF64FloatAttr(0));
      Value sse = bt.generic(
          {xs, table, bytes}, {xMap, candidateMap, perCandidateBlock}, zeroF64,
          bt.outerMap(4, {0, 1}),
          {IteratorType::parallel, IteratorType::parallel,
           IteratorType::reduction, IteratorType::reduction},
          [&](OpBuilder &nb, Location l,
              ValueRange args) -> SmallVector<Value> {
            ArithOps ops(nb, l);
            Value mj = args[1];
            Value byte = extByte(nb, l, args[2]);
            Value y = numerics::macroScaledInput(ops, args[0], mj);
            Value bits =
                stochastic ? bt.elementRandomBits(
                                 nb, l, seed, {{0, macro}, {2, kBlock}, {3, 1}})
                           : ops.i32(0);
            Value code = numerics::mxfp4ElementCode(
                ops, y, numerics::e8m0QuantizeFactor(ops, byte), mode, bits);
            Value deq = numerics::macroDequant(ops, code, byte, mj);
            return {ops.addd(args[3],
                             numerics::squaredErrorF64(ops, args[0], deq))};
          })[0];
      // First strictly lowest error: j = 0 always taken, then only a
      // strictly lower sum replaces it (NaN sums never do).
      Value zeroIdx = bt.filledOuter(x, {numMacro}, b.getI32IntegerAttr(0));
      Value zeroErr = bt.filledOuter(x, {numMacro}, b.getF64FloatAttr(0));
      Value best = bt.generic(
          {sse}, {bt.identityMap(2)}, {zeroIdx, zeroErr},
          {bt.outerMap(2, {0}), bt.outerMap(2, {0})},
          {IteratorType::parallel, IteratorType::reduction},
          [&](OpBuilder &nb, Location l,
              ValueRange args) -> SmallVector<Value> {
            ArithOps ops(nb, l);
            Value j = arith::IndexCastOp::create(
                nb, l, nb.getI32Type(),
                linalg::IndexOp::create(nb, l, numOuter + 1));
            Value take =
                ops.orb(ops.cmpi(numerics::IPred::EQ, j, ops.i32(0)),
                        ops.cmpd(numerics::FPred::OLT, args[0], args[2]));
            return {ops.selecti(take, j, args[1]),
                    ops.selectd(take, args[0], args[2])};
          })[0];
      m = bt.map(best, {best}, {bt.identityMap(1)}, f32,
                 [&](OpBuilder &nb, Location l,
                     ValueRange args) -> SmallVector<Value> {
                   Value idx = arith::IndexCastOp::create(
                       nb, l, nb.getIndexType(), args[0]);
                   return {tensor::ExtractOp::create(nb, l, table, idx)};
                 });
    }

    // y = x / m, then plain MX blocks of 32 on y.
    Value y = bt.map(xs, {xs, m}, {bt.identityMap(3), bt.outerMap(3, {0})}, f32,
                     [&](OpBuilder &nb, Location l,
                         ValueRange args) -> SmallVector<Value> {
                       ArithOps ops(nb, l);
                       return {numerics::macroScaledInput(ops, args[0],
                                                          args[1])};
                     });
    Value amaxY = bt.reduceAbsMax(y, 1); // [O, M, nb]
    Value scales = bt.map(
        amaxY, {amaxY}, {bt.identityMap(2)}, i8,
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          return {arith::TruncIOp::create(
              nb, l, i8, numerics::mxScaleByte(ops, args[0], rule))};
        });
    Value codes = bt.packCodes(
        x, {numMacro, numBlocks, kBlock / 2},
        {bt.splitLast(bt.mergeTrailing(y, 3), {numBlocks, kBlock / 2, 2}),
         scales},
        {bt.identityMap(4), bt.outerMap(4, {0, 1})},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          ArithOps ops(nb, l);
          Value bits =
              stochastic
                  ? bt.elementRandomBits(
                        nb, l, seed, {{0, macro}, {1, kBlock}, {2, 2}, {3, 1}})
                  : ops.i32(0);
          Value factor =
              numerics::e8m0QuantizeFactor(ops, extByte(nb, l, args[1]));
          return numerics::mxfp4ElementCode(ops, args[0], factor, mode, bits);
        });
    Value factors = bt.map(
        m, {m}, {bt.identityMap(1)}, b.getBF16Type(),
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          Value bits16 = arith::TruncIOp::create(
              nb, l, nb.getI16Type(), numerics::bf16StorageBits(ops, args[0]));
          return {arith::BitcastOp::create(nb, l, nb.getBF16Type(), bits16)};
        });
    return SmallVector<Value>{bt.fromAxisLast(bt.mergeTrailing(codes, 3)),
                              bt.fromAxisLast(bt.mergeTrailing(scales, 2)),
                              bt.fromAxisLast(factors)};
  }

  FailureOr<Value> buildDequantize(Attribute attr, OpBuilder &b, Location loc,
                                   ValueRange components,
                                   QuantizedTensorType type) const {
    auto scheme = cast<MXFP4MacroAttr>(attr);
    MacroShape shape = getMacroShape(scheme, type);
    int64_t numMacro = shape.numMacro, numBlocks = shape.numBlocks;
    BlockedTensorBuilder bt(b, loc, type);
    Value codes = bt.splitLast(bt.toAxisLast(components[0]),
                               {numBlocks, kBlock / 2});
    Value scales = bt.splitLast(bt.toAxisLast(components[1]), {numBlocks});
    Value factors = bt.toAxisLast(components[2]);
    Value values = bt.unpackCodes(
        codes, {numMacro, numBlocks, kBlock / 2}, {scales, factors},
        {bt.outerMap(4, {0, 1}), bt.outerMap(4, {0})},
        [&](OpBuilder &nb, Location l, Value code, ValueRange args) {
          ArithOps ops(nb, l);
          Value bits16 =
              arith::BitcastOp::create(nb, l, nb.getI16Type(), args[1]);
          Value m = numerics::bf16Decode(
              ops, arith::ExtUIOp::create(nb, l, nb.getI32Type(), bits16));
          return numerics::macroDequant(ops, code, extByte(nb, l, args[0]), m);
        });
    return bt.fromAxisLast(bt.mergeTrailing(values, 4));
  }
};

} // namespace

void mlir::fp4::registerMXFP4MacroLoweringModel(MLIRContext *context) {
  MXFP4MacroAttr::attachInterface<MXFP4MacroLoweringModel>(*context);
}
