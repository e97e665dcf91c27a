//===- MXFP4Lowering.cpp - #fp4.mxfp4 to linalg ---------------------------===//
//
// Rewrite (axis-last view [outer..., K], B = block_size, nB = K / B):
//   quantize:   amax[o, b]   = max_i |x[o, b, i]|            (linalg reduce)
//               scale[o, b]  = mxScaleByte(amax, rule)       (E8M0 byte, i8)
//               codes[o, b, j] = e2m1(x[o, b, 2j]) | e2m1(x[o, b, 2j+1]) << 4
//                              with x scaled by e8m0QuantizeFactor(scale)
//   dequantize: x'[o, b, i]  = mxfp4Dequant(code, scale[o, b])
// The element and scale arithmetic are the numerics rules (MXFP4.h, E8M0.h)
// emitted through ArithOps.
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Conversion/FP4ToLinalg/BlockedTensorBuilder.h"
#include "fp4/Conversion/FP4ToLinalg/SchemeLoweringInterface.h"
#include "fp4/Numerics/MXFP4.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

struct MXFP4LoweringModel
    : public SchemeLoweringAttrInterface::ExternalModel<MXFP4LoweringModel,
                                                        MXFP4Attr> {
  FailureOr<SmallVector<Value>> buildQuantize(Attribute attr, OpBuilder &b,
                                              Location loc, Value input,
                                              QuantizedTensorType type) const {
    auto scheme = cast<MXFP4Attr>(attr);
    int64_t bs = scheme.getBlockSize();
    int64_t nB = type.getAxisSize() / bs;
    numerics::ScaleRounding rule = toNumerics(scheme.getScaleRounding());
    numerics::ElementRounding mode = toNumerics(scheme.getRounding());
    uint32_t seed = scheme.getSeed();
    Type i8 = b.getI8Type();

    BlockedTensorBuilder bt(b, loc, type);
    if (mode == numerics::ElementRounding::Stochastic)
      bt.setLogicalShapeFrom(input);
    Value x = bt.toAxisLast(input);
    Value amax = bt.reduceAbsMax(bt.splitLast(x, {bs}), 1);
    Value scales = bt.map(
        amax, {amax}, {bt.identityMap(1)}, i8,
        [&](OpBuilder &nb, Location l, ValueRange args) -> SmallVector<Value> {
          ArithOps ops(nb, l);
          Value byte = numerics::mxScaleByte(ops, args[0], rule);
          return {arith::TruncIOp::create(nb, l, i8, byte)};
        });
    Value codes = bt.packCodes(
        x, {nB, bs / 2}, {bt.splitLast(x, {bs / 2, 2}), scales},
        {bt.identityMap(3), bt.outerMap(3, {0})},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          ArithOps ops(nb, l);
          Value byte = arith::ExtUIOp::create(nb, l, nb.getI32Type(), args[1]);
          Value factor = numerics::e8m0QuantizeFactor(ops, byte);
          Value bits = mode == numerics::ElementRounding::Stochastic
                           ? bt.elementRandomBits(nb, l, seed,
                                                  {{0, bs}, {1, 2}, {2, 1}})
                           : ops.i32(0);
          return numerics::mxfp4ElementCode(ops, args[0], factor, mode, bits);
        });
    codes = bt.mergeTrailing(codes, 2);
    return SmallVector<Value>{bt.fromAxisLast(codes), bt.fromAxisLast(scales)};
  }

  FailureOr<Value> buildDequantize(Attribute attr, OpBuilder &b, Location loc,
                                   ValueRange components,
                                   QuantizedTensorType type) const {
    auto scheme = cast<MXFP4Attr>(attr);
    int64_t bs = scheme.getBlockSize();
    int64_t nB = type.getAxisSize() / bs;
    BlockedTensorBuilder bt(b, loc, type);
    Value codes = bt.splitLast(bt.toAxisLast(components[0]), {bs / 2});
    Value scales = bt.toAxisLast(components[1]);
    Value values = bt.unpackCodes(
        codes, {nB, bs / 2}, {scales}, {bt.outerMap(3, {0})},
        [&](OpBuilder &nb, Location l, Value code, ValueRange args) {
          ArithOps ops(nb, l);
          Value byte = arith::ExtUIOp::create(nb, l, nb.getI32Type(), args[0]);
          return numerics::mxfp4Dequant(ops, code, byte);
        });
    return bt.fromAxisLast(bt.mergeTrailing(values, 3));
  }
};

} // namespace

void mlir::fp4::registerMXFP4LoweringModel(MLIRContext *context) {
  MXFP4Attr::attachInterface<MXFP4LoweringModel>(*context);
}
