//===- NVFP4GPULowering.cpp - #fp4.nvfp4 in GPU kernels -------------------===//
//
// Components: codes, one E4M3 scale byte per 16 elements, the f32 decode
// tensor scale g_dec.
//   element:    nvfp4Dequant(code, byte, g_dec)
//   fragments:  pair bits * 2^118 * e4m3(byte) (always exact; the values
//               carry 2^-8, restored with g_dec on the f32 result)
//   quantizer:  a first kernel reduces the finite tensor amax; then per
//               block (or 16x16 tile, whose 16 lines are 16 lanes) the E4M3
//               scale byte, four_over_six chosen on sequential f64 error
//               sums (one thread per block; a tile through shared memory),
//               as NVFP4Lowering.
//
//===----------------------------------------------------------------------===//

#include "BF16PairDequant.h"
#include "ElementAccess.h"
#include "FragmentDequant.h"
#include "QuantizeChunk.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/NVFP4.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp4;
using numerics::FPred;
using numerics::IPred;

namespace {

/// NVFP4 16x16 tiles, and the fragments' exponent offset: it keeps
/// e2m1 * e4m3 * 2^(126 - offset) a finite bf16 (448 * 6 < 2^12) and
/// e2m1 * e4m3 * 2^-offset exact (multiples of 2^-10 * 2^-offset stay above
/// the bf16 subnormal step 2^-133).
constexpr int64_t kTile = numerics::kNVFP4BlockSize;
constexpr int64_t kWarp = kQuantizeWarp;
constexpr int64_t kFragmentOffset = 8;

/// The four_over_six choice of a 16x16 tile whose 16 lines are 16
/// consecutive lanes (one line of 16 elements each): the two candidates'
/// f64 error sums in the reference's transpose-symmetric order (for a, then
/// b >= a: e(a,a), or e(a,b) + e(b,a)), computed by the tile's first lane
/// from shared memory. Returns whether map-to-4 is strictly better (on
/// every lane of the tile).
static Value emitTileFourOverSixChoice(QuantizeEmitter &q,
                                ArrayRef<SmallVector<Value>> errors,
                                Value errorsSmem, Value tid) {
  OpBuilder &b = q.b;
  Location loc = q.loc;
  ArithOps &ops = q.ops;
  Type f64 = b.getF64Type();
  Value tileLane =
      arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, kTile));
  Value tileBase = arith::SubIOp::create(b, loc, tid, tileLane);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        tileLane, indexConst(b, loc, 0));
  SmallVector<Value> sums;
  for (const SmallVector<Value> &e : errors) {
    for (int64_t j = 0; j < kTile; ++j) {
      Value idx = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tid, indexConst(b, loc, kTile)),
          indexConst(b, loc, j));
      memref::StoreOp::create(b, loc, e[j], errorsSmem, ValueRange{idx});
    }
    gpu::BarrierOp::create(b, loc);
    Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{f64}, isFirst,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      auto at = [&](Value line, Value col) {
        Value idx = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc,
                                  arith::AddIOp::create(b, loc, tileBase, line),
                                  indexConst(b, loc, kTile)),
            col);
        return memref::LoadOp::create(b, loc, errorsSmem, ValueRange{idx})
            .getResult();
      };
      auto outer = scf::ForOp::create(
          b, loc, indexConst(b, loc, 0), indexConst(b, loc, kTile),
          indexConst(b, loc, 1), ValueRange{zero},
          [&](OpBuilder &, Location, Value a, ValueRange outerIter) {
            auto inner = scf::ForOp::create(
                b, loc, a, indexConst(b, loc, kTile), indexConst(b, loc, 1),
                outerIter,
                [&](OpBuilder &, Location, Value bb, ValueRange innerIter) {
                  Value eAB = at(a, bb), eBA = at(bb, a);
                  Value diagonal = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::eq, a, bb);
                  Value term = ops.selectd(diagonal, eAB, ops.addd(eAB, eBA));
                  scf::YieldOp::create(
                      b, loc, ValueRange{ops.addd(innerIter[0], term)});
                });
            scf::YieldOp::create(b, loc, inner.getResults());
          });
      scf::YieldOp::create(b, loc, outer.getResults());
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{zero});
    }
    sums.push_back(ifOp.getResult(0));
    // The buffer is reused by the next candidate.
    gpu::BarrierOp::create(b, loc);
  }
  Value lower = ops.cmpd(FPred::OLT, sums[1], sums[0]);
  // Broadcast the first lane's decision to the tile.
  Value flag = arith::ExtUIOp::create(b, loc, b.getI32Type(), lower);
  Value warpLane = toI32(
      b, loc,
      arith::RemUIOp::create(b, loc, tileBase, indexConst(b, loc, kWarp)));
  flag = shuffleIdx(b, loc, flag, warpLane);
  return ops.cmpi(IPred::NE, flag, ops.i32(0));
}

