//===- CorrectionProductKernel.cpp - fp4.correction_matmul as a gather ----===//
//
// One thread per output (m, n), f32 accumulation from acc (or 0), one
// multiply and one add per stored entry (no FMA), rounded once:
//   dense  x dense : over k                        lhs[m,k] * rhs[n,k]
//   sparse x dense : over the lhs blocks c, slots s  vL[m,c,s] * rhs[n,col]
//   dense  x sparse: over the rhs blocks c, slots t  lhs[m,col] * vR[n,c,t]
//   sparse x sparse: over the entries of the side with fewer per row; the
//                    other side's block holding col contributes the slot
//                    whose index is col's in-block position
// with col = c * B + clamp(index, 0, B - 1). These are the loops and the
// order of the CPU lowering (CorrectionMatmulLowering.cpp), so the result
// is bit-exact with it, except sparse x sparse with a sparser rhs, which
// sums the same products in the rhs's order (within f32 rounding of it).
//
// The sparse side's entries of row m (n) are the same for every thread of
// a CTA row (column): broadcast loads; the dense partner is a gather of
// one element per entry, read through ElementAccess when quantized.
// Batched (rank-3) products stay on the host.
//
//===----------------------------------------------------------------------===//

#include "CorrectionKernels.h"
#include "CorrectionOperandReader.h"
#include "ElementAccess.h"
#include "ElementwiseKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp4;

int64_t CorrectionOperand::numArgs() const {
  if (isSparse())
    return 2;
  if (quantized)
    return static_cast<int64_t>(quantized.getComponentTypes().size());
  return 1;
}

Value CorrectionOperandReader::dense(OpBuilder &b, Location loc, Value row,
                                     Value col) const {
  if (spec.quantized)
    return loadDequantizedElement(b, loc, spec.quantized, memrefs, row, col);
  return loadAsF32(b, loc, memrefs[0], {row, col});
}

std::pair<Value, Value>
CorrectionOperandReader::entry(OpBuilder &b, Location loc, Value row,
                               Value block, Value slot) const {
  Value value = loadAsF32(b, loc, memrefs[0], {row, block, slot});
  Value index8 =
      memref::LoadOp::create(b, loc, memrefs[1], ValueRange{row, block, slot});
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index8);
  return {value, index};
}

Value CorrectionOperandReader::column(OpBuilder &b, Location loc, Value block,
                                      Value index) const {
  Value clamped = arith::MaxSIOp::create(b, loc, index, indexConst(b, loc, 0));
  clamped = arith::MinSIOp::create(b, loc, clamped,
                                   indexConst(b, loc, spec.blockSize - 1));
  Value base =
      arith::MulIOp::create(b, loc, block, indexConst(b, loc, spec.blockSize));
  return arith::AddIOp::create(b, loc, base, clamped);
}

namespace {

Value multiplyAdd(OpBuilder &b, Location loc, Value acc, Value x, Value y) {
  Value product = arith::MulFOp::create(b, loc, x, y);
  return arith::AddFOp::create(b, loc, acc, product);
}

/// for c in [0, blocks) { for s in [0, k) body(c, s, acc) } over an f32 sum.
Value sumOverEntries(OpBuilder &b, Location loc, Value init, int64_t blocks,
                     int64_t k,
                     function_ref<Value(OpBuilder &, Location, Value, Value,
                                        Value)>
                         body) {
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, blocks),
      indexConst(b, loc, 1), ValueRange{init},
      [&](OpBuilder &lb, Location l, Value c, ValueRange iter) {
        Value acc = iter[0];
        for (int64_t s = 0; s < k; ++s)
          acc = body(lb, l, c, indexConst(lb, l, s), acc);
        scf::YieldOp::create(lb, l, ValueRange{acc});
      });
  return loop.getResult(0);
}

} // namespace

