//===- DequantizeKernel.cpp - dequantizer ---------------------------------===//
//
// fp4.dequantize of a [R, K] quantized tensor (blocked along K) to bf16,
// f16 or f32: thread g owns chunk g of E consecutive elements of the
// flattened tensor (ElementwiseKernel.h; E = 16 when it fits: an 8-byte
// code load and, for bf16, a 32-byte store per thread).
//
// Each value is the scheme's dequantize rule of the numerics library
// (mxfp4Dequant, nvfp4Dequant, macroDequant, hif4Dequant) on the same code
// and scale values the CPU lowering reads, so the f32 value is the
// reference's bit for bit; it is rounded once to the result type with
// roundToBF16 / roundToF16, the rules of castFloatTensor. The kernel is
// memory-bound: the scale of a block is one (cached) byte load per thread.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseKernel.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/HiF4.h"
#include "fp4/Numerics/MXFP4.h"
#include "fp4/Numerics/MacroBlock.h"
#include "fp4/Numerics/NVFP4.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

/// The scheme's scale block along K (HiF4: the 64-group).
int64_t scaleBlock(Attribute scheme) {
  if (auto mx = dyn_cast<MXFP4Attr>(scheme))
    return mx.getBlockSize();
  if (isa<NVFP4Attr>(scheme))
    return numerics::kNVFP4BlockSize;
  if (isa<HiF4Attr>(scheme))
    return numerics::kHiF4GroupSize;
  return 32; // MXFP4 macro: blocks of 32.
}

/// i8 byte at (row, col) of `memref`, zero-extended to i32 (as the
/// reference's extui of an i8 component).
Value loadByte(OpBuilder &b, Location loc, Value memref, Value row, Value col) {
  Value byte = memref::LoadOp::create(b, loc, memref, ValueRange{row, col});
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

} // namespace

