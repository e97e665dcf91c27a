//===- CorrectedProduct.h - a product as a sum of correction terms -*- C++
//-*-===//
//
// Private to FP4Transforms: the IR shape fp4-outlier-fallback and
// fp4-residual build and extend. A corrected product approximates
// y = x W^T by y = (sum of lhs parts)(sum of rhs parts)^T, written out term
// by term, every term one (lhs part, rhs part) pair:
//
//   %p0 = fp4.matmul %A, %B                               -> f32
//   %p1 = fp4.correction_matmul (%vx, %ix block 32), (%B) acc %p0   -> f32
//   %p2 = fp4.correction_matmul (%A), (%vw, %iw block 32) acc %p1   -> f32
//   %y  = fp4.correction_matmul (%vx, %ix block 32), (%vw, %iw block 32)
//             acc %p2                                     -> T
//
// The lhs parts are {A, (vx, ix)}, the rhs parts {B, (vw, iw)}. The fp4.matmul
// is the first term; each fp4.correction_matmul accumulates onto the
// previous term (its `acc`, the previous term's only user). All terms but
// the last produce f32, so the sum is rounded once, to the type T of the
// original product.
//
// A transform that splits a dense part D into D' + S replaces D by D' in
// every term and adds the terms (S, q) for every part q of the other side;
// one that adds a part S adds those terms. By distributivity the sum stays
// the product of the two sides, whatever transforms ran before. Parts pair
// only with parts of the same K (the static-channel split of outlier
// fallback makes parts over the gathered channels, whose cross terms with
// the zeroed full-width parts vanish).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_LIB_DIALECT_FP4_TRANSFORMS_CORRECTEDPRODUCT_H
#define FP4_LIB_DIALECT_FP4_TRANSFORMS_CORRECTEDPRODUCT_H

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp4::detail {

/// One summand of one side of a corrected product.
struct ProductPart {
  /// A dense operand (float or quantized tensor); null for a sparse part.
  Value dense;
  /// A block-sparse part: values, indices and block size.
  Value values, indices;
  int64_t blockSize = 0;

  static ProductPart getDense(Value dense) { return {dense, {}, {}, 0}; }
  static ProductPart getSparse(Value values, Value indices, int64_t blockSize) {
    return {Value(), values, indices, blockSize};
  }
  bool isSparse() const { return !dense; }
  /// The K of the dense tensor the part stands for.
  int64_t getK() const;
  /// The fp4.correction_matmul operands of the part.
  SmallVector<Value> getOperands() const;
  bool operator==(const ProductPart &other) const {
    return dense == other.dense && values == other.values &&
           indices == other.indices && blockSize == other.blockSize;
  }
};

enum class ProductSide { Lhs = 0, Rhs = 1 };

/// The part a term (fp4.matmul or fp4.correction_matmul) has on `side`.
ProductPart getTermPart(Operation *term, ProductSide side);

class CorrectedProduct {
public:
  /// The product whose first term is `matmul`: the chain of
  /// fp4.correction_matmul ops each taking the previous term as `acc` and
  /// being its only user.
  explicit CorrectedProduct(MatmulOp matmul);

  MatmulOp getMatmul() const { return matmul; }
  /// All terms, the fp4.matmul first.
  ArrayRef<Operation *> getTerms() const { return terms; }
  /// The distinct parts of one side, in order of first use (the fp4.matmul
  /// operand first).
  SmallVector<ProductPart> getParts(ProductSide side) const;

  /// Replaces `from` by `to` on `side` in every term.
  void replacePart(RewriterBase &rewriter, ProductSide side,
                   const ProductPart &from, const ProductPart &to);
  /// Adds the terms (part, q) (or (q, part) for the rhs) for every part q of
  /// the other side with the same K, at the end of the chain.
  void addPart(RewriterBase &rewriter, ProductSide side,
               const ProductPart &part);
  /// Adds the single term (lhs, rhs) at the end of the chain.
  void addTerm(RewriterBase &rewriter, const ProductPart &lhs,
               const ProductPart &rhs);

private:
  MatmulOp matmul;
  SmallVector<Operation *> terms;
};

/// The fp4.quantize, fp4.split_outliers, fp4.split_channels and fp4.residual
/// ops under `root`
/// that have users. A pass rewriting corrected products collects them
/// first and afterwards erases, with eraseOpsMadeDead, those it left without
/// users (a quantize replaced by the quantize of a rest, a stale residual),
/// so that fp4-fold-constants does not fold them for nothing.
SmallVector<Operation *> collectLiveCorrectionInputs(Operation *root);
void eraseOpsMadeDead(ArrayRef<Operation *> ops);

} // namespace mlir::fp4::detail

#endif // FP4_LIB_DIALECT_FP4_TRANSFORMS_CORRECTEDPRODUCT_H
