//===- ContractionToRuntimeCall.cpp - fp4-contraction-to-runtime-call -----===//
//
// Lowered to loops, a contraction is scalar-per-output code that LLVM can
// only vectorize along the output's rows (fp4-contraction-loop-order) and
// that re-reads both operands from memory for every output tile; measured
// on the MiniLM encoder it ran at under 1 GFLOP/s and, as hundreds of
// async-outlined loop nests, was most of the JIT's codegen time. A call into
// one precompiled, packed and register-tiled kernel fixes both at once. The
// kernel keeps the loops' arithmetic (acc = out; acc = acc + lhs * rhs for
// k in order, separate roundings), so this is a speed change only.
//
// The views handed to the kernel are strided memrefs built from the
// operands' own strided metadata, so any projected-permutation indexing
// (transposed operands, an operand broadcast over the batch) costs no copy.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "fp4/Transforms/PassStatistics.h"
#include "fp4/Transforms/Passes.h"
#include "fp4/Transforms/SparseProductTag.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4CONTRACTIONTORUNTIMECALL
#include "fp4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kCallee = "fp4_cpu_contract_f32";

/// Loop dimensions of a matched contraction, and which input plays the
/// kernel's lhs (the one indexed by the output's row dimension).
struct ContractionShape {
  std::optional<unsigned> batch;
  unsigned row, col, red;
  unsigned lhsInput; // 0 or 1
};

/// `out + x * y` with x, y the two inputs (either order, either side of
/// the add), no fast-math flags: the loops' exact arithmetic.
bool isMulAddBody(Block &body) {
  if (body.getNumArguments() != 3)
    return false;
  auto ops = body.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 2)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(*ops.begin());
  auto add = dyn_cast<arith::AddFOp>(*std::next(ops.begin()));
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != add.getResult())
    return false;
  if (mul.getFastmath() != arith::FastMathFlags::none ||
      add.getFastmath() != arith::FastMathFlags::none)
    return false;
  Value a0 = body.getArgument(0), a1 = body.getArgument(1),
        out = body.getArgument(2);
  bool mulOk = (mul.getLhs() == a0 && mul.getRhs() == a1) ||
               (mul.getLhs() == a1 && mul.getRhs() == a0);
  bool addOk = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
               (add.getRhs() == out && add.getLhs() == mul.getResult());
  return mulOk && addOk;
}

/// Whether the op yields `out + x * y` of any element type and flags (a
/// product the kernel might take, as opposed to another reduction).
bool looksLikeProduct(linalg::LinalgOp op) {
  if (op->getNumRegions() != 1 || op->getRegion(0).empty())
    return false;
  Block &body = op->getRegion(0).front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  Value out = body.getArguments().back(), lhs = add->getOperand(0),
        rhs = add->getOperand(1);
  Value other = lhs == out ? rhs : rhs == out ? lhs : Value();
  return other &&
         isa_and_nonnull<arith::MulFOp, arith::MulIOp>(other.getDefiningOp());
}

/// The loop dimensions a map's results name, or failure if a result is
/// not a plain dimension or a dimension repeats.
FailureOr<SmallVector<unsigned>> mapDims(AffineMap map) {
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
    return failure();
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults())
    dims.push_back(cast<AffineDimExpr>(e).getPosition());
  return dims;
}

FailureOr<ContractionShape> matchContraction(linalg::LinalgOp op,
                                             std::string &why) {
  if (!op.hasPureBufferSemantics()) {
    why = "not on buffers (run after bufferization)";
    return failure();
  }
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1) {
    why = "not two inputs and one output";
    return failure();
  }
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32()) {
      why = "an operand is not an f32 memref (the kernel is f32 only)";
      return failure();
    }
  }
  if (op->getNumRegions() != 1 || op->getRegion(0).empty() ||
      !isMulAddBody(op->getRegion(0).front())) {
    why = "the body is not `out + lhs * rhs` without fast-math flags";
    return failure();
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> reductions;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::reduction)
      reductions.push_back(i);
  if (reductions.size() != 1) {
    why = "not exactly one reduction dimension";
    return failure();
  }
  FailureOr<SmallVector<unsigned>> in0 =
      mapDims(op.getMatchingIndexingMap(op.getDpsInputOperand(0)));
  FailureOr<SmallVector<unsigned>> in1 =
      mapDims(op.getMatchingIndexingMap(op.getDpsInputOperand(1)));
  FailureOr<SmallVector<unsigned>> out =
      mapDims(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  if (failed(in0) || failed(in1) || failed(out)) {
    why = "an indexing map is not a projected permutation";
    return failure();
  }
  if (out->size() < 2 || out->size() > 3 ||
      out->size() + 1 != iterators.size()) {
    why = "the output is not [batch?, rows, cols] over every parallel "
          "dimension";
    return failure();
  }
  ContractionShape shape;
  shape.red = reductions.front();
  shape.row = (*out)[out->size() - 2];
  shape.col = (*out)[out->size() - 1];
  if (out->size() == 3)
    shape.batch = (*out)[0];
  auto has = [](ArrayRef<unsigned> dims, unsigned d) {
    return llvm::is_contained(dims, d);
  };
  if (has(*in0, shape.row) && !has(*in1, shape.row))
    shape.lhsInput = 0;
  else if (has(*in1, shape.row) && !has(*in0, shape.row))
    shape.lhsInput = 1;
  else {
    why = "the output's row dimension does not index exactly one input";
    return failure();
  }
  ArrayRef<unsigned> lhs = shape.lhsInput == 0 ? *in0 : *in1;
  ArrayRef<unsigned> rhs = shape.lhsInput == 0 ? *in1 : *in0;
  // lhs: [batch?, row, red]; rhs: [batch?, red, col]: any order in memory.
  auto onlyFrom = [&](ArrayRef<unsigned> dims,
                      std::initializer_list<unsigned> allowed) {
    for (unsigned d : dims)
      if (!llvm::is_contained(allowed, d) &&
          !(shape.batch && d == *shape.batch))
        return false;
    return true;
  };
  if (!has(lhs, shape.red) || !has(rhs, shape.red) || !has(rhs, shape.col) ||
      has(lhs, shape.col) || !onlyFrom(lhs, {shape.row, shape.red}) ||
      !onlyFrom(rhs, {shape.col, shape.red})) {
    why = "the inputs are not [batch?, rows, k] and [batch?, k, cols]";
    return failure();
  }
  return shape;
}

