//===- CorrectedProduct.cpp - a product as a sum of correction terms ------===//
//
// Every change is in place or an insertion after the matched fp4.matmul: the
// patterns run under walkAndApplyPatterns, which visits the ops after the
// matched one next and must not find them erased. The chain order, and with
// it the f32 summation order, is kept.
//
//===----------------------------------------------------------------------===//

#include "CorrectedProduct.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

int64_t ProductPart::getK() const {
  if (dense)
    return cast<ShapedType>(dense.getType()).getShape().back();
  ArrayRef<int64_t> shape = cast<ShapedType>(values.getType()).getShape();
  int64_t blocks = shape[shape.size() - 2];
  return ShapedType::isDynamic(blocks) ? ShapedType::kDynamic
                                       : blocks * blockSize;
}

SmallVector<Value> ProductPart::getOperands() const {
  if (dense)
    return {dense};
  return {values, indices};
}

ProductPart mlir::fp4::detail::getTermPart(Operation *term, ProductSide side) {
  bool lhs = side == ProductSide::Lhs;
  if (auto matmul = dyn_cast<MatmulOp>(term))
    return ProductPart::getDense(lhs ? matmul.getLhs() : matmul.getRhs());
  auto correction = cast<CorrectionMatmulOp>(term);
  ValueRange operands = lhs ? correction.getLhs() : correction.getRhs();
  if (operands.size() == 1)
    return ProductPart::getDense(operands[0]);
  std::optional<int64_t> blockSize =
      lhs ? correction.getLhsBlockSize() : correction.getRhsBlockSize();
  return ProductPart::getSparse(operands[0], operands[1], *blockSize);
}

static std::optional<int64_t> blockSizeOf(const ProductPart &part) {
  if (!part.isSparse())
    return std::nullopt;
  return part.blockSize;
}

/// acc + lhs * rhs^T as an fp4.correction_matmul of result type `type`.
static CorrectionMatmulOp buildTerm(RewriterBase &rewriter, Location loc,
                                    const ProductPart &lhs,
                                    const ProductPart &rhs, Value acc,
                                    Type type) {
  MLIRContext *ctx = rewriter.getContext();
  auto blockAttr = [&](const ProductPart &part) -> IntegerAttr {
    std::optional<int64_t> size = blockSizeOf(part);
    return size ? IntegerAttr::get(IntegerType::get(ctx, 64), *size)
                : IntegerAttr();
  };
  return CorrectionMatmulOp::create(rewriter, loc, type, lhs.getOperands(),
                                    rhs.getOperands(), acc, blockAttr(lhs),
                                    blockAttr(rhs));
}

CorrectedProduct::CorrectedProduct(MatmulOp matmul) : matmul(matmul) {
  terms.push_back(matmul);
  Value last = matmul.getResult();
  while (last.hasOneUse()) {
    auto next = dyn_cast<CorrectionMatmulOp>(*last.getUsers().begin());
    if (!next || next.getAcc() != last)
      break;
    terms.push_back(next);
    last = next.getResult();
  }
}

SmallVector<ProductPart> CorrectedProduct::getParts(ProductSide side) const {
  SmallVector<ProductPart> parts;
  for (Operation *term : terms) {
    ProductPart part = getTermPart(term, side);
    if (!llvm::is_contained(parts, part))
      parts.push_back(part);
  }
  return parts;
}

void CorrectedProduct::replacePart(RewriterBase &rewriter, ProductSide side,
                                   const ProductPart &from,
                                   const ProductPart &to) {
  bool lhs = side == ProductSide::Lhs;
  for (Operation *term : terms) {
    if (!(getTermPart(term, side) == from))
      continue;
    if (auto matmul = dyn_cast<MatmulOp>(term)) {
      assert(!to.isSparse() && "the fp4.matmul operands are dense");
      rewriter.modifyOpInPlace(
          matmul, [&] { matmul->setOperand(lhs ? 0 : 1, to.dense); });
      continue;
    }
    // In place: patterns run under walkAndApplyPatterns, which must not see
    // ops after the matched one erased.
    auto correction = cast<CorrectionMatmulOp>(term);
    rewriter.modifyOpInPlace(correction, [&] {
      (lhs ? correction.getLhsMutable() : correction.getRhsMutable())
          .assign(to.getOperands());
      std::optional<int64_t> size = blockSizeOf(to);
      IntegerAttr attr =
          size ? rewriter.getI64IntegerAttr(*size) : IntegerAttr();
      if (lhs)
        correction.setLhsBlockSizeAttr(attr);
      else
        correction.setRhsBlockSizeAttr(attr);
    });
  }
}

void CorrectedProduct::addTerm(RewriterBase &rewriter, const ProductPart &lhs,
                               const ProductPart &rhs) {
  Operation *lastOp = terms.back();
  Value last = lastOp->getResult(0);
  auto type = cast<RankedTensorType>(last.getType());
  rewriter.setInsertionPointAfter(lastOp);
  CorrectionMatmulOp term =
      buildTerm(rewriter, matmul.getLoc(), lhs, rhs, last, type);
  // The partial sums stay f32; only the new last term rounds to the
  // product's type.
  Type f32 = rewriter.getF32Type();
  if (type.getElementType() != f32)
    rewriter.modifyOpInPlace(lastOp, [&] { last.setType(type.clone(f32)); });
  rewriter.replaceAllUsesExcept(last, term.getResult(), term);
  terms.push_back(term);
}

void CorrectedProduct::addPart(RewriterBase &rewriter, ProductSide side,
                               const ProductPart &part) {
  bool lhs = side == ProductSide::Lhs;
  for (const ProductPart &other :
       getParts(lhs ? ProductSide::Rhs : ProductSide::Lhs)) {
    // A dynamic K (a float operand) matches: fp4.matmul checked it.
    int64_t k = part.getK(), otherK = other.getK();
    if (k != otherK && !ShapedType::isDynamic(k) &&
        !ShapedType::isDynamic(otherK))
      continue;
    if (lhs)
      addTerm(rewriter, part, other);
    else
      addTerm(rewriter, other, part);
  }
}

SmallVector<Operation *>
mlir::fp4::detail::collectLiveCorrectionInputs(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<QuantizeOp, SplitOutliersOp, SplitChannelsOp, ResidualOp>(op) &&
        !op->use_empty())
      ops.push_back(op);
  });
  return ops;
}

void mlir::fp4::detail::eraseOpsMadeDead(ArrayRef<Operation *> ops) {
  // A dead residual may be the last user of a dead quantize: erase users
  // first (later ops first), until nothing changes.
  llvm::SmallPtrSet<Operation *, 16> erased;
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *op : llvm::reverse(ops)) {
      if (erased.contains(op) || !op->use_empty())
        continue;
      erased.insert(op);
      op->erase();
      changed = true;
    }
  }
}
