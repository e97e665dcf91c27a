//===- FoldCorrections.cpp - split outliers / residuals at compile time ---===//
//
// Part of fp4-fold-constants. Rewrites
//
//   %rest, %v, %i = fp4.split_outliers %w block 32 top 2     (%w constant)
// into three constants (rest in %w's element type, exact; values rounded to
// their element type; indices i8), computed with the numerics library's
// reference (splitOutliersRow), so the fp4.quantize of %rest then folds as
// usual; and
//
//   %v, %i = fp4.residual %w, %q block 4 top 2
// with %w constant and %q = fp4.quantize of a constant (or fp4.pack of
// constant components, once that quantize is folded) into two constants:
// %q's reference quantization is dequantized (dequantizeReferenceTensor),
// r = w - deq one f32 subtraction per element, and selectTopKRow keeps the
// block top-k (residualRow).
//
// fp4.split_channels of a constant likewise folds into the rest (channels
// zeroed) and the gathered channels (rounded to their element type).
//
// Constants are read through getConstantRowReader (dense or dense_resource
// f32/bf16/f16, behind linalg.transpose, arith.extf, arith.truncf, as
// fp4-fold-constants reads them). Rows run in parallel on the context's
// thread pool. Results under 64 elements or with all elements equal become
// `dense` literals, larger ones dense_resource blobs named
// <source>_rest, fp4_<source>_outlier_values / _outlier_indices and
// fp4_<source>_residual_values / _residual_indices and
// fp4_<source>_outlier_channels. Producers left without
// users are erased.
//
//===----------------------------------------------------------------------===//

#include "FoldedConstant.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/Outliers.h"
#include "fp4/Numerics/Residual.h"
#include "fp4/Numerics/ScalarOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Threading.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

/// Results with fewer elements are emitted as `dense` literals.
/// Rows per parallel task.
static constexpr int64_t kRowsPerTask = 64;

/// A constant of `type` whose element i is element(i) (f32 values are
/// rounded to bf16/f16 element types; i8 types take the low byte of an
/// int32): `dense` when small or uniform, else a dense_resource named
/// `name`.
static TypedAttr buildConstant(RankedTensorType type, ArrayRef<float> floats,
                               ArrayRef<int32_t> ints, const Twine &name) {
  ConstantStorage storage(type);
  MutableArrayRef<char> bytes = storage.bytes();
  if (type.getElementType().isInteger(8)) {
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
      bytes[i] = static_cast<char>(ints[i]);
  } else {
    storeFloatElements(type.getElementType(),
                       floats.take_front(type.getNumElements()), bytes);
  }
  return storage.finish(name);
}

/// Runs `fn(firstRow, numRows)` over [0, rows) in chunks, in parallel.
static void forEachRowChunk(MLIRContext *context, int64_t rows,
                            function_ref<void(int64_t, int64_t)> fn) {
  int64_t chunks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  parallelFor(context, 0, chunks, [&](size_t chunk) {
    int64_t first = static_cast<int64_t>(chunk) * kRowsPerTask;
    fn(first, std::min(kRowsPerTask, rows - first));
  });
}