/// A rank-3 strided view of `buffer` whose dimension i walks loop `dims[i]`
/// (stride 0 where the buffer has no such dimension).
Value buildView(OpBuilder &b, Location loc, Value buffer,
                ArrayRef<unsigned> bufferDims, ArrayRef<unsigned> viewDims,
                ArrayRef<OpFoldResult> loopSizes, MemRefType viewType) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  SmallVector<OpFoldResult> sizes, strides;
  for (unsigned d : viewDims) {
    sizes.push_back(loopSizes[d]);
    auto it = llvm::find(bufferDims, d);
    if (it == bufferDims.end())
      strides.push_back(b.getIndexAttr(0));
    else
      strides.push_back(meta.getStrides()[it - bufferDims.begin()]);
  }
  return memref::ReinterpretCastOp::create(b, loc, viewType,
                                           meta.getBaseBuffer(),
                                           OpFoldResult(meta.getOffset()),
                                           sizes, strides);
}

struct ContractionToRuntimeCallPass
    : fp4::impl::FP4ContractionToRuntimeCallBase<
          ContractionToRuntimeCallPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    MemRefType viewType =
        fp4::detail::stridedViewType(ctx, 3, Float32Type::get(ctx));
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() > 0)
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      std::string why;
      if (op->hasAttr(fp4::kSparseProductAttr)) {
        auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
        if (!generic)
          why = "a tagged sparse product that is not a linalg.generic";
        else if (succeeded(fp4::detail::replaceSparseProductByCall(generic,
                                                                    why))) {
          fp4::addToStatistic(*this, numSparseConverted, "sparse-converted",
                              "Block-sparse correction products replaced by "
                              "a runtime call");
          continue;
        }
        fp4::addToStatistic(*this, numSkipped, "skipped",
                            "Contractions left as linalg ops (see "
                            "report-skipped)");
        if (reportSkipped)
          op->emitRemark() << "sparse product left as loops: " << why;
        continue;
      }
      FailureOr<ContractionShape> shape = matchContraction(op, why);
      if (failed(shape)) {
        // A reduction that is not a contraction (a softmax sum, a mean, a
        // top-k rank count) is not a candidate; count only ops that look
        // like products.
        if (op.getNumDpsInputs() == 2 && op.getNumReductionLoops() == 1 &&
            looksLikeProduct(op)) {
          fp4::addToStatistic(*this, numSkipped, "skipped",
                              "Contractions left as linalg ops (see "
                              "report-skipped)");
          if (reportSkipped)
            op->emitRemark() << "contraction left as loops: " << why;
        }
        continue;
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<OpFoldResult> loopSizes;
      for (Range r : op.createLoopRanges(b, loc))
        loopSizes.push_back(r.size);
      if (!shape->batch) {
        // A unit batch of stride 0: the kernel always sees rank 3.
        loopSizes.push_back(b.getIndexAttr(1));
      }
      unsigned batch = shape->batch.value_or(loopSizes.size() - 1);
      Value in0 = op.getDpsInputOperand(0)->get();
      Value in1 = op.getDpsInputOperand(1)->get();
      Value lhs = shape->lhsInput == 0 ? in0 : in1;
      Value rhs = shape->lhsInput == 0 ? in1 : in0;
      OpOperand *lhsOperand = op.getDpsInputOperand(shape->lhsInput);
      OpOperand *rhsOperand = op.getDpsInputOperand(1 - shape->lhsInput);
      SmallVector<unsigned> lhsDims =
          *mapDims(op.getMatchingIndexingMap(lhsOperand));
      SmallVector<unsigned> rhsDims =
          *mapDims(op.getMatchingIndexingMap(rhsOperand));
      SmallVector<unsigned> outDims =
          *mapDims(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
      Value a = buildView(b, loc, lhs, lhsDims, {batch, shape->row, shape->red},
                          loopSizes, viewType);
      Value bv = buildView(b, loc, rhs, rhsDims,
                           {batch, shape->red, shape->col}, loopSizes,
                           viewType);
      Value c = buildView(b, loc, op.getDpsInitOperand(0)->get(), outDims,
                          {batch, shape->row, shape->col}, loopSizes,
                          viewType);
      func::FuncOp callee = fp4::detail::declareRuntimeFunction(
          module, kCallee, {viewType, viewType, viewType});
      func::CallOp::create(b, loc, callee, ValueRange{a, bv, c});
      op->erase();
      fp4::addToStatistic(*this, numConverted, "converted",
                          "Contractions replaced by a runtime call");
    }
  }
};

} // namespace
