//===- RotateLowering.cpp - fp4.rotate and fp4.permute to linalg ----------===//
//
// Rewrites (x moved to the axis-last view [outer..., n] and extended to f32;
// d = size, s = stride):
//
//   fp4.rotate  ->  signs:  view [outer..., n/(d s), d, s],
//                           u = hadamardApplySign(x, negative[i])
//                           (randomized only; first when forward, last when
//                           inverse; `negative` is a constant d x i8 table
//                           computed with hadamardSignNegative)
//                   stage h = 1, 2, ..., d/2: view [outer..., n/(2hs), 2, hs],
//                           u'[a, p, c] = hadamardButterfly(u[a, 0, c],
//                                                           u[a, 1, c], p == 1)
//                           (the last stage also applies hadamardNormalize)
//                   then the result element type and the logical layout.
//   fp4.permute ->  result[..., i, ...] = input[..., perm[i], ...]: a
//                   linalg.generic reading a constant index table and
//                   tensor.extract-ing the input.
//
// The stages are the butterfly network of fp4/Numerics/Hadamard.h in its
// order, one linalg.generic per stage, so the compiled code computes the
// same f32 operations as the constant folder.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Numerics/Hadamard.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

/// linalg.transpose of `t` by `perm` (nothing for the identity).
static Value transposeTensor(OpBuilder &b, Location loc, Value t,
                             ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return t;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> permuted;
  for (int64_t p : perm)
    permuted.push_back(sizes[p]);
  Value init = tensor::EmptyOp::create(
      b, loc, permuted, cast<RankedTensorType>(t.getType()).getElementType());
  return linalg::TransposeOp::create(b, loc, t, init, perm).getResult()[0];
}

/// The permutation moving `axis` of a rank-`rank` tensor last.
static SmallVector<int64_t> axisLastPermutation(int64_t rank, int64_t axis) {
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  return perm;
}

static SmallVector<int64_t> invertPermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return inverse;
}

namespace {
/// The axis-last view [outer..., n] of the rotated tensor and the reshapes
/// of its last dimension that the stages use.
class AxisLastView {
public:
  AxisLastView(OpBuilder &b, Location loc, Value t) : b(b), loc(loc) {
    auto type = cast<RankedTensorType>(t.getType());
    numOuter = type.getRank() - 1;
    length = type.getShape().back();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
    outerSizes.assign(sizes.begin(), sizes.end() - 1);
    outerShape.assign(type.getShape().begin(), type.getShape().end() - 1);
  }

  /// [outer..., n] -> [outer..., n / prod(factors), factors...].
  Value split(Value t, ArrayRef<int64_t> factors) const {
    int64_t product = 1;
    for (int64_t f : factors)
      product *= f;
    SmallVector<OpFoldResult> sizes(outerSizes);
    SmallVector<int64_t> shape(outerShape);
    sizes.push_back(b.getIndexAttr(length / product));
    shape.push_back(length / product);
    for (int64_t f : factors) {
      sizes.push_back(b.getIndexAttr(f));
      shape.push_back(f);
    }
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(t.getType()).getElementType());
    return tensor::ExpandShapeOp::create(
        b, loc, type, t, reassociation(factors.size() + 1), sizes);
  }

  /// Inverse of split for `numTrailing` = factors.size() + 1 dimensions.
  Value merge(Value t, int64_t numTrailing) const {
    return tensor::CollapseShapeOp::create(b, loc, t,
                                           reassociation(numTrailing));
  }

  /// An all-parallel generic over the shape of `like` (a split view) with
  /// f32 result, whose body is `body`.
  Value
  generic(Value like, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
          function_ref<Value(OpBuilder &, Location, ValueRange)> body) const {
    auto type = cast<RankedTensorType>(like.getType());
    Value init = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, like), type.getElementType());
    SmallVector<AffineMap> maps(inputMaps);
    maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto op = linalg::GenericOp::create(
        b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(nb, l, body(nb, l, args));
        });
    return op.getResult(0);
  }

  /// Map over the outer loops plus `numTrailing` loops selecting the given
  /// trailing results (a loop index, or a constant when negative: -1 - c).
  AffineMap map(int64_t numTrailing, ArrayRef<int64_t> trailing) const {
    SmallVector<AffineExpr> results;
    for (int64_t d = 0; d < numOuter; ++d)
      results.push_back(b.getAffineDimExpr(d));
    for (int64_t t : trailing)
      results.push_back(t >= 0 ? b.getAffineDimExpr(numOuter + t)
                               : b.getAffineConstantExpr(-1 - t));
    return AffineMap::get(numOuter + numTrailing, 0, results, b.getContext());
  }

  int64_t getNumOuter() const { return numOuter; }