namespace {

struct FoldConstantSplitOutliers final : OpRewritePattern<SplitOutliersOp> {
  FoldConstantSplitOutliers(MLIRContext *context,
                            const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(SplitOutliersOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason, sourceName;
    FailureOr<ConstantRowReader> reader =
        getConstantRowReader(op.getInput(), &reason, &sourceName);
    if (failed(reader))
      return rewriter.notifyMatchFailure(op, reason);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    if (!op.getValues().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic result shapes");
    if (inputType.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "constant has " << inputType.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });
    int64_t cols = inputType.getShape().back();
    // K = 0 (an empty constant) folds to empty constants.
    int64_t rows = cols == 0 ? 0 : inputType.getNumElements() / cols;
    int64_t blockSize = op.getBlockSize(), k = op.getK();
    int64_t sideCols = cols / blockSize * k;
    std::vector<float> rest(rows * cols), values(rows * sideCols);
    std::vector<int32_t> indices(rows * sideCols);
    forEachRowChunk(op.getContext(), rows, [&](int64_t first, int64_t count) {
      MutableArrayRef<float> chunk(rest.data() + first * cols, count * cols);
      (*reader)(first, count, chunk);
      for (int64_t r = first; r < first + count; ++r)
        numerics::splitOutliersRow(
            rest.data() + r * cols, cols, blockSize, k, rest.data() + r * cols,
            values.data() + r * sideCols, indices.data() + r * sideCols);
    });

    std::string stem = blobStem(sourceName, op.getLoc());
    Location loc = op.getLoc();
    Value restValue = arith::ConstantOp::create(
        rewriter, loc, buildConstant(inputType, rest, {}, stem + "_rest"));
    Value valuesValue = arith::ConstantOp::create(
        rewriter, loc,
        buildConstant(op.getValues().getType(), values, {},
                      "fp4_" + stem + "_outlier_values"));
    Value indicesValue = arith::ConstantOp::create(
        rewriter, loc,
        buildConstant(op.getIndices().getType(), {}, indices,
                      "fp4_" + stem + "_outlier_indices"));
    Value input = op.getInput();
    rewriter.replaceOp(op, {restValue, valuesValue, indicesValue});
    eraseDeadProducers(rewriter, input);
    return success();
  }

  FoldConstantsOptions options;
};

struct FoldConstantSplitChannels final : OpRewritePattern<SplitChannelsOp> {
  FoldConstantSplitChannels(MLIRContext *context,
                            const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(SplitChannelsOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason, sourceName;
    FailureOr<ConstantRowReader> reader =
        getConstantRowReader(op.getInput(), &reason, &sourceName);
    if (failed(reader))
      return rewriter.notifyMatchFailure(op, reason);
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    if (!op.getGathered().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic result shape");
    if (inputType.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "constant has " << inputType.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });
    ArrayRef<int64_t> channels = op.getChannels();
    int64_t cols = inputType.getShape().back();
    // K = 0 (an empty constant) folds to empty constants.
    int64_t rows = cols == 0 ? 0 : inputType.getNumElements() / cols;
    int64_t n = channels.size();
    std::vector<float> rest(rows * cols), gathered(rows * n);
    forEachRowChunk(op.getContext(), rows, [&](int64_t first, int64_t count) {
      MutableArrayRef<float> chunk(rest.data() + first * cols, count * cols);
      (*reader)(first, count, chunk);
      for (int64_t r = first; r < first + count; ++r)
        for (auto [j, channel] : llvm::enumerate(channels)) {
          gathered[r * n + j] = rest[r * cols + channel];
          rest[r * cols + channel] = 0.0f;
        }
    });
    std::string stem = blobStem(sourceName, op.getLoc());
    Location loc = op.getLoc();
    Value restValue = arith::ConstantOp::create(
        rewriter, loc, buildConstant(inputType, rest, {}, stem + "_rest"));
    Value gatheredValue = arith::ConstantOp::create(
        rewriter, loc,
        buildConstant(op.getGathered().getType(), gathered, {},
                      "fp4_" + stem + "_outlier_channels"));
    Value input = op.getInput();
    rewriter.replaceOp(op, {restValue, gatheredValue});
    eraseDeadProducers(rewriter, input);
    return success();
  }

  FoldConstantsOptions options;
};

struct FoldConstantResidual final : OpRewritePattern<ResidualOp> {
  FoldConstantResidual(MLIRContext *context,
                       const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult dequantized(Value q, std::vector<float> &values,
                            std::string &reason) const {
    return readDequantizedConstant(q, values, reason);
  }

  LogicalResult matchAndRewrite(ResidualOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason, sourceName;
    FailureOr<ConstantRowReader> reader =
        getConstantRowReader(op.getInput(), &reason, &sourceName);
    if (failed(reader))
      return rewriter.notifyMatchFailure(op, reason);
    QuantizedTensorType qType = op.getQuantized().getType();
    if (!qType.hasStaticShape() || !op.getValues().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    if (qType.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "constant has " << qType.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });
    std::vector<float> deq;
    if (failed(dequantized(op.getQuantized(), deq, reason)))
      return rewriter.notifyMatchFailure(op, reason);

    int64_t cols = qType.getShape().back();
    int64_t rows = cols == 0 ? 0 : qType.getNumElements() / cols;
    int64_t blockSize = op.getBlockSize(), k = op.getK();
    int64_t sideCols = cols / blockSize * k;
    std::vector<float> x(rows * cols), values(rows * sideCols);
    std::vector<int32_t> indices(rows * sideCols);
    forEachRowChunk(op.getContext(), rows, [&](int64_t first, int64_t count) {
      MutableArrayRef<float> chunk(x.data() + first * cols, count * cols);
      (*reader)(first, count, chunk);
      for (int64_t r = first; r < first + count; ++r)
        numerics::residualRow(x.data() + r * cols, deq.data() + r * cols, cols,
                              blockSize, k, values.data() + r * sideCols,
                              indices.data() + r * sideCols);
    });

    std::string stem = blobStem(sourceName, op.getLoc());
    Location loc = op.getLoc();
    auto indicesType = cast<RankedTensorType>(op.getIndices().getType());
    Value valuesValue = arith::ConstantOp::create(
        rewriter, loc,
        buildConstant(op.getValues().getType(), values, {},
                      "fp4_" + stem + "_residual_values"));
    Value indicesValue = arith::ConstantOp::create(
        rewriter, loc,
        buildConstant(indicesType, {}, indices,
                      "fp4_" + stem + "_residual_indices"));
    Value input = op.getInput(), quantized = op.getQuantized();
    rewriter.replaceOp(op, {valuesValue, indicesValue});
    eraseDeadProducers(rewriter, input);
    eraseDeadProducers(rewriter, quantized);
    return success();
  }

  FoldConstantsOptions options;
};

} // namespace

void mlir::fp4::populateFP4FoldCorrectionPatterns(
    RewritePatternSet &patterns, const FoldConstantsOptions &options) {
  patterns.add<FoldConstantSplitOutliers, FoldConstantSplitChannels,
               FoldConstantResidual>(patterns.getContext(), options);
}

LogicalResult mlir::fp4::readDequantizedConstant(Value q,
                                              std::vector<float> &values,
                                              std::string &reason) {
  auto type = cast<QuantizedTensorType>(q.getType());
  MLIRContext *context = type.getContext();
  values.resize(type.getNumElements());
  SmallVector<Type> componentTypes = type.getComponentTypes();
  if (auto quantize = q.getDefiningOp<QuantizeOp>()) {
    FailureOr<ConstantRowReader> reader =
        getConstantQuantizeInputReader(quantize, &reason);
    if (failed(reader))
      return failure();
    SmallVector<std::vector<char>> storage;
    SmallVector<MutableArrayRef<char>> buffers;
    for (Type t : componentTypes) {
      auto shaped = cast<ShapedType>(t);
      storage.emplace_back(shaped.getNumElements() *
                           shaped.getElementTypeBitWidth() / 8);
    }
    for (std::vector<char> &s : storage)
      buffers.push_back(s);
    if (failed(quantizeReferenceTensor(context, type, *reader, buffers))) {
      reason = "the scheme has no reference quantizer for this shape";
      return failure();
    }
    SmallVector<ArrayRef<char>> components(buffers.begin(), buffers.end());
    if (failed(
            dequantizeReferenceTensor(context, type, components, values))) {
      reason = "the scheme has no reference dequantizer for this shape";
      return failure();
    }
    return success();
  }
  auto pack = q.getDefiningOp<PackOp>();
  if (!pack) {
    reason = "the quantized operand is neither an fp4.quantize nor an "
             "fp4.pack of constants";
    return failure();
  }
  SmallVector<std::vector<char>> expanded(pack.getNumOperands());
  SmallVector<ArrayRef<char>> components;
  for (auto [i, component] : llvm::enumerate(pack.getComponents())) {
    components.emplace_back();
    if (failed(readConstantBytes(component,
                                  cast<ShapedType>(component.getType()),
                                  expanded[i], components.back()))) {
      reason = "fp4.pack component " + std::to_string(i) +
               " is not a readable constant";
      return failure();
    }
  }
  if (failed(dequantizeReferenceTensor(context, type, components, values))) {
    reason = "the scheme has no reference dequantizer for this shape";
    return failure();
  }
  return success();
}
