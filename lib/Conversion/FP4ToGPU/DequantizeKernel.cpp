//===- DequantizeKernel.cpp - dequantizer ---------------------------------===//
//
// fp4.dequantize of a [R, K] quantized tensor (blocked along K) to bf16,
// f16 or f32: thread g owns chunk g of E consecutive elements of the
// flattened tensor (ElementwiseKernel.h; E = 16 when it fits: an 8-byte
// code load and, for bf16, a 32-byte store per thread).
//
// Each value is the scheme's dequantize rule of the numerics library
// (mxfp4Dequant, nvfp4Dequant, macroDequant, hif4Dequant), emitted by the
// scheme's GPU model (buildGPUDequantizeChunk) on the same code and scale
// values the CPU lowering reads, so the f32 value is the
// reference's bit for bit; it is rounded once to the result type with
// roundToBF16 / roundToF16, the rules of castFloatTensor. The kernel is
// memory-bound: the scale of a block is one (cached) byte load per thread.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseKernel.h"
#include "fp4/Conversion/FP4ToGPU/KernelBuilders.h"

#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fp4;

FailureOr<KernelPlan> mlir::fp4::buildDequantizeKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const DequantizeKernelSpec &spec, const GPUTarget &target,
    GPUConfigAttr config, std::string &reason) {
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
  auto scheme = dyn_cast<SchemeGPULoweringAttrInterface>(type.getScheme());
  if (!scheme) {
    reason = "unsupported quantization scheme";
    return failure();
  }
  const int64_t block = scheme.getGPUScaleBlock();
  const int64_t macro = scheme.getGPUMacroBlock(spec.cols);
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

  int64_t blockDim = config.getThreads();
  int64_t numChunks = spec.rows * spec.cols / chunk;
  KernelLaunch launch;
  launch.block = {blockDim, 1, 1};
  launch.grid = {llvm::divideCeilSigned(numChunks, blockDim), 1, 1};
  launch.variant = ("dequantize_" + scheme.getGPUVariantName()).str();
  for (const KernelArg &a : spec.args)
    launch.argNames.push_back(a.name);
  launch.func =
      createKernelShell(builder, loc, module, name, spec.args, launch.block);

  OpBuilder::InsertionGuard guard(builder);
  Block &body = launch.func.getBody().front();
  builder.setInsertionPoint(body.getTerminator());
  OpBuilder &b = builder;
  ValueRange components = body.getArguments().drop_back();
  Value out = body.getArguments().back();

  Value gid = emitGlobalThreadId(b, loc, blockDim);
  ChunkCoords c = emitFlatChunkCoords(b, loc, gid, spec.rows, spec.cols, chunk);
  SmallVector<Value> codes =
      loadCodes(b, loc, components[0], c.row, c.col, chunk);

  SmallVector<Value> values = scheme.buildGPUDequantizeChunk(
      b, loc, components, codes, c.row, c.col, type);
  emitIf(b, loc, c.valid, [&](OpBuilder &, Location) {
    storeF32AsFloats(b, loc, values, out, c.row, c.col);
  });
  return KernelPlan{{launch}, {}};
}
