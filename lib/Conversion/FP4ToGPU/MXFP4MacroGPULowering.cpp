//===- MXFP4MacroGPULowering.cpp - #fp4.mxfp4_macro in GPU kernels --------===//
//
// Components: codes, one E8M0 byte per 32 elements, one bf16 factor per
// macro block (macro_block elements, or the row for 0).
//   element:    macroDequant(code, byte, factor)
//   fragments:  the MXFP4 form of the blocks of 32; the bf16 factors are
//               not exact in a bf16 product and scale f32 partial sums
//   quantizer:  (search = 0) m from the macro amax (across lanes, or the
//               warps of a CTA through shared memory), y = x / m, MXFP4
//               blocks of 32 on y, m stored as bf16, as MXFP4MacroLowering.
//
//===----------------------------------------------------------------------===//

#include "ElementAccess.h"
#include "FragmentDequant.h"
#include "QuantizeChunk.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/MacroBlock.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

constexpr int64_t kBlock = 32;
constexpr int64_t kWarp = kQuantizeWarp;
constexpr int64_t kMaxCTAThreads = 1024;

struct MXFP4MacroGPULoweringModel
    : public SchemeGPULoweringAttrInterface::ExternalModel<
          MXFP4MacroGPULoweringModel, MXFP4MacroAttr> {
  SmallVector<StringRef> getGPUComponentSuffixes(Attribute) const {
    return {"codes", "scales", "factors"};
  }
  StringRef getGPUVariantName(Attribute) const { return "macro"; }
  int64_t getGPUScaleBlock(Attribute) const { return kBlock; }
  int64_t getGPUMacroBlock(Attribute attr, int64_t k) const {
    int64_t macro = cast<MXFP4MacroAttr>(attr).getMacroBlock();
    return macro == 0 ? k : macro;
  }

  Value buildGPUElementLoad(Attribute attr, OpBuilder &b, Location loc,
                            ValueRange components, Value code, Value row,
                            Value col) const {
    Value byte = loadByteAsI32(b, loc, components[1],
                               {row, componentColumn(b, loc, col, kBlock)});
    int64_t macro = cast<MXFP4MacroAttr>(attr).getMacroBlock();
    Value macroIndex = macro == 0 ? indexConst(b, loc, 0)
                                  : componentColumn(b, loc, col, macro);
    Value factor =
        memref::LoadOp::create(b, loc, components[2], {row, macroIndex});
    factor = arith::ExtFOp::create(b, loc, b.getF32Type(), factor);
    return numerics::macroDequant(ArithOps(b, loc), code, byte, factor);
  }

  SmallVector<Value> buildGPUDequantizeChunk(Attribute attr, OpBuilder &b,
                                             Location loc,
                                             ValueRange components,
                                             ValueRange codes, Value row,
                                             Value col,
                                             QuantizedTensorType type) const {
    ArithOps ops(b, loc);
    int64_t chunk = codes.size();
    int64_t macro = getGPUMacroBlock(attr, type.getAxisSize());
    int64_t macroRun = std::min(macro, chunk);
    SmallVector<Value> factors;
    for (int64_t s = 0; s < chunk / macroRun; ++s) {
      Value f = memref::LoadOp::create(
          b, loc, components[2],
          ValueRange{row, componentColumn(b, loc, col, macro, s)});
      Value bits16 = arith::BitcastOp::create(b, loc, b.getI16Type(), f);
      factors.push_back(numerics::bf16Decode(
          ops, arith::ExtUIOp::create(b, loc, b.getI32Type(), bits16)));
    }
    return dequantizeByteScaledChunk(
        b, loc, components[1], codes, row, col, kBlock,
        [&](int64_t j, Value code, Value byte) {
          return numerics::macroDequant(ops, code, byte, factors[j / macroRun]);
        });
  }

  std::optional<BF16FragmentForm>
  getBF16FragmentForm(Attribute attr, QuantizedTensorType,
                      std::string &) const {
    return getE8M0FragmentForm(kBlock,
                               cast<MXFP4MacroAttr>(attr).getMacroBlock());
  }

  Value buildBF16ScaleMultiplier(Attribute, OpBuilder &b, Location loc,
                                 Value byte, bool fast) const {
    return emitE8M0Multiplier(b, loc, byte, fast);
  }

  LogicalResult planGPUQuantize(Attribute attr, const QuantizeKernelSpec &spec,
                                GPUQuantizePlan &plan,
                                std::string &reason) const {
    auto macro = cast<MXFP4MacroAttr>(attr);
    if (macro.getSearch() != 0) {
      reason = "macro-block search (search > 0) is not implemented on the "
               "GPU (it needs sequential f64 error sums per candidate)";
      return failure();
    }
    int64_t size = getGPUMacroBlock(attr, spec.cols);
    plan.variant = "macro";
    plan.groups.push_back({kBlock});
    plan.groups.push_back({size, kMaxCTAThreads});
    plan.ctaGroupSize = size;
    plan.rounding = toNumerics(macro.getRounding());
    plan.seed = macro.getSeed();
    return success();
  }

  void buildGPUQuantizeChunk(Attribute attr, QuantizeChunkContext &ctx) const {
    // MXFP4MacroLowering (search = 0): m from the macro amax, y = x / m,
    // MXFP4 blocks of 32 on y, the factor stored as bf16.
    auto scheme = cast<MXFP4MacroAttr>(attr);
    QuantizeEmitter &q = ctx.q;
    OpBuilder &b = q.b;
    Location loc = q.loc;
    ArithOps &ops = q.ops;
    const int64_t chunk = q.chunk;
    const ChunkCoords &c = ctx.coords;
    const int64_t macro = ctx.plan.ctaGroupSize;
    const int64_t macroLanes = ctx.ctaGroupLanes;
    SmallVector<Value> runs = q.runAbsMaxBits(ctx.x, std::min(macro, chunk));
    SmallVector<Value> ms;
    if (macro >= chunk) {
      Value m = runs[0];
      if (macroLanes > kWarp) {
        Value smem = ctx.func.addWorkgroupAttribution(
            MemRefType::get({ctx.blockDim / kWarp}, b.getI32Type(),
                            AffineMap(),
                            gpu::AddressSpaceAttr::get(
                                b.getContext(), gpu::AddressSpace::Workgroup)),
            loc);
        m = ctaGroupReduce(b, loc, m, macroLanes, c.tid, smem, q.maxBits());
      } else {
        m = groupReduce(b, loc, m, macroLanes, q.maxBits());
      }
      ms.push_back(m);
    } else {
      ms = runs;
    }
    SmallVector<Value> factors;
    for (Value m : ms)
      factors.push_back(
          numerics::macroFactorFromAmax(ops, ops.bitcastToF32(m)));
    int64_t macroRun = std::min(macro, chunk);
    SmallVector<Value> y;
    for (int64_t j = 0; j < chunk; ++j)
      y.push_back(
          numerics::macroScaledInput(ops, ctx.x[j], factors[j / macroRun]));
    SmallVector<Value> codes(chunk);
    SmallVector<Value> bytes = emitMXBlocks(
        ctx, y, kBlock, toNumerics(scheme.getScaleRounding()), codes);
    storeCodesAndBlockBytes(ctx, codes, bytes, kBlock, [&] {
      // One bf16 factor per macro block.
      Value mcol = componentColumn(b, loc, c.col, macro);
      auto storeFactor = [&](Value m, Value col) {
        Value bits16 = arith::TruncIOp::create(
            b, loc, b.getI16Type(), numerics::bf16StorageBits(ops, m));
        memref::StoreOp::create(
            b, loc, arith::BitcastOp::create(b, loc, b.getBF16Type(), bits16),
            ctx.outputs[2], ValueRange{c.row, col});
      };
      if (macro >= chunk) {
        Value lead = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(b, loc, c.tid,
                                   indexConst(b, loc, macroLanes)),
            indexConst(b, loc, 0));
        emitIf(b, loc, lead,
               [&](OpBuilder &, Location) { storeFactor(factors[0], mcol); });
      } else {
        for (auto [s, m] : llvm::enumerate(factors))
          storeFactor(m, s == 0 ? mcol
                                : arith::AddIOp::create(b, loc, mcol,
                                                        indexConst(b, loc, s))
                                      .getResult());
      }
    });
  }
};

} // namespace

void mlir::fp4::registerMXFP4MacroGPULoweringModel(MLIRContext *context) {
  MXFP4MacroAttr::attachInterface<MXFP4MacroGPULoweringModel>(*context);
}
