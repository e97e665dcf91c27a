//===- MXFP4GPULowering.cpp - #fp4.mxfp4 in GPU kernels -------------------===//
//
// Components: codes, one E8M0 scale byte per block_size elements.
//   element:    mxfp4Dequant(code, byte)
//   fragments:  pair bits * 2^126 * 2^(byte - 127) (one multiply
//               2^(byte - 1) for bytes up to 128), every block size that is
//               a multiple of 16 (a lane's 16-element run of a K group must
//               not straddle two blocks)
//   quantizer:  the block amax (in-thread runs, then xor shuffles), its
//               mxScaleByte, codes by mxfp4ElementCode on the scaled grid,
//               as MXFP4Lowering.
//
//===----------------------------------------------------------------------===//

#include "ElementAccess.h"
#include "FragmentDequant.h"
#include "QuantizeChunk.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/MXFP4.h"

using namespace mlir;
using namespace mlir::fp4;

SmallVector<Value> mlir::fp4::emitMXBlocks(QuantizeChunkContext &ctx,
                                           ArrayRef<Value> values,
                                           int64_t blockSize,
                                           numerics::ScaleRounding rule,
                                           SmallVectorImpl<Value> &codes) {
  // MXFP4Lowering: scale = mxScaleByte(block amax), code =
  // mxfp4ElementCode(x, e8m0QuantizeFactor(scale)).
  QuantizeEmitter &q = ctx.q;
  ArithOps &ops = q.ops;
  int64_t run = std::min(blockSize, q.chunk);
  SmallVector<Value> amax = q.blockAbsMaxBits(values, blockSize);
  SmallVector<Value> bytes;
  for (size_t s = 0; s < amax.size(); ++s) {
    Value byte = numerics::mxScaleByte(ops, ops.bitcastToF32(amax[s]), rule);
    bytes.push_back(byte);
    Value factor = numerics::e8m0QuantizeFactor(ops, byte);
    for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run); ++j)
      codes[j] = numerics::mxfp4ElementCode(ops, values[j], factor,
                                            ctx.plan.rounding,
                                            ctx.randomBits(j));
  }
  return bytes;
}

namespace {

struct MXFP4GPULoweringModel
    : public SchemeGPULoweringAttrInterface::ExternalModel<
          MXFP4GPULoweringModel, MXFP4Attr> {
  SmallVector<StringRef> getGPUComponentSuffixes(Attribute) const {
    return {"codes", "scales"};
  }
  StringRef getGPUVariantName(Attribute) const { return "mxfp4"; }
  int64_t getGPUScaleBlock(Attribute attr) const {
    return cast<MXFP4Attr>(attr).getBlockSize();
  }
  int64_t getGPUMacroBlock(Attribute, int64_t) const { return 0; }

  Value buildGPUElementLoad(Attribute attr, OpBuilder &b, Location loc,
                            ValueRange components, Value code, Value row,
                            Value col) const {
    Value byte = loadByteAsI32(
        b, loc, components[1],
        {row, componentColumn(b, loc, col, getGPUScaleBlock(attr))});
    return numerics::mxfp4Dequant(ArithOps(b, loc), code, byte);
  }

  SmallVector<Value> buildGPUDequantizeChunk(Attribute attr, OpBuilder &b,
                                             Location loc,
                                             ValueRange components,
                                             ValueRange codes, Value row,
                                             Value col,
                                             QuantizedTensorType) const {
    ArithOps ops(b, loc);
    return dequantizeByteScaledChunk(
        b, loc, components[1], codes, row, col, getGPUScaleBlock(attr),
        [&](int64_t, Value code, Value byte) {
          return numerics::mxfp4Dequant(ops, code, byte);
        });
  }

  std::optional<BF16FragmentForm>
  getBF16FragmentForm(Attribute attr, QuantizedTensorType,
                      std::string &reason) const {
    int64_t bs = cast<MXFP4Attr>(attr).getBlockSize();
    if (bs % 16 != 0) {
      reason = "MXFP4 block size " + std::to_string(bs) +
               " is not a multiple of 16";
      return std::nullopt;
    }
    return getE8M0FragmentForm(bs);
  }

  Value buildBF16ScaleMultiplier(Attribute, OpBuilder &b, Location loc,
                                 Value byte, bool fast) const {
    return emitE8M0Multiplier(b, loc, byte, fast);
  }

  LogicalResult planGPUQuantize(Attribute attr, const QuantizeKernelSpec &,
                                GPUQuantizePlan &plan, std::string &) const {
    auto mx = cast<MXFP4Attr>(attr);
    plan.variant = "mxfp4";
    plan.groups.push_back({mx.getBlockSize()});
    plan.rounding = toNumerics(mx.getRounding());
    plan.seed = mx.getSeed();
    return success();
  }

  void buildGPUQuantizeChunk(Attribute attr, QuantizeChunkContext &ctx) const {
    auto mx = cast<MXFP4Attr>(attr);
    int64_t bs = mx.getBlockSize();
    SmallVector<Value> codes(ctx.q.chunk);
    SmallVector<Value> bytes = emitMXBlocks(
        ctx, ctx.x, bs, toNumerics(mx.getScaleRounding()), codes);
    storeCodesAndBlockBytes(ctx, codes, bytes, bs);
  }
};

} // namespace

void mlir::fp4::registerMXFP4GPULoweringModel(MLIRContext *context) {
  MXFP4Attr::attachInterface<MXFP4GPULoweringModel>(*context);
}