FailureOr<KernelPlan> mlir::fp4::buildDequantizeKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const DequantizeKernelSpec &spec, const GPUTarget &target,
    const GPUKernelOptions &options, std::string &reason) {
  (void)target;
  QuantizedTensorType type = spec.input;
  if (type.getRank() != 2 || type.getAxis() != 1 || !type.hasStaticShape() ||
      spec.rows <= 0 || spec.cols <= 0) {
    reason = "the dequantize kernel takes a static [R, K] tensor blocked "
             "along K";
    return failure();
  }
  Type outElt = spec.resultElementType;
  if (!outElt || !(outElt.isBF16() || outElt.isF16() || outElt.isF32())) {
    reason = "the dequantize kernel writes bf16, f16 or f32";
    return failure();
  }
  Attribute scheme = type.getScheme();
  if (!isa<MXFP4Attr, NVFP4Attr, HiF4Attr, MXFP4MacroAttr>(scheme)) {
    reason = "unsupported quantization scheme";
    return failure();
  }
  const int64_t block = scaleBlock(scheme);
  int64_t macro = 0;
  if (auto m = dyn_cast<MXFP4MacroAttr>(scheme))
    macro = m.getMacroBlock() == 0 ? spec.cols : m.getMacroBlock();
  // A chunk lies in one block or holds whole blocks (and the same for macro
  // blocks), so its scales are a few loads at static offsets.
  auto fits = [&](int64_t e, int64_t size) {
    return size == 0 || size % e == 0 || e % size == 0;
  };
  int64_t chunk = 0;
  for (int64_t e : {16, 8})
    if (spec.cols % e == 0 && fits(e, block) && fits(e, macro)) {
      chunk = e;
      break;
    }
  if (chunk == 0) {
    reason = "K is not a multiple of 8 elements";
    return failure();
  }

  int64_t blockDim = options.elementwiseThreads;
  int64_t numChunks = spec.rows * spec.cols / chunk;
  KernelLaunch launch;
  launch.block = {blockDim, 1, 1};
  launch.grid = {llvm::divideCeilSigned(numChunks, blockDim), 1, 1};
  std::string schemeName = isa<MXFP4Attr>(scheme)   ? "mxfp4"
                           : isa<NVFP4Attr>(scheme) ? "nvfp4"
                           : isa<HiF4Attr>(scheme)  ? "hif4"
                                                    : "macro";
  launch.variant = "dequantize_" + schemeName;
  for (const KernelArg &a : spec.args)
    launch.argNames.push_back(a.name);
  launch.func =
      createKernelShell(builder, loc, module, name, spec.args, launch.block);

  OpBuilder::InsertionGuard guard(builder);
  Block &body = launch.func.getBody().front();
  builder.setInsertionPoint(body.getTerminator());
  OpBuilder &b = builder;
  ArithOps ops(b, loc);
  ValueRange components = body.getArguments().drop_back();
  Value out = body.getArguments().back();

  Value gid = emitGlobalThreadId(b, loc, blockDim);
  ChunkCoords c = emitFlatChunkCoords(b, loc, gid, spec.rows, spec.cols, chunk);
  SmallVector<Value> codes =
      loadCodes(b, loc, components[0], c.row, c.col, chunk);

  // The scale value(s) of the chunk: one per run of min(block, E) elements.
  int64_t run = std::min(block, chunk);
  auto runColumn = [&](int64_t size, int64_t s) {
    Value first =
        arith::DivUIOp::create(b, loc, c.col, indexConst(b, loc, size));
    return s == 0 ? first
                  : arith::AddIOp::create(b, loc, first, indexConst(b, loc, s))
                        .getResult();
  };
  SmallVector<Value> values(chunk);
  if (isa<MXFP4Attr, NVFP4Attr>(scheme)) {
    Value gDec;
    if (isa<NVFP4Attr>(scheme))
      gDec = memref::LoadOp::create(b, loc, components[2], ValueRange{});
    for (int64_t s = 0; s < chunk / run; ++s) {
      Value byte = loadByte(b, loc, components[1], c.row, runColumn(block, s));
      for (int64_t j = s * run; j < (s + 1) * run; ++j)
        values[j] = gDec ? numerics::nvfp4Dequant(ops, codes[j], byte, gDec)
                         : numerics::mxfp4Dequant(ops, codes[j], byte);
    }
  } else if (isa<MXFP4MacroAttr>(scheme)) {
    int64_t macroRun = std::min(macro, chunk);
    SmallVector<Value> factors;
    for (int64_t s = 0; s < chunk / macroRun; ++s) {
      Value f = memref::LoadOp::create(b, loc, components[2],
                                       ValueRange{c.row, runColumn(macro, s)});
      Value bits16 = arith::BitcastOp::create(b, loc, b.getI16Type(), f);
      factors.push_back(numerics::bf16Decode(
          ops, arith::ExtUIOp::create(b, loc, b.getI32Type(), bits16)));
    }
    for (int64_t s = 0; s < chunk / run; ++s) {
      Value byte = loadByte(b, loc, components[1], c.row, runColumn(block, s));
      for (int64_t j = s * run; j < (s + 1) * run; ++j)
        values[j] =
            numerics::macroDequant(ops, codes[j], byte, factors[j / macroRun]);
    }
  } else {
    // HiF4: one metadata word per 64; element j of 8-block i (i = col mod
    // 64 / 8 + ...) reads level bits 8 + i and 16 + (2i + h).
    Value word = memref::LoadOp::create(b, loc, components[1],
                                        ValueRange{c.row, runColumn(block, 0)});
    Value sf = numerics::e6m2Decode(ops, word);
    Value firstEight = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(),
        arith::DivUIOp::create(
            b, loc,
            arith::RemUIOp::create(b, loc, c.col, indexConst(b, loc, block)),
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
  }
  emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
    storeF32AsFloats(b, loc, values, out, c.row, c.col);
  });
  return KernelPlan{{launch}, {}};
}
