//===- ContractionLoopOrder.cpp - fp4-contraction-loop-order --------------===//
//
// A contraction lowered in its natural order (matmul: i, j, k) has a
// reduction innermost: a loop-carried floating-point sum that LLVM may only
// vectorize by reassociating, which the numerics rules forbid. Moving the
// output's unit-stride dimension innermost instead (i, k, j) gives
// independent, consecutive updates that vectorize as they are.
//
//===----------------------------------------------------------------------===//

#include "fp4/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4CONTRACTIONLOOPORDER
#include "fp4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

/// The loop to move innermost: the dimension of the init operand's last
/// result, when it is a parallel loop, every operand indexing it has it
/// last, and the innermost loop is a reduction. -1 otherwise.
int64_t innermostOutputDim(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() < 2)
    return -1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::reduction)
    return -1;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0)
    return -1;
  auto dim = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!dim || iterators[dim.getPosition()] != utils::IteratorType::parallel)
    return -1;
  int64_t pos = dim.getPosition();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [i, result] : llvm::enumerate(map.getResults())) {
      if (!result.isFunctionOfDim(pos))
        continue;
      auto d = dyn_cast<AffineDimExpr>(result);
      if (!d || i + 1 != map.getNumResults())
        return -1;
    }
  }
  return pos;
}

struct ContractionLoopOrderPass
    : fp4::impl::FP4ContractionLoopOrderBase<ContractionLoopOrderPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (innermostOutputDim(op) >= 0)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      if (succeeded(fp4::reorderContractionLoops(rewriter, op)))
        ++numInterchanged;
  }
};

} // namespace

FailureOr<linalg::GenericOp>
mlir::fp4::reorderContractionLoops(RewriterBase &rewriter, linalg::LinalgOp op) {
  int64_t pos = innermostOutputDim(op);
  if (pos < 0)
    return failure();
  rewriter.setInsertionPoint(op);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return failure();
    generic = *generalized;
  }
  // interchangeGenericOp's vector maps new loop i to old loop
  // permutation[i]: every loop but `pos` in order, then `pos`.
  SmallVector<unsigned> permutation;
  for (unsigned i = 0, e = generic.getNumLoops(); i < e; ++i)
    if (i != pos)
      permutation.push_back(i);
  permutation.push_back(pos);
  return linalg::interchangeGenericOp(rewriter, generic, permutation);
}
