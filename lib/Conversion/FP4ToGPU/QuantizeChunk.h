//===- QuantizeChunk.h - one thread's chunk of the quantize kernel -*- C++ -*-===//
//
// The quantize kernel (QuantizeKernel.cpp) maps threads to chunks of E
// consecutive elements, loads and rotates them, and hands them to the
// scheme's block algorithm (SchemeGPULoweringAttrInterface::
// buildGPUQuantizeChunk, one model per format) through QuantizeChunkContext.
// QuantizeEmitter holds the building blocks every block algorithm shares:
// block max |x| across lanes, stochastic rounding bits, scale byte stores.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_QUANTIZECHUNK_H
#define LIB_CONVERSION_FP4TOGPU_QUANTIZECHUNK_H

#include "ElementwiseKernel.h"
#include "fp4/Conversion/FP4ToGPU/SchemeGPULoweringInterface.h"

#include "fp4/Numerics/CounterRandom.h"
#include "fp4/Numerics/F32Bits.h"
#include "fp4/Numerics/IR/ArithOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>

namespace mlir::fp4 {

constexpr int64_t kQuantizeWarp = 32;

/// Threads per group of `size` elements for chunk `e` (1 when whole groups
/// sit in a chunk).
inline int64_t lanesOf(int64_t e, int64_t size) {
  return size % e == 0 ? size / e : 1;
}

inline Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
}

inline Value truncToI8(OpBuilder &b, Location loc, Value i32) {
  return arith::TruncIOp::create(b, loc, b.getI8Type(), i32);
}

/// What every kernel of one quantize op shares.
class QuantizeEmitter {
public:
  QuantizeEmitter(OpBuilder &b, Location loc, const QuantizeKernelSpec &spec,
                  int64_t chunk)
      : b(b), loc(loc), ops(b, loc), spec(spec), chunk(chunk) {}

  /// The chunk's E input values as f32, rotated (and rounded to the
  /// rotation's result type) when a rotation is fused.
  SmallVector<Value> loadChunk(Value input, Value row, Value col, Value tid) {
    SmallVector<Value> v = loadFloatsAsF32(b, loc, input, row, col, chunk);
    if (spec.rotationSize == 0)
      return v;
    rotate(v, tid);
    // The reference stores the rotation's result as its element type:
    // roundToBF16 / roundToF16 (IEEE round to nearest even), here one
    // cvt.rn instruction each way instead of the rules' integer sequences
    // (the same value for every non-NaN input; NaN stays NaN).
    Type t = spec.rotatedElementType;
    if (t && (t.isBF16() || t.isF16()))
      for (Value &x : v)
        x = arith::ExtFOp::create(
            b, loc, b.getF32Type(),
            arith::TruncFOp::create(b, loc, t, x).getResult());
    return v;
  }