FailureOr<KernelPlan> mlir::fp4::buildCorrectionProductKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    const CorrectionProductKernelSpec &spec, std::string &reason) {
  for (const CorrectionOperand *side : {&spec.lhs, &spec.rhs})
    if (side->quantized &&
        !isGPUReadableQuantizedType(side->quantized, reason))
      return failure();
  OpBuilder::InsertionGuard guard(builder);
  ThreadPerItem kernel = createThreadPerItemKernel(
      builder, loc, module, name, spec.args, spec.m * spec.n,
      "correction_gather");
  OpBuilder &b = builder;
  ValueRange args = kernel.launch.func.getBody().front().getArguments();
  CorrectionOperandReader lhs{spec.lhs, args.take_front(spec.lhs.numArgs())};
  CorrectionOperandReader rhs{spec.rhs,
                    args.slice(spec.lhs.numArgs(), spec.rhs.numArgs())};
  Value m, n;
  std::tie(m, n) = splitItem(b, loc, kernel.gid, spec.n);
  Value init = spec.accElementType
                   ? loadAsF32(b, loc, args[args.size() - 2], {m, n})
                   : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f))
                         .getResult();

  Value sum;
  if (!lhs.spec.isSparse() && !rhs.spec.isSparse()) {
    auto loop = scf::ForOp::create(
        b, loc, indexConst(b, loc, 0), indexConst(b, loc, spec.k),
        indexConst(b, loc, 1), ValueRange{init},
        [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
          Value a = lhs.dense(lb, l, m, k), w = rhs.dense(lb, l, n, k);
          scf::YieldOp::create(lb, l,
                               ValueRange{multiplyAdd(lb, l, iter[0], a, w)});
        });
    sum = loop.getResult(0);
  } else if (!rhs.spec.isSparse() || !lhs.spec.isSparse()) {
    // One sparse side drives the loop; the other is gathered at col.
    bool lhsDrives = lhs.spec.isSparse();
    const CorrectionOperandReader &sparse = lhsDrives ? lhs : rhs;
    const CorrectionOperandReader &dense = lhsDrives ? rhs : lhs;
    Value sparseRow = lhsDrives ? m : n, denseRow = lhsDrives ? n : m;
    sum = sumOverEntries(
        b, loc, init, spec.k / sparse.spec.blockSize, sparse.spec.k,
        [&](OpBuilder &lb, Location l, Value c, Value s, Value acc) {
          auto [value, index] = sparse.entry(lb, l, sparseRow, c, s);
          Value col = sparse.column(lb, l, c, index);
          Value other = dense.dense(lb, l, denseRow, col);
          return lhsDrives ? multiplyAdd(lb, l, acc, value, other)
                           : multiplyAdd(lb, l, acc, other, value);
        });
  } else {
    // Both sparse: the side with fewer entries per row drives.
    int64_t lhsEntries = spec.k / lhs.spec.blockSize * lhs.spec.k;
    int64_t rhsEntries = spec.k / rhs.spec.blockSize * rhs.spec.k;
    bool lhsDrives = lhsEntries <= rhsEntries;
    const CorrectionOperandReader &drive = lhsDrives ? lhs : rhs;
    const CorrectionOperandReader &probe = lhsDrives ? rhs : lhs;
    Value driveRow = lhsDrives ? m : n, probeRow = lhsDrives ? n : m;
    sum = sumOverEntries(
        b, loc, init, spec.k / drive.spec.blockSize, drive.spec.k,
        [&](OpBuilder &lb, Location l, Value c, Value s, Value acc) {
          auto [value, index] = drive.entry(lb, l, driveRow, c, s);
          Value col = drive.column(lb, l, c, index);
          Value probeBlock = arith::DivUIOp::create(
              lb, l, col, indexConst(lb, l, probe.spec.blockSize));
          Value inBlock = arith::RemUIOp::create(
              lb, l, col, indexConst(lb, l, probe.spec.blockSize));
          for (int64_t t = 0; t < probe.spec.k; ++t) {
            auto [other, otherIndex] =
                probe.entry(lb, l, probeRow, probeBlock, indexConst(lb, l, t));
            Value hit = arith::CmpIOp::create(lb, l, arith::CmpIPredicate::eq,
                                              otherIndex, inBlock);
            Value next = lhsDrives ? multiplyAdd(lb, l, acc, value, other)
                                   : multiplyAdd(lb, l, acc, other, value);
            acc = arith::SelectOp::create(lb, l, hit, next, acc);
          }
          return acc;
        });
  }
  memref::StoreOp::create(b, loc,
                          roundFromF32(b, loc, sum, spec.resultElementType),
                          args.back(), ValueRange{m, n});
  return KernelPlan{{kernel.launch}, {}};
}
