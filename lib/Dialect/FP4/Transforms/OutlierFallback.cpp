//===- OutlierFallback.cpp - take outliers out of fp4.matmul operands -----===//
//
// Rewrites (block top-k, numerics.md 7), for each selected operand:
//
//   %q = fp4.quantize %x : tensor<MxKxbf16> -> !fp4.tensor<MxK, scheme>
//   %y = fp4.matmul %q, %w -> tensor<MxNxbf16>
// into
//   %rest, %v, %i = fp4.split_outliers %x block B top k
//   %q' = fp4.quantize %rest : tensor<MxKxbf16> -> !fp4.tensor<MxK, scheme>
//   %y0 = fp4.matmul %q', %w -> tensor<MxNxf32>
//   %y  = fp4.correction_matmul (%v, %i block B), (%w) acc %y0
//           -> tensor<MxNxbf16>
//
// since x = rest + scatter(v): y = Q(rest) W^T + scatter(v) W^T, the
// quantized product plus a small high-precision one. On a product that
// already has correction terms (CorrectedProduct.h), %q is replaced by %q'
// in every term and one term per part of the other side is added; a
// residual of %x against %q (fp4-residual run first) is recomputed against
// %q' so it stays the residual of what is quantized.
//
// Static channels: with the outlier channels C of the activations (from
// calibration data),
//
//   %xr, %xc = fp4.split_channels %x channels C     (%xc: [M, |C|] bf16)
//   %wr, %wc = fp4.split_channels %w channels C     (%wc: [N, |C|] bf16)
//   %y0 = fp4.matmul Q(%xr), Q(%wr)
//   %y  = fp4.correction_matmul (%xc), (%wc) acc %y0
//
// i.e. y = Q(x_in) Q(W_in)^T + x_out W_out^T (a float weight is only
// gathered). It must come first: later corrections of the rests are zero at
// the channels and pair only with parts of the full K.
//
//===----------------------------------------------------------------------===//

#include "CorrectedProduct.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

FailureOr<CorrectionOperands>
mlir::fp4::parseCorrectionOperands(StringRef text) {
  if (std::optional<CorrectionOperands> value =
          parseEnumName<CorrectionOperands>(kCorrectionOperandsNames, text))
    return *value;
  return failure();
}

FailureOr<OutlierMode> mlir::fp4::parseOutlierMode(StringRef text) {
  if (std::optional<OutlierMode> value =
          parseEnumName<OutlierMode>(kOutlierModeNames, text))
    return *value;
  return failure();
}

int64_t mlir::fp4::getOutlierBlockSize(QuantSchemeAttrInterface scheme) {
  int64_t block = scheme.getBlockSize();
  return block >= 16 ? block : scheme.getAxisMultiple();
}

static bool selects(CorrectionOperands operands, ProductSide side) {
  return operands == CorrectionOperands::Both ||
         (operands == CorrectionOperands::Activations) ==
             (side == ProductSide::Lhs);
}

/// The block size used for a quantized operand of type `type`.
static int64_t blockSizeFor(const OutlierFallbackOptions &options,
                            QuantizedTensorType type) {
  return options.blockSize ? options.blockSize
                           : getOutlierBlockSize(type.getScheme());
}

SmallVector<std::pair<Value, int64_t>>
mlir::fp4::getOutlierSplitCandidates(MatmulOp op,
                                     const OutlierFallbackOptions &options) {
  SmallVector<std::pair<Value, int64_t>> candidates;
  for (auto [side, operand] : {std::pair{ProductSide::Lhs, op.getLhs()},
                               std::pair{ProductSide::Rhs, op.getRhs()}}) {
    auto quantize = operand.getDefiningOp<QuantizeOp>();
    if (!selects(options.operands, side) || !quantize ||
        quantize.getInput().getDefiningOp<SplitOutliersOp>())
      continue;
    candidates.push_back(
        {operand, blockSizeFor(options, quantize.getResult().getType())});
  }
  return candidates;
}

