//===- FuseElementwise.cpp - fp4-fuse-elementwise --------------------------===//
//
// Upstream's elementwise fusion, aimed: only elementwise into elementwise,
// only single-use producers (no recomputation, no code growth), so the pass
// shrinks the IR (fewer loop nests for the LLVM JIT to compile) and the
// memory traffic without touching reductions or contractions.
//
//===----------------------------------------------------------------------===//

#include "fp4/Transforms/PassStatistics.h"
#include "fp4/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4FUSEELEMENTWISE
#include "fp4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;

namespace {

bool isElementwise(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics() &&
         generic.getNumLoops() == generic.getNumParallelLoops();
}

struct FuseElementwisePass
    : fp4::impl::FP4FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::ControlFusionFn control = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      return isElementwise(producer) && isElementwise(operand->getOwner()) &&
             producer->hasOneUse();
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    auto count = [&] {
      int64_t n = 0;
      getOperation().walk([&](linalg::GenericOp) { ++n; });
      return n;
    };
    int64_t before = count();
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
    // Each fusion replaces a producer and its consumer by one op.
    int64_t fused = before - count();
    if (fused > 0)
      fp4::addToStatistic(*this, numFused, "fused",
                          "Producer ops fused into a consumer", fused);
  }
};

} // namespace
