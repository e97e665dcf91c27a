//===- RotationOps.cpp - fp4.rotate and fp4.permute -----------------------===//
//
// Verifiers, folders and canonicalization patterns of the rotation ops
// (FP4RotationOps.td). They only remove ops or make them smaller: inverse
// pairs cancel, permutations compose, splat inputs fold when the result is a
// splat. Rotating or permuting a non-splat constant is fp4-fold-constants'
// job (it runs the numerics library on the bytes, in parallel, into resource
// blobs).
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4;

#define GET_OP_CLASSES
#include "fp4/Dialect/FP4/IR/FP4RotationOps.cpp.inc"

/// Checks `axis` against the rank of `type`.
static LogicalResult verifyAxis(Operation *op, ShapedType type, int64_t axis) {
  if (axis < 0 || axis >= type.getRank())
    return op->emitOpError()
           << "axis " << axis << " is out of range for a tensor of rank "
           << type.getRank();
  if (type.isDynamicDim(axis))
    return op->emitOpError() << "axis " << axis << " must have a static size";
  return success();
}

//===----------------------------------------------------------------------===//
// RotateOp
//===----------------------------------------------------------------------===//

numerics::HadamardParams RotateOp::getHadamardParams() {
  numerics::HadamardParams params;
  params.size = getSize();
  params.stride = getStride();
  params.randomized = getSeed().has_value();
  params.seed = getSeed().value_or(0);
  params.inverse = getInverse();
  return params;
}

bool RotateOp::isInverseOf(RotateOp other) {
  return getSize() == other.getSize() && getStride() == other.getStride() &&
         getSeed() == other.getSeed() && getAxis() == other.getAxis() &&
         getInverse() != other.getInverse();
}

LogicalResult RotateOp::verify() {
  auto inputType = getInput().getType();
  auto resultType = getResult().getType();
  if (failed(
          verifyCompatibleShape(inputType.getShape(), resultType.getShape())))
    return emitOpError() << "result shape must match the input shape";
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, inputType, axis)))
    return failure();
  int64_t size = getSize(), stride = getStride();
  if (!numerics::isPowerOfTwo(size))
    return emitOpError() << "size " << size << " is not a power of two";
  if (stride < 1)
    return emitOpError() << "stride " << stride << " must be at least 1";
  int64_t minSize = stride == 1 ? numerics::kHadamardMinBlockSize : 2;
  if (size < minSize || size > numerics::kHadamardMaxSize)
    return emitOpError() << "size " << size << " is outside [" << minSize
                         << ", " << numerics::kHadamardMaxSize << "]"
                         << (stride == 1 ? " (block rotation)" : "");
  int64_t length = inputType.getDimSize(axis);
  if (length % (size * stride) != 0) {
    InFlightDiagnostic diag = emitOpError() << "size " << size;
    if (stride != 1)
      diag << " x stride " << stride << " = " << size * stride;
    return diag << " does not divide axis " << axis << " of size " << length;
  }
  return success();
}

OpFoldResult RotateOp::fold(FoldAdaptor adaptor) {
  // rotate(rotate(x, R), R^-1) -> x: the identity in exact arithmetic.
  if (auto producer = getInput().getDefiningOp<RotateOp>())
    if (isInverseOf(producer) &&
        producer.getInput().getType() == getResult().getType())
      return producer.getInput();
  return {};
}

namespace {
/// rotate(arith.constant splat) -> arith.constant splat when every element
/// of the result is the same value and that value is exact in the result
/// type (e.g. +0.0 rotated deterministically); other splats rotate into
/// non-splat tensors, which fp4-fold-constants computes. (A pattern rather
/// than a fold: the fp4 dialect has no constant materializer, and the input
/// being an arith.constant guarantees the arith dialect is loaded.)
struct FoldRotateOfSplat final : OpRewritePattern<RotateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotateOp op,
                                PatternRewriter &rewriter) const override {
    auto constant = op.getInput().getDefiningOp<arith::ConstantOp>();
    auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                          : SplatElementsAttr();
    if (!splat)
      return rewriter.notifyMatchFailure(op, "input is not a splat constant");
    auto resultType = op.getResult().getType();
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic result shape");
    // f32, bf16 and f16 extend to f32 exactly.
    APFloat input = splat.getSplatValue<APFloat>();
    bool losesInfo = false;
    input.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    numerics::HadamardParams params = op.getHadamardParams();
    SmallVector<float> group(params.size * params.stride,
                             input.convertToFloat());
    numerics::hadamardRotateRows(params, group.data(), 1, group.size());
    if (llvm::any_of(group, [&](float v) {
          return std::memcmp(&v, &group.front(), sizeof(float)) != 0;
        }))
      return rewriter.notifyMatchFailure(op, "the result is not a splat");
    APFloat result(group.front());
    result.convert(
        cast<FloatType>(resultType.getElementType()).getFloatSemantics(),
        APFloat::rmNearestTiesToEven, &losesInfo);
    if (losesInfo)
      return rewriter.notifyMatchFailure(
          op, "the result is not exact in the result element type");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, SplatElementsAttr::get(resultType, result));
    return success();
  }
};

/// permute(arith.constant splat) -> the splat.
struct FoldPermuteOfSplat final : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto constant = op.getInput().getDefiningOp<arith::ConstantOp>();
    if (!constant || !isa<SplatElementsAttr>(constant.getValue()))
      return rewriter.notifyMatchFailure(op, "input is not a splat constant");
    rewriter.replaceOp(op, constant.getResult());
    return success();
  }
};
} // namespace

void RotateOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldRotateOfSplat>(context);
}

//===----------------------------------------------------------------------===//
// PermuteOp
//===----------------------------------------------------------------------===//

LogicalResult PermuteOp::verify() {
  auto type = cast<ShapedType>(getInput().getType());
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, type, axis)))
    return failure();
  ArrayRef<int64_t> perm = getPermutation();
  int64_t length = type.getDimSize(axis);
  if (static_cast<int64_t>(perm.size()) != length)
    return emitOpError() << "permutation has " << perm.size()
                         << " entries, but axis " << axis << " has size "
                         << length;
  llvm::SmallBitVector seen(length);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= length)
      return emitOpError() << "permutation entry " << i << " is " << p
                           << ", outside [0, " << length << ")";
    if (seen.test(p))
      return emitOpError() << "permutation is not a permutation: " << p
                           << " appears twice";
    seen.set(p);
  }
  return success();
}

OpFoldResult PermuteOp::fold(FoldAdaptor adaptor) {
  // permute(permute(x, p), q) along one axis is permute(x, p o q):
  // result[i] = inner[q[i]] = x[p[q[i]]]. Updated in place.
  if (auto inner = getInput().getDefiningOp<PermuteOp>();
      inner && inner.getAxis() == getAxis()) {
    ArrayRef<int64_t> p = inner.getPermutation(), q = getPermutation();
    SmallVector<int64_t> composed;
    composed.reserve(q.size());
    for (int64_t i : q)
      composed.push_back(p[i]);
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size())))
      return getInput();
    return getResult();
  }
  if (llvm::equal(getPermutation(),
                  llvm::seq<int64_t>(0, getPermutation().size())))
    return getInput();
  return {};
}

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldPermuteOfSplat>(context);
}