namespace {

struct SplitBlockOutliers final : OpRewritePattern<MatmulOp> {
  SplitBlockOutliers(MLIRContext *context,
                     const OutlierFallbackOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    // Check every selected operand first: the rewrite is all or nothing.
    SmallVector<ProductSide> sides;
    std::string reasons;
    for (auto [side, name, operand] :
         {std::tuple{ProductSide::Lhs, StringRef("lhs"), op.getLhs()},
          std::tuple{ProductSide::Rhs, StringRef("rhs"), op.getRhs()}}) {
      if (!selects(options.operands, side))
        continue;
      std::string reason = check(operand);
      if (reason.empty()) {
        sides.push_back(side);
        continue;
      }
      if (!reasons.empty())
        reasons += "; ";
      reasons += (name + " " + reason).str();
    }
    if (sides.empty())
      return rewriter.notifyMatchFailure(op, reasons);
    for (ProductSide side : sides)
      split(rewriter, op, side);
    return success();
  }

private:
  /// Why `operand` cannot be split, or "".
  std::string check(Value operand) const {
    auto quantize = operand.getDefiningOp<QuantizeOp>();
    if (!quantize)
      return isa<QuantizedTensorType>(operand.getType())
                 ? "is not produced by fp4.quantize (a function argument or "
                   "an already folded constant)"
                 : "is not quantized";
    if (ShapedType::isDynamic(
            cast<RankedTensorType>(quantize.getInput().getType())
                .getShape()
                .back()))
      return "is quantized from a tensor with a dynamic K";
    if (quantize.getInput().getDefiningOp<SplitOutliersOp>())
      return "already has its outliers split";
    QuantizedTensorType type = quantize.getResult().getType();
    int64_t blockSize = blockSizeFor(options, type);
    if (type.getAxisSize() % blockSize != 0)
      return "has K = " + std::to_string(type.getAxisSize()) +
             ", not a multiple of the outlier block size " +
             std::to_string(blockSize);
    if (blockSize < options.k || blockSize > 128)
      return "cannot take " + std::to_string(options.k) +
             " outliers out of blocks of " + std::to_string(blockSize);
    return "";
  }

  void split(PatternRewriter &rewriter, MatmulOp op, ProductSide side) const {
    bool lhs = side == ProductSide::Lhs;
    CorrectedProduct product(op);
    Value operand = lhs ? op.getLhs() : op.getRhs();
    auto quantize = operand.getDefiningOp<QuantizeOp>();
    QuantizedTensorType type = quantize.getResult().getType();
    int64_t blockSize = blockSizeFor(options, type);
    Value x = quantize.getInput();
    auto xType = cast<RankedTensorType>(x.getType());

    // The split and the new quantize go right after the old quantize, so
    // they dominate every term that used it.
    rewriter.setInsertionPointAfter(quantize);
    Location loc = quantize.getLoc();
    SmallVector<int64_t> sideShape(xType.getShape().drop_back());
    sideShape.push_back(type.getAxisSize() / blockSize);
    sideShape.push_back(options.k);
    auto valuesType = RankedTensorType::get(sideShape, rewriter.getBF16Type());
    auto indicesType = RankedTensorType::get(sideShape, rewriter.getI8Type());
    auto splitOp = SplitOutliersOp::create(
        rewriter, loc, xType, valuesType, indicesType, x, blockSize, options.k);
    auto newQuantize =
        QuantizeOp::create(rewriter, loc, type, splitOp.getRest());
    // Keep discardable attributes (e.g. fp4.calibration).
    newQuantize->setDiscardableAttrs(quantize->getDiscardableAttrDictionary());

    // A residual of %x against %q is recomputed against the new quantize.
    for (const ProductPart &part : product.getParts(side)) {
      if (!part.isSparse())
        continue;
      auto residual = part.values.getDefiningOp<ResidualOp>();
      if (!residual || residual.getQuantized() != operand ||
          residual.getInput() != x)
        continue;
      rewriter.setInsertionPointAfter(residual);
      auto updated = ResidualOp::create(
          rewriter, residual.getLoc(), residual.getValues().getType(),
          residual.getIndices().getType(), splitOp.getRest(),
          newQuantize.getResult(), residual.getBlockSize(), residual.getK());
      product.replacePart(rewriter, side, part,
                          ProductPart::getSparse(updated.getValues(),
                                                 updated.getIndices(),
                                                 part.blockSize));
    }
    product.replacePart(rewriter, side, ProductPart::getDense(operand),
                        ProductPart::getDense(newQuantize.getResult()));
    product.addPart(rewriter, side,
                    ProductPart::getSparse(splitOp.getValues(),
                                           splitOp.getIndices(), blockSize));
  }

  OutlierFallbackOptions options;
};

} // namespace

//===----------------------------------------------------------------------===//
// Static channels
//===----------------------------------------------------------------------===//

SmallVector<int64_t> mlir::fp4::selectOutlierChannels(ArrayRef<float> samples,
                                                      int64_t channels,
                                                      double threshold) {
  SmallVector<bool> selected(channels, false);
  for (size_t i = 0; i < samples.size(); ++i)
    if (std::fabs(static_cast<double>(samples[i])) > threshold)
      selected[i % channels] = true;
  SmallVector<int64_t> result;
  for (int64_t c = 0; c < channels; ++c)
    if (selected[c])
      result.push_back(c);
  return result;
}

