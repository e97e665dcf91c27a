//===- HiF4GPULowering.cpp - #fp4.hif4 in GPU kernels ---------------------===//
//
// Components: codes, one i32 metadata word per 64-element group (E6M2 scale
// byte in bits 0..7, level-2 bits 8 + i for the 8-element sub-block i,
// level-3 bits 16 + j for the 4-element sub-block j; docs/ABI.md).
//   element:    hif4Dequant(code, hif4LevelScale(l2, l3), e6m2(byte))
//   fragments:  none (the three-level scales are not exact bf16 factors of
//               one multiply): matmuls take the reference kernel
//   quantizer:  m4 / m8 / m64 maxima in the thread, the group's m64 and
//               metadata word ORed across its lanes, as HiF4Lowering.
//
//===----------------------------------------------------------------------===//

#include "ElementAccess.h"
#include "QuantizeChunk.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Numerics/HiF4.h"
#include "fp4/Numerics/IR/ArithOps.h"

using namespace mlir;
using namespace mlir::fp4;
using numerics::IPred;

namespace {

constexpr int64_t kGroup = numerics::kHiF4GroupSize;

struct HiF4GPULoweringModel
    : public SchemeGPULoweringAttrInterface::ExternalModel<HiF4GPULoweringModel,
                                                           HiF4Attr> {
  SmallVector<StringRef> getGPUComponentSuffixes(Attribute) const {
    return {"codes", "metadata"};
  }
  StringRef getGPUVariantName(Attribute) const { return "hif4"; }
  int64_t getGPUScaleBlock(Attribute) const { return kGroup; }
  int64_t getGPUMacroBlock(Attribute, int64_t) const { return 0; }

  Value buildGPUElementLoad(Attribute, OpBuilder &b, Location loc,
                            ValueRange components, Value code, Value row,
                            Value col) const {
    ArithOps ops(b, loc);
    Value meta = memref::LoadOp::create(
        b, loc, components[1], {row, componentColumn(b, loc, col, kGroup)});
    Value i = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(),
        arith::RemUIOp::create(b, loc, col, indexConst(b, loc, kGroup)));
    // Bit 8 + i/8 scales the 8-element sub-block, bit 16 + i/4 the
    // 4-element one (docs/ABI.md, HiF4 metadata).
    Value l2 = ops.shrui(meta, ops.addi(ops.i32(8), ops.shrui(i, ops.i32(3))));
    Value l3 =
        ops.shrui(meta, ops.addi(ops.i32(16), ops.shrui(i, ops.i32(2))));
    Value level = numerics::hif4LevelScale(ops, l2, l3);
    Value sf = numerics::e6m2Decode(ops, ops.andi(meta, ops.i32(255)));
    return numerics::hif4Dequant(ops, code, level, sf);
  }