struct NVFP4GPULoweringModel
    : public SchemeGPULoweringAttrInterface::ExternalModel<
          NVFP4GPULoweringModel, NVFP4Attr> {
  SmallVector<StringRef> getGPUComponentSuffixes(Attribute) const {
    return {"codes", "scales", "tensor_scale"};
  }
  StringRef getGPUVariantName(Attribute) const { return "nvfp4"; }
  int64_t getGPUScaleBlock(Attribute) const {
    return numerics::kNVFP4BlockSize;
  }
  int64_t getGPUMacroBlock(Attribute, int64_t) const { return 0; }

  Value buildGPUElementLoad(Attribute, OpBuilder &b, Location loc,
                            ValueRange components, Value code, Value row,
                            Value col) const {
    Value byte = loadByteAsI32(
        b, loc, components[1],
        {row, componentColumn(b, loc, col, numerics::kNVFP4BlockSize)});
    Value gDec = memref::LoadOp::create(b, loc, components[2], {});
    return numerics::nvfp4Dequant(ArithOps(b, loc), code, byte, gDec);
  }

  SmallVector<Value> buildGPUDequantizeChunk(Attribute, OpBuilder &b,
                                             Location loc,
                                             ValueRange components,
                                             ValueRange codes, Value row,
                                             Value col,
                                             QuantizedTensorType) const {
    ArithOps ops(b, loc);
    Value gDec = memref::LoadOp::create(b, loc, components[2], ValueRange{});
    return dequantizeByteScaledChunk(
        b, loc, components[1], codes, row, col, numerics::kNVFP4BlockSize,
        [&](int64_t, Value code, Value byte) {
          return numerics::nvfp4Dequant(ops, code, byte, gDec);
        });
  }

  std::optional<BF16FragmentForm>
  getBF16FragmentForm(Attribute, QuantizedTensorType, std::string &) const {
    BF16FragmentForm form;
    form.blockSize = numerics::kNVFP4BlockSize;
    form.hasTensorScale = true;
    form.exponentOffset = kFragmentOffset;
    form.unitScaleByte = 0x38;
    return form;
  }

  Value buildBF16ScaleMultiplier(Attribute, OpBuilder &b, Location loc,
                                 Value byte, bool) const {
    static_assert(kFragmentOffset == 8, "buildE4M3FactorTimes2Pow118");
    return buildE4M3FactorTimes2Pow118(b, loc, byte);
  }

  LogicalResult planGPUQuantize(Attribute attr, const QuantizeKernelSpec &spec,
                                GPUQuantizePlan &plan,
                                std::string &reason) const {
    auto nv = cast<NVFP4Attr>(attr);
    bool tile2d = nv.getTile2d(), fourOverSix = nv.getFourOverSix();
    if (tile2d && spec.rows % kTile != 0) {
      reason = "NVFP4 16x16 tiles need R to be a multiple of 16";
      return failure();
    }
    // The lanes of a tile hold different rows, so a rotation must stay
    // inside one thread's 16 elements.
    if (tile2d && spec.rotationSize > kTile) {
      reason = "NVFP4 16x16 tiles with a fused rotation larger than 16";
      return failure();
    }
    plan.variant = "nvfp4";
    if (fourOverSix)
      plan.variant += "_4over6";
    if (tile2d)
      plan.variant += "_tile2d";
    plan.groups.push_back({numerics::kNVFP4BlockSize});
    // four_over_six sums a block's errors sequentially: one thread per block.
    if (fourOverSix || tile2d)
      plan.minChunk = kTile;
    if (tile2d) {
      plan.exactChunk = kTile;
      plan.tileLines = true;
    }
    // The tile four_over_six path keeps 16 f64 errors per thread in shared
    // memory; stay within the 48 KB of static shared memory.
    if (tile2d && fourOverSix)
      plan.maxBlockDim = 256;
    plan.needsTensorAmax = true;
    plan.rounding = toNumerics(nv.getRounding());
    plan.seed = nv.getSeed();
    return success();
  }

  void buildGPUQuantizeChunk(Attribute attr, QuantizeChunkContext &ctx) const {
    auto nv = cast<NVFP4Attr>(attr);
    const bool tile2d = nv.getTile2d(), fourOverSix = nv.getFourOverSix();
    const int64_t block = numerics::kNVFP4BlockSize;
    QuantizeEmitter &q = ctx.q;
    OpBuilder &b = q.b;
    Location loc = q.loc;
    ArithOps &ops = q.ops;
    const int64_t chunk = q.chunk;
    const ChunkCoords &c = ctx.coords;
    ArrayRef<Value> x = ctx.x;
    numerics::ElementRounding mode = ctx.plan.rounding;
    SmallVector<Value> codes(chunk);

    // NVFP4Lowering, per tensor: g_enc, g_dec, k from the finite amax.
    Value tensorAmax = ops.bitcastToF32(memref::LoadOp::create(
        b, loc, ctx.tensorAmax, ValueRange{indexConst(b, loc, 0)}));
    Value gEnc = numerics::nvfp4GlobalEncodeScale(ops, tensorAmax, fourOverSix);
    Value gDec = numerics::nvfp4GlobalDecodeScale(ops, gEnc);
    Value k = numerics::nvfp4BlockScaleFactor(ops, gEnc);
    // Stored first: keeping g_dec live across the block loop costs a spill.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        ctx.gid, indexConst(b, loc, 0));
    emitIf(b, loc, first, [&](OpBuilder &nb, Location l) {
      memref::StoreOp::create(nb, l, gDec, ctx.outputs[2], ValueRange{});
    });
    int64_t run = std::min(block, chunk);
    SmallVector<Value> amax;
    if (tile2d) {
      // One line of the tile per lane: the tile max over 16 lanes.
      amax = q.runAbsMaxBits(x, kTile);
      amax[0] = groupReduce(b, loc, amax[0], kTile, q.maxBits());
    } else {
      amax = q.blockAbsMaxBits(x, block);
    }
    auto code = [&](Value xv, Value byte, Value rb) {
      Value enc = numerics::nvfp4EncodeFactor(ops, byte, gDec);
      return numerics::nvfp4ElementCode(ops, xv, enc, byte, mode, rb);
    };
    auto squaredError = [&](Value xv, Value byte, Value rb) {
      Value deq = numerics::nvfp4Dequant(ops, code(xv, byte, rb), byte, gDec);
      return numerics::squaredErrorF64(ops, xv, deq);
    };
    SmallVector<Value> bytes;
    for (size_t s = 0; s < amax.size(); ++s) {
      Value blockAmax = ops.bitcastToF32(amax[s]);
      Value byte = numerics::nvfp4BlockScaleByte(ops, blockAmax, k, false);
      if (fourOverSix) {
        Value byte4 = numerics::nvfp4BlockScaleByte(ops, blockAmax, k, true);
        Value lower;
        if (!tile2d) {
          // The block is this thread's run: both sums in element order.
          Value zero = ops.f64(0.0);
          Value sse6 = zero, sse4 = zero;
          for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run);
               ++j) {
            Value rb = ctx.randomBits(j);
            sse6 = ops.addd(sse6, squaredError(x[j], byte, rb));
            sse4 = ops.addd(sse4, squaredError(x[j], byte4, rb));
          }
          lower = ops.cmpd(FPred::OLT, sse4, sse6);
        } else {
          Value smem = ctx.func.addWorkgroupAttribution(
              MemRefType::get(
                  {ctx.blockDim * kTile}, b.getF64Type(), AffineMap(),
                  gpu::AddressSpaceAttr::get(b.getContext(),
                                             gpu::AddressSpace::Workgroup)),
              loc);
          SmallVector<SmallVector<Value>> errors(2);
          for (int64_t j = 0; j < kTile; ++j) {
            Value rb = ctx.randomBits(j);
            errors[0].push_back(squaredError(x[j], byte, rb));
            errors[1].push_back(squaredError(x[j], byte4, rb));
          }
          lower = emitTileFourOverSixChoice(q, errors, smem, c.tid);
        }
        byte = ops.selecti(lower, byte4, byte);
      }
      bytes.push_back(byte);
      for (int64_t j = s * run; j < static_cast<int64_t>((s + 1) * run); ++j)
        codes[j] = code(x[j], byte, ctx.randomBits(j));
    }
    // With tiles every line stores its copy of the tile's byte.
    storeCodesAndBlockBytes(ctx, codes, bytes, tile2d ? chunk : block);
  }
};

} // namespace

void mlir::fp4::registerNVFP4GPULoweringModel(MLIRContext *context) {
  NVFP4Attr::attachInterface<NVFP4GPULoweringModel>(*context);
}
