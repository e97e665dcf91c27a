//===- PermutationFolding.cpp - move permutations into producers' weights -===//
//
// A channel permutation of an activation produced by a matmul with a
// constant weight costs nothing at run time if it is applied to the weight's
// rows instead (x = z V^T, so x[.., P] = z (V[P, :])^T):
//
//   %x = fp4.matmul %z, (fp4.quantize %v) : ... -> tensor<MxNxf32>
//   %p = fp4.permute %x axis 1 permutation [P]
// becomes
//   %vp = fp4.permute %v axis 0 permutation [P]
//   %p  = fp4.matmul %z, (fp4.quantize %vp)
//
// and a permutation of an elementwise op's result is applied to its operands
// instead (permute(f(a, b)) = f(permute(a), permute(b))):
//
//   %e = arith.mulf %a, %b : tensor<MxNxf32>         (or an elementwise
//   %p = fp4.permute %e axis 1 permutation [P]        linalg.generic)
// becomes
//   %p = arith.mulf (fp4.permute %a ...), (fp4.permute %b ...)
//
// Both only fire when the permutation is *absorbed* that way: every path
// from the permute through single-use elementwise ops ends at a constant
// (folded by fp4-fold-constants) or at such a matmul whose weight is a
// constant, so no runtime permutation is ever added. Quantized weights must
// be blocked along K with rows quantized independently (every scheme except
// NVFP4 16x16 tiles), so quantizing the permuted rows gives the permuted
// quantized rows; stochastic rounding draws other random bits for them.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fp4;

/// How deep the absorption search follows elementwise ops.
static constexpr int kMaxDepth = 16;

/// Whether `value` is a constant, possibly behind the ops fp4-fold-constants
/// reads through or computes (transposes, float casts, rotations,
/// permutations).
static bool isConstantTensor(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      if (transpose->getNumResults() != 1)
        return false;
      value = transpose.getInput();
    } else if (isa<arith::ExtFOp, arith::TruncFOp, RotateOp, PermuteOp>(def)) {
      value = def->getOperand(0);
    } else {
      break;
    }
  }
  return matchPattern(value, m_Constant());
}

/// Whether all users of `value` are `user`.
static bool onlyUsedBy(Value value, Operation *user) {
  return llvm::all_of(value.getUsers(),
                      [&](Operation *u) { return u == user; });
}

/// An elementwise op whose operands can be permuted instead of its result:
/// an op with the Elementwise trait on same-shaped tensors (arith/math on
/// tensors), or an all-parallel linalg op with identity maps whose body does
/// not read indices.
static bool isPermutableElementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() > 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return false;
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0)
    return llvm::all_of(op->getOperandTypes(), [&](Type t) {
      auto operandType = dyn_cast<RankedTensorType>(t);
      return !operandType || operandType.getShape() == type.getShape();
    });
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      !llvm::all_of(linalgOp.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  bool readsIndex = false;
  op->walk([&](linalg::IndexOp) { readsIndex = true; });
  return !readsIndex;
}

/// The weight operand of a producing matmul whose rows can take the
/// permutation: a float constant, or an fp4.quantize of one with a scheme
/// that quantizes rows independently.
static bool hasPermutableConstantWeight(MatmulOp matmul) {
  Value rhs = matmul.getRhs();
  if (auto quantized = dyn_cast<QuantizedTensorType>(rhs.getType())) {
    auto quantize = rhs.getDefiningOp<QuantizeOp>();
    return quantize && quantized.getScheme().getReferenceRowMultiple() == 1 &&
           isConstantTensor(quantize.getInput());
  }
  return isConstantTensor(rhs);
}

/// Whether permuting `value` along `axis` (for its single consumer `user`)
/// can be absorbed entirely by constants and producing matmuls' weights.
static bool isAbsorbable(Value value, int64_t axis, Operation *user,
                         int depth) {
  if (depth > kMaxDepth)
    return false;
  if (isConstantTensor(value))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || !onlyUsedBy(value, user))
    return false;
  if (auto matmul = dyn_cast<MatmulOp>(def))
    return axis == matmul.getResult().getType().getRank() - 1 &&
           hasPermutableConstantWeight(matmul);
  if (!isPermutableElementwise(def))
    return false;
  for (Value operand : def->getOperands()) {
    if (!isa<RankedTensorType>(operand.getType()))
      continue;
    // Inits of linalg ops that are only shaped storage need no permutation.
    if (operand.getDefiningOp<tensor::EmptyOp>())
      continue;
    if (!isAbsorbable(operand, axis, def, depth + 1))
      return false;
  }
  return true;
}

namespace {

struct FoldPermuteIntoProducerMatmul final : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul)
      return rewriter.notifyMatchFailure(op, "input is not an fp4.matmul");
    if (!isAbsorbable(op.getInput(), op.getAxis(), op, 0))
      return rewriter.notifyMatchFailure(
          op, "not the N axis of a single-use matmul with a constant weight "
              "whose rows are quantized independently");
    // The weight's N axis: second to last of [N, K] / [B, N, K].
    Value rhs = matmul.getRhs();
    int64_t nAxis = cast<ShapedType>(rhs.getType()).getRank() - 2;
    Value newRhs;
    if (auto quantize = rhs.getDefiningOp<QuantizeOp>()) {
      rewriter.setInsertionPoint(quantize);
      Value permuted =
          PermuteOp::create(rewriter, op.getLoc(), quantize.getInput(), nAxis,
                            op.getPermutation());
      auto fresh = QuantizeOp::create(rewriter, quantize.getLoc(),
                                      quantize.getResult().getType(), permuted);
      fresh->setDiscardableAttrs(quantize->getDiscardableAttrDictionary());
      newRhs = fresh;
    } else {
      rewriter.setInsertionPoint(matmul);
      newRhs = PermuteOp::create(rewriter, op.getLoc(), rhs, nAxis,
                                 op.getPermutation());
    }
    rewriter.setInsertionPoint(matmul);
    auto fresh =
        MatmulOp::create(rewriter, matmul.getLoc(),
                         matmul.getResult().getType(), matmul.getLhs(), newRhs);
    fresh->setDiscardableAttrs(matmul->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, fresh.getResult());
    rewriter.eraseOp(matmul);
    if (auto quantize = rhs.getDefiningOp<QuantizeOp>();
        quantize && quantize->use_empty())
      rewriter.eraseOp(quantize);
    return success();
  }
};

struct PushPermuteThroughElementwise final : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    Operation *def = op.getInput().getDefiningOp();
    if (!def || !isPermutableElementwise(def))
      return rewriter.notifyMatchFailure(op, "input is not elementwise");
    if (!isAbsorbable(op.getInput(), op.getAxis(), op, 0))
      return rewriter.notifyMatchFailure(
          op, "the permutation would not be absorbed by constants or "
              "producing matmuls' weights");
    rewriter.setInsertionPoint(def);
    IRMapping mapping;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()) ||
          operand.getDefiningOp<tensor::EmptyOp>() || mapping.contains(operand))
        continue;
      mapping.map(operand,
                  PermuteOp::create(rewriter, op.getLoc(), operand,
                                    op.getAxis(), op.getPermutation()));
    }
    Operation *clone = rewriter.clone(*def, mapping);
    rewriter.replaceOp(op, clone->getResults());
    rewriter.eraseOp(def);
    return success();
  }
};

} // namespace

void mlir::fp4::populateFP4PermutationFoldingPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldPermuteIntoProducerMatmul, PushPermuteThroughElementwise>(
      patterns.getContext());
}