  SmallVector<Value> buildGPUDequantizeChunk(Attribute, OpBuilder &b,
                                             Location loc,
                                             ValueRange components,
                                             ValueRange codes, Value row,
                                             Value col,
                                             QuantizedTensorType) const {
    // One metadata word per 64; element j of 8-block i (i = col mod 64 / 8
    // + ...) reads level bits 8 + i and 16 + (2i + h).
    ArithOps ops(b, loc);
    int64_t chunk = codes.size();
    SmallVector<Value> values(chunk);
    Value word = memref::LoadOp::create(
        b, loc, components[1],
        ValueRange{row, componentColumn(b, loc, col, kGroup)});
    Value sf = numerics::e6m2Decode(ops, word);
    Value firstEight = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(),
        arith::DivUIOp::create(
            b, loc,
            arith::RemUIOp::create(b, loc, col, indexConst(b, loc, kGroup)),
            indexConst(b, loc, numerics::kHiF4Level2Size)));
    for (int64_t s = 0; s < chunk / numerics::kHiF4Level2Size; ++s) {
      Value i = ops.addi(firstEight, ops.i32(s));
      Value l2 = ops.andi(ops.shrui(word, ops.addi(i, ops.i32(8))), ops.i32(1));
      for (int64_t h = 0; h < 2; ++h) {
        Value jBit = ops.addi(ops.muli(i, ops.i32(2)), ops.i32(h));
        Value l3 =
            ops.andi(ops.shrui(word, ops.addi(jBit, ops.i32(16))), ops.i32(1));
        Value level = numerics::hif4LevelScale(ops, l2, l3);
        for (int64_t t = 0; t < numerics::kHiF4Level3Size; ++t) {
          int64_t j = 8 * s + 4 * h + t;
          values[j] = numerics::hif4Dequant(ops, codes[j], level, sf);
        }
      }
    }
    return values;
  }

  std::optional<BF16FragmentForm>
  getBF16FragmentForm(Attribute, QuantizedTensorType,
                      std::string &reason) const {
    reason = "scheme 'hif4' has no bf16 fragment dequantizer";
    return std::nullopt;
  }

  Value buildBF16ScaleMultiplier(Attribute, OpBuilder &, Location, Value,
                                 bool) const {
    llvm_unreachable("HiF4 has no bf16 fragment form");
  }

  LogicalResult planGPUQuantize(Attribute, const QuantizeKernelSpec &,
                                GPUQuantizePlan &plan, std::string &) const {
    plan.variant = "hif4";
    plan.groups.push_back({kGroup});
    // A thread's chunk lies in one group (its metadata word is ORed from
    // the group's lanes).
    plan.maxChunk = kGroup;
    return success();
  }

  void buildGPUQuantizeChunk(Attribute, QuantizeChunkContext &ctx) const {
    // HiF4Lowering: m4 per 4, m8 per 8, m64 per 64; byte, rec; level bits;
    // codes; the metadata word ORed from the group's lanes.
    QuantizeEmitter &q = ctx.q;
    OpBuilder &b = q.b;
    Location loc = q.loc;
    ArithOps &ops = q.ops;
    const int64_t chunk = q.chunk;
    const ChunkCoords &c = ctx.coords;
    ArrayRef<Value> x = ctx.x;
    SmallVector<Value> codes(chunk);
    int64_t lanes = lanesOf(chunk, kGroup);
    Value pos = lanes > 1 ? q.lanePosition(c.tid, lanes) : ops.i32(0);
    SmallVector<Value> m4 = q.runAbsMaxBits(x, numerics::kHiF4Level3Size);
    SmallVector<Value> m8;
    for (size_t s = 0; s < m4.size(); s += 2)
      m8.push_back(numerics::maxAbsBits(ops, m4[s], m4[s + 1]));
    Value m64 = m8[0];
    for (size_t s = 1; s < m8.size(); ++s)
      m64 = numerics::maxAbsBits(ops, m64, m8[s]);
    m64 = groupReduce(b, loc, m64, lanes, q.maxBits());
    Value byte = numerics::hif4ScaleByte(ops, ops.bitcastToF32(m64));
    Value rec = numerics::hif4Reciprocal(ops, numerics::e6m2Decode(ops, byte));
    Value word = byte;
    int64_t eightsPerChunk = chunk / numerics::kHiF4Level2Size;
    for (int64_t s = 0; s < eightsPerChunk; ++s) {
      // 8-block i of the group: lane position * (E / 8) + s.
      Value i = ops.addi(ops.muli(pos, ops.i32(eightsPerChunk)), ops.i32(s));
      Value l2 = numerics::hif4Level2Bit(ops, ops.bitcastToF32(m8[s]), rec);
      word = ops.ori(word, ops.shli(l2, ops.addi(i, ops.i32(8))));
      for (int64_t h = 0; h < 2; ++h) {
        Value l3 = numerics::hif4Level3Bit(ops, ops.bitcastToF32(m4[2 * s + h]),
                                           rec, l2);
        Value jBit = ops.addi(ops.muli(i, ops.i32(2)), ops.i32(h));
        word = ops.ori(word, ops.shli(l3, ops.addi(jBit, ops.i32(16))));
        Value level = numerics::hif4LevelScale(ops, l2, l3);
        for (int64_t t = 0; t < numerics::kHiF4Level3Size; ++t) {
          int64_t j = 8 * s + 4 * h + t;
          codes[j] = numerics::hif4ElementCode(ops, x[j], rec, level);
        }
      }
    }
    word = groupReduce(b, loc, word, lanes,
                       [&](Value u, Value w) { return ops.ori(u, w); });
    emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
      storeCodes(b, loc, codes, ctx.outputs[0], c.row, c.col);
      Value lead = ops.cmpi(IPred::EQ, pos, ops.i32(0));
      emitIf(b, loc, lead, [&](OpBuilder &, Location) {
        Value gcol =
            arith::DivUIOp::create(b, loc, c.col, indexConst(b, loc, kGroup));
        memref::StoreOp::create(b, loc, word, ctx.outputs[1],
                                ValueRange{c.row, gcol});
      });
    });
  }
};

} // namespace

void mlir::fp4::registerHiF4GPULoweringModel(MLIRContext *context) {
  HiF4Attr::attachInterface<HiF4GPULoweringModel>(*context);
}