  /// Position of this thread in its group of `lanes` threads (i32).
  Value lanePosition(Value tid, int64_t lanes) {
    return toI32(
        b, loc, arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, lanes)));
  }

  /// Linear index row * K + col of the chunk's first element (i64).
  Value linearBase(Value row, Value col) {
    Value linear = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, row, indexConst(b, loc, spec.cols)), col);
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), linear);
  }

  /// counterRandom bits of the element `offset` after `base` (i64), split
  /// into 32-bit halves as BlockedTensorBuilder::randomBitsAt.
  Value randomBits(uint32_t seed, Value base, int64_t offset) {
    Value idx = arith::AddIOp::create(
        b, loc, base,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), offset));
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), idx);
    Value hi = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::ShRUIOp::create(
            b, loc, idx,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32)));
    return numerics::counterRandom(ops, ops.i32(static_cast<int32_t>(seed)), lo,
                                   hi);
  }

  /// max |x| bit patterns over consecutive runs of `size` values (from 0,
  /// as the reference's reduction), one per run.
  SmallVector<Value> runAbsMaxBits(ArrayRef<Value> v, int64_t size) {
    SmallVector<Value> out;
    for (size_t s = 0; s < v.size(); s += size) {
      Value m = numerics::absBits(ops, v[s]);
      for (int64_t j = 1; j < size; ++j)
        m = numerics::maxAbsBits(ops, m, numerics::absBits(ops, v[s + j]));
      out.push_back(m);
    }
    return out;
  }

  /// Block max |x| bits of a group of `size` elements: in-thread runs
  /// (several per chunk when size < E), then xor shuffles across the lanes.
  SmallVector<Value> blockAbsMaxBits(ArrayRef<Value> v, int64_t size) {
    SmallVector<Value> runs = runAbsMaxBits(v, std::min(size, chunk));
    if (size > chunk)
      runs[0] = groupReduce(b, loc, runs[0], size / chunk, maxBits());
    return runs;
  }

  /// maxAbsBits as a reduction combiner.
  function_ref<Value(Value, Value)> maxBits() { return maxFn; }

  /// Stores one byte per block (i32 values 0..255) of the chunk into the
  /// i8 memref `scales` [R, K / size]: the group's first lane when a block
  /// spans lanes, else the chunk's bytes.
  void storeBlockBytes(ArrayRef<Value> bytes, Value scales, Value row,
                       Value col, Value tid, int64_t size) {
    Value scol = arith::DivUIOp::create(b, loc, col, indexConst(b, loc, size));
    if (size >= chunk) {
      Value lead = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, tid, indexConst(b, loc, size / chunk)),
          indexConst(b, loc, 0));
      emitIf(b, loc, lead, [&](OpBuilder &nb, Location l) {
        memref::StoreOp::create(nb, l, truncToI8(nb, l, bytes[0]), scales,
                                ValueRange{row, scol});
      });
      return;
    }
    for (auto [s, byte] : llvm::enumerate(bytes)) {
      Value c =
          s == 0 ? scol
                 : arith::AddIOp::create(b, loc, scol, indexConst(b, loc, s));
      memref::StoreOp::create(b, loc, truncToI8(b, loc, byte), scales,
                              ValueRange{row, c});
    }
  }

  OpBuilder &b;
  Location loc;
  ArithOps ops;
  const QuantizeKernelSpec &spec;
  int64_t chunk;

private:
  void rotate(SmallVector<Value> &v, Value tid);

  std::function<Value(Value, Value)> maxFn = [this](Value x, Value y) {
    return numerics::maxAbsBits(ops, x, y);
  };
};

/// One thread's chunk, as the block algorithm of a scheme sees it.
struct QuantizeChunkContext {
  QuantizeEmitter &q;
  /// The kernel (for workgroup attributions) and its CTA size.
  gpu::GPUFuncOp func;
  int64_t blockDim;
  const GPUQuantizePlan &plan;
  /// Global thread index and chunk coordinates.
  Value gid;
  ChunkCoords coords;
  /// The chunk's (rotated) input values, f32.
  ArrayRef<Value> x;
  /// The random bits of element j of the chunk (0 unless stochastic).
  function_ref<Value(int64_t)> randomBits;
  /// The tensor amax scratch word (i32 bits of an f32) when the plan asked
  /// for one.
  Value tensorAmax;
  /// The result component memrefs, in ABI order (codes first).
  ValueRange outputs;
  /// Threads sharing one ctaGroupSize group (1 when none).
  int64_t ctaGroupLanes = 1;
};

/// Where the chunk's thread is valid: stores the codes (outputs[0]), one
/// scale byte per `blockSize` elements (outputs[1]), then runs `more`.
void storeCodesAndBlockBytes(
    QuantizeChunkContext &ctx, ArrayRef<Value> codes, ArrayRef<Value> bytes,
    int64_t blockSize, function_ref<void()> more = nullptr);

/// MXFP4's element algorithm (E8M0 block scale from the block amax, codes
/// on the scaled grid) on `values`, blocks of `blockSize`: returns the
/// bytes and fills `codes`. Shared by MXFP4 and macro-scaled MXFP4
/// (defined in MXFP4GPULowering.cpp).
SmallVector<Value> emitMXBlocks(QuantizeChunkContext &ctx,
                                ArrayRef<Value> values, int64_t blockSize,
                                numerics::ScaleRounding rule,
                                SmallVectorImpl<Value> &codes);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_QUANTIZECHUNK_H
