//===- FusedActivationPrep.cpp - which activation sides fuse --------------===//
//
// The analysis of FusedActivationPrep.h. The prep replaces the ops, so it
// must be able to produce every result of theirs that is still used: the
// quantized activation, the outlier and residual entries are outputs of
// the kernel (their uses after the chain's end take the new values); the
// intermediate tensors (x_rest, the rotated x) are not, so they may only
// feed the fused ops.
//
//===----------------------------------------------------------------------===//

#include "FusedActivationPrep.h"
#include "ElementAccess.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::fp4;

namespace {

bool isFloat(Type t) { return t && (t.isBF16() || t.isF16() || t.isF32()); }

Type elementOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// Whether every use of `v` is by one of `users`.
bool onlyUsedBy(Value v, const llvm::SmallPtrSetImpl<Operation *> &users) {
  return llvm::all_of(v.getUsers(),
                      [&](Operation *user) { return users.contains(user); });
}

/// Whether every use of `v` outside `fused` comes after `end` in its block
/// (the prep's outputs are defined at the chain's end).
bool usedAfter(Value v, Operation *end,
               const llvm::SmallPtrSetImpl<Operation *> &fused) {
  Block *block = end->getBlock();
  for (Operation *user : v.getUsers()) {
    if (fused.contains(user))
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || !end->isBeforeInBlock(inBlock))
      return false;
  }
  return true;
}

/// A rotation the prep can take (the quantize kernel's fused rotation).
bool isFusableRotation(RotateOp rotate, int64_t cols) {
  auto in = dyn_cast<RankedTensorType>(rotate.getInput().getType());
  int64_t d = rotate.getSize();
  return rotate.getStride() == 1 && rotate.getAxis() == 1 && in &&
         in.hasStaticShape() && in.getRank() == 2 && d > 0 && cols % d == 0 &&
         isFloat(in.getElementType()) &&
         isFloat(elementOf(rotate.getResult()));
}

} // namespace