private:
  SmallVector<ReassociationIndices> reassociation(int64_t numTrailing) const {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < numOuter; ++d)
      groups.push_back({d});
    ReassociationIndices last;
    for (int64_t d = 0; d < numTrailing; ++d)
      last.push_back(numOuter + d);
    groups.push_back(last);
    return groups;
  }

  OpBuilder &b;
  Location loc;
  int64_t numOuter;
  int64_t length;
  SmallVector<OpFoldResult> outerSizes;
  SmallVector<int64_t> outerShape;
};

struct RotateOpLowering : public OpConversionPattern<RotateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RotateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    numerics::HadamardParams params = op.getHadamardParams();
    const int64_t d = params.size, s = params.stride;
    auto resultType = op.getResult().getType();
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> toLast = axisLastPermutation(rank, op.getAxis());

    Value x = castFloatTensor(rewriter, loc, adaptor.getInput(),
                              rewriter.getF32Type());
    x = transposeTensor(rewriter, loc, x, toLast);
    AxisLastView view(rewriter, loc, x);

    // Sign flips on the view [outer..., n/(d s), d, s], coordinate loop 1.
    auto applySigns = [&](Value t) -> Value {
      if (!params.randomized)
        return t;
      std::vector<uint8_t> negative = numerics::hadamardSigns(params.seed, d);
      SmallVector<int8_t> table(negative.begin(), negative.end());
      auto tableType = RankedTensorType::get({d}, rewriter.getI8Type());
      Value signs = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(tableType, ArrayRef(table)));
      Value v = view.split(t, {d, s});
      AffineMap tableMap =
          AffineMap::get(view.getNumOuter() + 3, 0,
                         rewriter.getAffineDimExpr(view.getNumOuter() + 1));
      v = view.generic(v, {v, signs}, {view.map(3, {0, 1, 2}), tableMap},
                       [&](OpBuilder &nb, Location l, ValueRange args) {
                         ArithOps ops(nb, l);
                         Value negativeFlag = arith::CmpIOp::create(
                             nb, l, arith::CmpIPredicate::ne, args[1],
                             arith::ConstantIntOp::create(nb, l, 0, 8));
                         return numerics::hadamardApplySign(ops, args[0],
                                                            negativeFlag);
                       });
      return view.merge(v, 3);
    };

    if (!params.inverse)
      x = applySigns(x);
    for (int64_t h = 1; h < d; h *= 2) {
      bool last = 2 * h == d;
      Value v = view.split(x, {2, h * s});
      // Loops [outer..., a, p, c]: the pair (a, 0, c), (a, 1, c).
      v = view.generic(
          v, {v, v}, {view.map(3, {0, -1, 2}), view.map(3, {0, -2, 2})},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            ArithOps ops(nb, l);
            Value p = linalg::IndexOp::create(nb, l, view.getNumOuter() + 1);
            Value isUpper =
                arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, p,
                                      arith::ConstantIndexOp::create(nb, l, 0));
            Value y =
                numerics::hadamardButterfly(ops, args[0], args[1], isUpper);
            return last ? numerics::hadamardNormalize(ops, y, d) : y;
          });
      x = view.merge(v, 3);
    }
    if (params.inverse)
      x = applySigns(x);

    x = transposeTensor(rewriter, loc, x, invertPermutation(toLast));
    x = castFloatTensor(rewriter, loc, x, resultType.getElementType());
    if (x.getType() != resultType)
      x = tensor::CastOp::create(rewriter, loc, resultType, x);
    rewriter.replaceOp(op, x);
    return success();
  }
};

struct PermuteOpLowering : public OpConversionPattern<PermuteOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    ArrayRef<int64_t> perm = op.getPermutation();
    auto tableType = RankedTensorType::get({static_cast<int64_t>(perm.size())},
                                           rewriter.getI64Type());
    Value table = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(tableType, perm));
    Value init = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, input),
        type.getElementType());
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, rewriter.getAffineDimExpr(axis)),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, ValueRange{table},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> indices;
          for (int64_t dim = 0; dim < rank; ++dim)
            indices.push_back(
                dim == axis ? arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                         args[0])
                                  .getResult()
                            : linalg::IndexOp::create(b, l, dim).getResult());
          linalg::YieldOp::create(
              b, l,
              tensor::ExtractOp::create(b, l, input, indices).getResult());
        });
    Value result = generic.getResult(0);
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::fp4::detail::populateRotateOpLowering(const TypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns.add<RotateOpLowering, PermuteOpLowering>(converter,
                                                    patterns.getContext());
}