FailureOr<QuantizeOp>
mlir::fp4::getStaticChannelCandidate(MatmulOp op, std::string *reason) {
  auto fail = [&](const Twine &why) -> FailureOr<QuantizeOp> {
    if (reason)
      *reason = why.str();
    return failure();
  };
  auto quantize = op.getLhs().getDefiningOp<QuantizeOp>();
  if (!quantize)
    return fail(isa<QuantizedTensorType>(op.getLhs().getType())
                    ? "lhs is not produced by fp4.quantize (a function "
                      "argument or an already folded constant)"
                    : "lhs is not quantized");
  Value x = quantize.getInput();
  if (ShapedType::isDynamic(
          cast<RankedTensorType>(x.getType()).getShape().back()))
    return fail("lhs is quantized from a tensor with a dynamic K");
  if (x.getDefiningOp<SplitChannelsOp>() || x.getDefiningOp<SplitOutliersOp>())
    return fail("lhs already has outliers split");
  if (CorrectedProduct(op).getTerms().size() > 1)
    return fail("the product already has correction terms (run the static "
                "channel split before the other corrections)");
  Value rhs = op.getRhs();
  if (isa<QuantizedTensorType>(rhs.getType())) {
    auto weights = rhs.getDefiningOp<QuantizeOp>();
    if (!weights)
      return fail("rhs is quantized but not produced by fp4.quantize (its "
                  "channels cannot be taken in high precision)");
    if (ShapedType::isDynamic(
            cast<RankedTensorType>(weights.getInput().getType())
                .getShape()
                .back()))
      return fail("rhs is quantized from a tensor with a dynamic K");
  } else if (ShapedType::isDynamic(
                 cast<RankedTensorType>(rhs.getType()).getShape().back())) {
    return fail("rhs has a dynamic K");
  }
  return quantize;
}

namespace {

struct SplitStaticChannels final : OpRewritePattern<MatmulOp> {
  SplitStaticChannels(MLIRContext *context,
                      const OutlierFallbackOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<QuantizeOp> quantize = getStaticChannelCandidate(op, &reason);
    if (failed(quantize))
      return rewriter.notifyMatchFailure(op, reason);
    SmallVector<int64_t> channels = options.channelsFor
                                        ? options.channelsFor(*quantize)
                                        : SmallVector<int64_t>();
    if (channels.empty())
      return rewriter.notifyMatchFailure(
          op, "no channel of the lhs is an outlier channel");

    CorrectedProduct product(op);
    Value xOut =
        splitChannels(rewriter, *quantize, channels, ProductSide::Lhs, product);
    Value wOut;
    if (auto weights = op.getRhs().getDefiningOp<QuantizeOp>()) {
      wOut =
          splitChannels(rewriter, weights, channels, ProductSide::Rhs, product);
    } else {
      // Float weights: x_rest is zero at the channels, so only the gathered
      // columns are needed.
      rewriter.setInsertionPoint(op);
      wOut = gather(rewriter, op.getLoc(), op.getRhs(), channels).getGathered();
    }
    product.addTerm(rewriter, ProductPart::getDense(xOut),
                    ProductPart::getDense(wOut));
    return success();
  }

private:
  static SplitChannelsOp gather(PatternRewriter &rewriter, Location loc,
                                Value x, ArrayRef<int64_t> channels) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape().drop_back());
    shape.push_back(channels.size());
    return SplitChannelsOp::create(
        rewriter, loc, type,
        RankedTensorType::get(shape, rewriter.getBF16Type()), x, channels);
  }

  /// Splits the channels out of the quantize input, quantizes the rest in
  /// its place in the product and returns the gathered channels.
  static Value splitChannels(PatternRewriter &rewriter, QuantizeOp quantize,
                             ArrayRef<int64_t> channels, ProductSide side,
                             CorrectedProduct &product) {
    rewriter.setInsertionPointAfter(quantize);
    SplitChannelsOp split =
        gather(rewriter, quantize.getLoc(), quantize.getInput(), channels);
    auto newQuantize =
        QuantizeOp::create(rewriter, quantize.getLoc(),
                           quantize.getResult().getType(), split.getRest());
    newQuantize->setDiscardableAttrs(quantize->getDiscardableAttrDictionary());
    product.replacePart(rewriter, side,
                        ProductPart::getDense(quantize.getResult()),
                        ProductPart::getDense(newQuantize.getResult()));
    return split.getGathered();
  }

  OutlierFallbackOptions options;
};

} // namespace

void mlir::fp4::populateFP4OutlierFallbackPatterns(
    RewritePatternSet &patterns, const OutlierFallbackOptions &options) {
  if (options.mode == OutlierMode::BlockTopK)
    patterns.add<SplitBlockOutliers>(patterns.getContext(), options);
  else
    patterns.add<SplitStaticChannels>(patterns.getContext(), options);
}
