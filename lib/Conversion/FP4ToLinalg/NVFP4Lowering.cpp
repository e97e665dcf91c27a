//===- NVFP4Lowering.cpp - #fp4.nvfp4 to linalg ---------------------------===//
//
// Rewrite, in TransformerEngine's order (numerics.md 3, NVFP4.h):
//   tensor_amax = max |x| over finite x      (linalg reduce to tensor<f32>)
//   g_enc, g_dec, k = g_enc / 6              (scalar arith)
//   amax[block]  = max |x| over a block of 16 (or a 16x16 tile, tile2d)
//   scale[block] = nvfp4BlockScaleByte(amax, k)          (E4M3 byte, i8)
//   four_over_six: also the map-to-4 byte; per block, both candidates' f64
//     sums of squared errors (a reduction whose loop order is the
//     reference's summation order), keep map-to-4 only if strictly lower
//   codes        = nvfp4ElementCode(x, enc(scale), scale)   (pair-packed i8)
//   dequantize:  x' = nvfp4Dequant(code, scale, g_dec)
// Components: codes, scales, tensor<f32> holding g_dec. With 16x16 tiles the
// tile's byte is repeated in its 16 lines (docs/ABI.md), so dequantization is
// the same with and without tiles.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Conversion/FP4ToLinalg/BlockedTensorBuilder.h"
#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Numerics/NVFP4.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

constexpr int64_t kBlock = numerics::kNVFP4BlockSize;
using utils::IteratorType;

/// max |x| over the finite elements of `input` (any rank), as an f32 scalar.
Value finiteAbsMax(OpBuilder &b, Location loc, Value input) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                       b.getF32Type());
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, {}, b.getContext())};
  SmallVector<IteratorType> iterators(rank, IteratorType::reduction);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        ArithOps ops(nb, l);
        Value acc = ops.bitcastToI32(args[1]);
        Value a = numerics::absBits(ops, args[0]);
        Value next = ops.selecti(numerics::isNonFiniteAbsBits(ops, a), acc,
                                 numerics::maxAbsBits(ops, acc, a));
        linalg::YieldOp::create(nb, l, ops.bitcastToF32(next));
      });
  return tensor::ExtractOp::create(b, loc, op.getResult(0), ValueRange{});
}

/// The per-tensor values and options every element rule needs.
struct NVFP4Codec {
  Value gDec;
  numerics::ElementRounding mode;

  Value code(ArithOps &ops, Value x, Value byte, Value bits) const {
    Value enc = numerics::nvfp4EncodeFactor(ops, byte, gDec);
    return numerics::nvfp4ElementCode(ops, x, enc, byte, mode, bits);
  }
  Value squaredError(ArithOps &ops, Value x, Value byte, Value bits) const {
    Value deq = numerics::nvfp4Dequant(ops, code(ops, x, byte, bits), byte,
                                       gDec);
    return numerics::squaredErrorF64(ops, x, deq);
  }
};

Value extByte(OpBuilder &b, Location loc, Value i8) {
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), i8);
}

