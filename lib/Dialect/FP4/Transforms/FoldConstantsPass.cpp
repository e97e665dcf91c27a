//===- FoldConstantsPass.cpp - the fp4-fold-constants pass ----------------===//
//
// Reports constants above max-elements, then applies
// populateFP4FoldConstantsPatterns to the fp4.quantize / fp4.dequantize ops
// only, so that the pass neither folds nor erases unrelated IR.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4FOLDCONSTANTS
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

namespace {
struct FP4FoldConstantsPass final
    : mlir::fp4::impl::FP4FoldConstantsBase<FP4FoldConstantsPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    FoldConstantsOptions options;
    options.maxElements = maxElements;
    options.foldDequantize = foldDequantize;
    populateFP4FoldConstantsPatterns(set, options);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    SmallVector<Operation *> fp4Ops;
    bool tooLarge = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<DequantizeOp>(op) && foldDequantize)
        fp4Ops.push_back(op);
      if (isa<RotateOp, PermuteOp>(op))
        fp4Ops.push_back(op);
      if (isa<SplitOutliersOp, SplitChannelsOp, ResidualOp>(op))
        fp4Ops.push_back(op);
      auto quantize = dyn_cast<QuantizeOp>(op);
      if (!quantize)
        return;
      int64_t size = quantize.getResult().getType().getNumElements();
      if (size > maxElements && isFoldableConstantQuantize(op)) {
        quantize.emitOpError()
            << "constant input has " << size
            << " elements, more than max-elements = "
            << static_cast<int64_t>(maxElements) << "; not folded";
        tooLarge = true;
      }
      fp4Ops.push_back(op);
    });
    if (tooLarge)
      return signalPassFailure();
    if (fp4Ops.empty())
      return;
    // Only the quantize / dequantize ops are visited, without folding or CSE:
    // the pass changes nothing but them and the producers they leave dead.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps)
        .enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyOpPatternsGreedily(fp4Ops, patterns, config);
  }

private:
  FrozenRewritePatternSet patterns;
};
} // namespace