FailureOr<FusedActivationPrep>
mlir::fp4::analyzeActivationPrep(const FusedCorrectionChain &chain,
                                 std::string &reason) {
  FusedActivationPrep prep;
  if (chain.groups.empty() || chain.groups.size() > 2 ||
      !chain.groups[0].dense) {
    reason = "the activation parts are not Q(x) (with its outliers) and a "
             "residual";
    return failure();
  }
  const FusedActivationGroup &first = chain.groups[0];
  prep.quantize = first.dense.getDefiningOp<QuantizeOp>();
  if (!prep.quantize) {
    reason = "the quantized activation is not computed here";
    return failure();
  }
  Value qx = prep.quantize.getResult();
  Value src = prep.quantize.getInput();
  Operation *end = chain.ops.back();
  llvm::SmallPtrSet<Operation *, 8> fused(chain.ops.begin(), chain.ops.end());
  fused.insert(prep.quantize);

  if (first.values) {
    prep.split = src.getDefiningOp<SplitOutliersOp>();
    if (!prep.split || prep.split.getRest() != src ||
        prep.split.getValues() != first.values ||
        prep.split.getIndices() != first.indices) {
      reason = "the activation outliers are not split here";
      return failure();
    }
  } else if (src.getDefiningOp<SplitOutliersOp>()) {
    reason = "a split's rest is quantized without its outliers";
    return failure();
  }
  if (chain.groups.size() == 2) {
    const FusedActivationGroup &second = chain.groups[1];
    if (second.values)
      prep.residual = second.values.getDefiningOp<ResidualOp>();
    if (second.dense || !prep.residual ||
        prep.residual.getValues() != second.values ||
        prep.residual.getIndices() != second.indices ||
        prep.residual.getInput() != src || prep.residual.getQuantized() != qx) {
      reason = "the second activation part is not the residual of Q(x)";
      return failure();
    }
    fused.insert(prep.residual);
  }

  // The tensor the split (or the quantizer) reads, and the rotation
  // producing it if only the fused ops read it.
  Value pre = prep.split ? prep.split.getInput() : src;
  if (prep.split) {
    fused.insert(prep.split);
    if (!onlyUsedBy(src, fused)) {
      reason = "the split's rest has other uses";
      return failure();
    }
  }
  prep.input = pre;
  if (auto rotate = pre.getDefiningOp<RotateOp>();
      rotate && isFusableRotation(rotate, chain.k)) {
    if (onlyUsedBy(pre, fused)) {
      prep.rotate = rotate;
      prep.input = rotate.getInput();
      fused.insert(rotate);
    }
  }
  auto inputType = dyn_cast<RankedTensorType>(prep.input.getType());
  if (!inputType || !inputType.hasStaticShape() || inputType.getRank() != 2 ||
      inputType.getDimSize(0) != chain.m || inputType.getDimSize(1) != chain.k) {
    reason = "the activation prep needs a static [M, K] input";
    return failure();
  }
  for (Operation *op : fused)
    if (op->getBlock() != end->getBlock()) {
      reason = "the activation ops are not in the chain's block";
      return failure();
    }
  SmallVector<Value> outputs = {qx};
  if (prep.split)
    llvm::append_range(outputs, ValueRange{prep.split.getValues(),
                                           prep.split.getIndices()});
  if (prep.residual)
    llvm::append_range(outputs, prep.residual.getResults());
  for (Value v : outputs)
    if (!usedAfter(v, end, fused)) {
      reason = "a result of the activation ops is used before the chain ends";
      return failure();
    }

  ActivationPrepKernelSpec &spec = prep.spec;
  // Results read only by the fused ops are not written.
  spec.storeSplit = prep.split && !(onlyUsedBy(prep.split.getValues(), fused) &&
                                    onlyUsedBy(prep.split.getIndices(), fused));
  spec.storeResidual =
      prep.residual && !(onlyUsedBy(prep.residual.getValues(), fused) &&
                         onlyUsedBy(prep.residual.getIndices(), fused));
  spec.rows = chain.m;
  spec.cols = chain.k;
  spec.inputElementType = inputType.getElementType();
  if (prep.rotate) {
    spec.rotationSize = prep.rotate.getSize();
    if (std::optional<uint32_t> seed = prep.rotate.getSeed())
      spec.rotationSeed = *seed;
    spec.rotationInverse = prep.rotate.getInverse();
    spec.rotatedElementType = elementOf(prep.rotate.getResult());
  }
  if (prep.split) {
    if (!isFloat(elementOf(prep.split.getValues())) ||
        !isFloat(elementOf(src))) {
      reason = "the split's parts are not float tensors";
      return failure();
    }
    spec.splitBlock = prep.split.getBlockSize();
    spec.splitK = prep.split.getK();
    spec.splitValuesType = elementOf(prep.split.getValues());
  }
  if (prep.residual) {
    if (!isFloat(elementOf(prep.residual.getValues()))) {
      reason = "the residual's values are not floats";
      return failure();
    }
    spec.residualBlock = prep.residual.getBlockSize();
    spec.residualK = prep.residual.getK();
    spec.residualValuesType = elementOf(prep.residual.getValues());
  }
  spec.quantized = cast<QuantizedTensorType>(qx.getType());
  spec.outputGroups = {static_cast<int64_t>(chain.groups.size())};
  ActivationPrepLayout layout;
  if (failed(planActivationPrep(spec, layout, reason)))
    return failure();
  return prep;
}

bool mlir::fp4::isFusedIntoActivationPrep(Operation *op,
                                          const ChainAnalysisContext &ctx) {
  // The quantized activations the op leads to.
  SmallVector<QuantizeOp> quantizers;
  auto quantizersOf = [&](Value v) {
    for (Operation *user : v.getUsers())
      if (auto q = dyn_cast<QuantizeOp>(user))
        quantizers.push_back(q);
  };
  if (auto rotate = dyn_cast<RotateOp>(op)) {
    quantizersOf(rotate.getResult());
    for (Operation *user : rotate->getUsers())
      if (auto split = dyn_cast<SplitOutliersOp>(user))
        quantizersOf(split.getRest());
  } else if (auto split = dyn_cast<SplitOutliersOp>(op)) {
    quantizersOf(split.getRest());
  } else if (auto residual = dyn_cast<ResidualOp>(op)) {
    if (auto q = residual.getQuantized().getDefiningOp<QuantizeOp>())
      quantizers.push_back(q);
  }
  for (QuantizeOp q : quantizers) {
    for (Operation *user : q->getUsers()) {
      CorrectionMatmulOp product = dyn_cast<CorrectionMatmulOp>(user);
      if (auto matmul = dyn_cast<MatmulOp>(user);
          matmul && matmul->hasOneUse())
        product = dyn_cast<CorrectionMatmulOp>(*matmul->getUsers().begin());
      if (!product)
        continue;
      std::string reason;
      FailureOr<FusedCorrectionChain> chain = analyzeCorrectionChain(
          findCorrectionChainEnd(product), ctx, reason);
      if (failed(chain))
        continue;
      FailureOr<FusedActivationPrep> prep =
          analyzeActivationPrep(*chain, reason);
      if (succeeded(prep) &&
          (prep->rotate == op || prep->split == op || prep->residual == op))
        return true;
    }
  }
  return false;
}