struct NVFP4LoweringModel
    : public SchemeLoweringAttrInterface::ExternalModel<NVFP4LoweringModel,
                                                        NVFP4Attr> {
  FailureOr<SmallVector<Value>> buildQuantize(Attribute attr, OpBuilder &b,
                                              Location loc, Value input,
                                              QuantizedTensorType type) const {
    auto scheme = cast<NVFP4Attr>(attr);
    bool fourOverSix = scheme.getFourOverSix();
    bool stochastic = scheme.getRounding() == ElementRounding::Stochastic;
    uint32_t seed = scheme.getSeed();

    BlockedTensorBuilder bt(b, loc, type);
    if (stochastic)
      bt.setLogicalShapeFrom(input);

    ArithOps ops(b, loc);
    Value gEnc = numerics::nvfp4GlobalEncodeScale(
        ops, finiteAbsMax(b, loc, input), fourOverSix);
    Value gDec = numerics::nvfp4GlobalDecodeScale(ops, gEnc);
    Value k = numerics::nvfp4BlockScaleFactor(ops, gEnc);
    Value tensorScale = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getF32Type()), gDec);
    NVFP4Codec codec{gDec, toNumerics(scheme.getRounding())};

    Value x = bt.toAxisLast(input);
    auto blockScales = [&](Value amax, bool mapToFour) {
      return bt.map(amax, {amax}, {bt.identityMap(1)}, b.getI8Type(),
                    [&](OpBuilder &nb, Location l,
                        ValueRange args) -> SmallVector<Value> {
                      ArithOps o(nb, l);
                      Value byte = numerics::nvfp4BlockScaleByte(o, args[0], k,
                                                                 mapToFour);
                      return {arith::TruncIOp::create(nb, l, nb.getI8Type(),
                                                      byte)};
                    });
    };
    // four_over_six: keep the map-to-4 byte where its error is strictly
    // lower (ties keep map-to-6), elementwise over the scale tensor.
    auto chooseScales = [&](Value sse6, Value sse4, Value bytes6,
                            Value bytes4) {
      return bt.map(bytes6, {sse6, sse4, bytes6, bytes4},
                    SmallVector<AffineMap>(4, bt.identityMap(1)),
                    b.getI8Type(),
                    [&](OpBuilder &nb, Location l,
                        ValueRange args) -> SmallVector<Value> {
                      ArithOps o(nb, l);
                      Value lower =
                          o.cmpd(numerics::FPred::OLT, args[1], args[0]);
                      return {arith::SelectOp::create(nb, l, lower, args[3],
                                                      args[2])};
                    });
    };

    Value codes, scales;
    if (!scheme.getTile2d()) {
      int64_t nB = type.getAxisSize() / kBlock;
      Value amax = bt.reduceAbsMax(bt.splitLast(x, {kBlock}), 1);
      scales = blockScales(amax, /*mapToFour=*/false);
      if (fourOverSix) {
        Value scales4 = blockScales(amax, /*mapToFour=*/true);
        Value zero = bt.filledOuter(x, {nB}, b.getF64FloatAttr(0.0));
        AffineMap perBlock = bt.outerMap(2, {0});
        SmallVector<Value> sse = bt.generic(
            {bt.splitLast(x, {kBlock}), scales, scales4},
            {bt.identityMap(2), perBlock, perBlock}, {zero, zero},
            {perBlock, perBlock},
            {IteratorType::parallel, IteratorType::reduction},
            [&](OpBuilder &nb, Location l,
                ValueRange args) -> SmallVector<Value> {
              ArithOps o(nb, l);
              Value bits = stochastic ? bt.elementRandomBits(
                                            nb, l, seed, {{0, kBlock}, {1, 1}})
                                      : o.i32(0);
              Value e6 = codec.squaredError(o, args[0],
                                            extByte(nb, l, args[1]), bits);
              Value e4 = codec.squaredError(o, args[0],
                                            extByte(nb, l, args[2]), bits);
              return {o.addd(args[3], e6), o.addd(args[4], e4)};
            });
        scales = chooseScales(sse[0], sse[1], scales, scales4);
      }
      codes = bt.packCodes(
          x, {nB, kBlock / 2}, {bt.splitLast(x, {kBlock / 2, 2}), scales},
          {bt.identityMap(3), bt.outerMap(3, {0})},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            ArithOps o(nb, l);
            Value bits =
                stochastic ? bt.elementRandomBits(nb, l, seed,
                                                  {{0, kBlock}, {1, 2}, {2, 1}})
                           : o.i32(0);
            return codec.code(o, args[0], extByte(nb, l, args[1]), bits);
          });
      codes = bt.mergeTrailing(codes, 2);
    } else {
      // 16x16 tiles over (P, K): P is the last outer dimension of the
      // axis-last view (the verifier guarantees a static multiple of 16).
      // Outer loops of every generic below: [O'..., P/16].
      int64_t np = bt.getNumOuter() - 1;
      int64_t nK = type.getAxisSize() / kBlock;
      Value tiles = bt.splitDim(bt.splitLast(x, {kBlock}), np, {kBlock});
      Value amax = bt.reduceAbsMaxDims(tiles, {np + 1, np + 3});
      scales = blockScales(amax, /*mapToFour=*/false);
      if (fourOverSix) {
        Value scales4 = blockScales(amax, /*mapToFour=*/true);
        Value zero = bt.filledOuter(amax, {nK}, b.getF64FloatAttr(0.0));
        // Loops [O', pt, a, kt, b]. The sum runs over (a, b) with a outer,
        // adding e(a,a) at b == a and e(a,b) + e(b,a) at b > a: the
        // transpose-symmetric order of the reference (Reference.cpp).
        AffineMap perTile = bt.outerMap(3, {1});
        SmallVector<Value> sse = bt.generic(
            {tiles, tiles, scales, scales4},
            {bt.outerMap(3, {0, 1, 2}), bt.outerMap(3, {2, 1, 0}), perTile,
             perTile},
            {zero, zero}, {perTile, perTile},
            {IteratorType::reduction, IteratorType::parallel,
             IteratorType::reduction},
            [&](OpBuilder &nb, Location l,
                ValueRange args) -> SmallVector<Value> {
              ArithOps o(nb, l);
              auto bitsAt = [&](int64_t rowLoop, int64_t colLoop) {
                if (!stochastic)
                  return o.i32(0);
                SmallVector<Value> coords;
                for (int64_t d = 0; d < np; ++d)
                  coords.push_back(linalg::IndexOp::create(nb, l, d));
                coords.push_back(bt.loopCoordinate(
                    nb, l, {{np, kBlock}, {rowLoop, 1}}));
                coords.push_back(bt.loopCoordinate(
                    nb, l, {{np + 2, kBlock}, {colLoop, 1}}));
                return bt.randomBitsAt(nb, l, seed, coords);
              };
              Value bitsAB = bitsAt(np + 1, np + 3);
              Value bitsBA = bitsAt(np + 3, np + 1);
              Value ia = linalg::IndexOp::create(nb, l, np + 1);
              Value ib = linalg::IndexOp::create(nb, l, np + 3);
              Value below = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::ult, ib, ia);
              Value diagonal = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::eq, ib, ia);
              SmallVector<Value> results;
              for (int c = 0; c < 2; ++c) {
                Value byte = extByte(nb, l, args[2 + c]);
                Value acc = args[4 + c];
                Value eAB = codec.squaredError(o, args[0], byte, bitsAB);
                Value eBA = codec.squaredError(o, args[1], byte, bitsBA);
                Value term = o.selectd(diagonal, eAB, o.addd(eAB, eBA));
                results.push_back(
                    o.selectd(below, acc, o.addd(acc, term)));
              }
              return results;
            });
        scales = chooseScales(sse[0], sse[1], scales, scales4);
      }
      // Loops [O', pt, r, kt, h, p]: element (pt*16 + r, kt*16 + 2h + p).
      codes = bt.packCodes(
          amax, {kBlock, nK, kBlock / 2},
          {bt.splitDim(bt.splitLast(x, {kBlock / 2, 2}), np, {kBlock}),
           scales},
          {bt.identityMap(4), bt.outerMap(4, {1})},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            ArithOps o(nb, l);
            Value bits = o.i32(0);
            if (stochastic) {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < np; ++d)
                coords.push_back(linalg::IndexOp::create(nb, l, d));
              coords.push_back(
                  bt.loopCoordinate(nb, l, {{np, kBlock}, {np + 1, 1}}));
              coords.push_back(bt.loopCoordinate(
                  nb, l, {{np + 2, kBlock}, {np + 3, 2}, {np + 4, 1}}));
              bits = bt.randomBitsAt(nb, l, seed, coords);
            }
            return codec.code(o, args[0], extByte(nb, l, args[1]), bits);
          });
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d < np; ++d)
        groups.push_back({d});
      groups.push_back({np, np + 1});
      groups.push_back({np + 2, np + 3});
      codes = bt.collapse(codes, groups);
      // ABI: a tile's byte is repeated in each of its 16 lines, so the scale
      // tensor has the layout of untiled NVFP4 (docs/ABI.md).
      Value repeated = bt.emptyOuter(amax, {kBlock, nK}, b.getI8Type());
      repeated = bt.generic(
          {scales}, {bt.outerMap(2, {1})}, repeated, bt.identityMap(2),
          {IteratorType::parallel, IteratorType::parallel},
          [](OpBuilder &, Location, ValueRange args) -> SmallVector<Value> {
            return {args[0]};
          })[0];
      groups.pop_back();
      groups.push_back({np + 2});
      scales = bt.collapse(repeated, groups);
    }
    return SmallVector<Value>{bt.fromAxisLast(codes), bt.fromAxisLast(scales),
                              tensorScale};
  }

  FailureOr<Value> buildDequantize(Attribute, OpBuilder &b, Location loc,
                                   ValueRange components,
                                   QuantizedTensorType type) const {
    BlockedTensorBuilder bt(b, loc, type);
    Value gDec = tensor::ExtractOp::create(b, loc, components[2], ValueRange{});
    auto valueFn = [&](OpBuilder &nb, Location l, Value code,
                       ValueRange args) {
      ArithOps ops(nb, l);
      return numerics::nvfp4Dequant(ops, code, extByte(nb, l, args[0]), gDec);
    };
    // Tiled or not, each line has one byte per 16 elements along the axis.
    Value codes = bt.splitLast(bt.toAxisLast(components[0]), {kBlock / 2});
    Value scales = bt.toAxisLast(components[1]);
    int64_t nK = type.getAxisSize() / kBlock;
    Value values = bt.unpackCodes(codes, {nK, kBlock / 2}, {scales},
                                  {bt.outerMap(3, {0})}, valueFn);
    return bt.fromAxisLast(bt.mergeTrailing(values, 3));
  }
};

} // namespace

void mlir::fp4::registerNVFP4LoweringModel(MLIRContext *context) {
  NVFP4Attr::attachInterface<NVFP4LoweringModel>(*context);
}
