//===- FoldRotations.cpp - rotate and permute constants at compile time ---===//
//
// Part of fp4-fold-constants. Rewrites
//
//   %r = fp4.rotate %c hadamard 32 seed 7 axis 1
//        : tensor<NxKxbf16> -> tensor<NxKxf32>
//   %p = fp4.permute %c axis 1 permutation [...] : tensor<NxKxbf16>
//
// of a constant %c (`dense`, splat included, or `dense_resource`; f32, bf16
// or f16; possibly behind linalg.transpose, arith.extf and arith.truncf,
// applied exactly as those ops define) into a constant of the result type:
// the rotation runs the numerics library's Hadamard (Hadamard.h, the same
// f32 operations as the lowering), in parallel over the rotated vectors; a
// permutation gathers. The fp4.quantize reading the result then folds as
// usual. Results under 64 elements, or with all elements equal, become
// `dense` literals; larger ones `dense_resource` blobs named
// <source>_rotated / <source>_permuted (so the quantized components become
// fp4_<source>_rotated_codes, ...). Producers left without users
// are erased.
//
//===----------------------------------------------------------------------===//

#include "FoldedConstant.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/Hadamard.h"
#include "fp4/Numerics/ScalarOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
/// Rotated vectors per parallel task.
static constexpr int64_t kRowsPerTask = 256;

namespace {
/// A float constant read into f32 values, row-major in its logical shape.
struct FloatConstant {
  std::vector<float> values;
  /// Name hint for the result blob: the source blob's key or NameLoc.
  std::string name;
};
} // namespace

static std::string locationName(Location loc) {
  if (auto nameLoc = dyn_cast<NameLoc>(loc))
    return nameLoc.getName().str();
  return "";
}

/// Reads the f32/bf16/f16 elements of a constant attribute.
static LogicalResult
readConstantAttr(Attribute attr, RankedTensorType type, FloatConstant &out,
                 function_ref<LogicalResult(const Twine &)> fail) {
  Type elementType = type.getElementType();
  if (!elementType.isF32() && !elementType.isBF16() && !elementType.isF16())
    return fail("constant element type is not f32, bf16 or f16");
  int64_t elementBytes = elementType.isF32() ? 4 : 2;
  ArrayRef<char> data;
  bool splat = false;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
    data = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return fail("dense_resource blob '" + resource.getRawHandle().getKey() +
                  "' is not loaded");
    data = blob->getData();
    out.name = resource.getRawHandle().getKey().str();
  } else {
    return fail("constant is neither dense nor dense_resource");
  }
  int64_t count = type.getNumElements();
  if (static_cast<int64_t>(data.size()) != (splat ? 1 : count) * elementBytes)
    return fail("constant holds " + Twine(data.size()) + " bytes, expected " +
                Twine(count * elementBytes));
  constexpr numerics::ScalarOps ops{};
  out.values.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    const char *p = data.data() + (splat ? 0 : i) * elementBytes;
    if (elementBytes == 4) {
      std::memcpy(&out.values[i], p, 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    out.values[i] = elementType.isBF16() ? numerics::bf16Decode(ops, bits)
                                         : numerics::f16Decode(ops, bits);
  }
  return success();
}

/// Reads `value`, a statically shaped float tensor computed from a constant
/// by linalg.transpose, arith.extf and arith.truncf (round to nearest even).
static LogicalResult
readFloatConstant(Value value, FloatConstant &out,
                  function_ref<LogicalResult(const Twine &)> fail) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return fail("input is not a statically shaped tensor");
  Operation *def = value.getDefiningOp();
  if (auto transpose = dyn_cast_if_present<linalg::TransposeOp>(def)) {
    if (transpose->getNumResults() != 1)
      return fail("linalg.transpose on buffers");
    FloatConstant in;
    if (failed(readFloatConstant(transpose.getInput(), in, fail)))
      return failure();
    // Result dimension d is input dimension perm[d].
    ArrayRef<int64_t> perm = transpose.getPermutation();
    ArrayRef<int64_t> inShape =
        cast<RankedTensorType>(transpose.getInput().getType()).getShape();
    int64_t rank = inShape.size();
    SmallVector<int64_t> inStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      inStrides[d] = inStrides[d + 1] * inShape[d + 1];
    ArrayRef<int64_t> shape = type.getShape();
    out.values.resize(in.values.size());
    out.name = std::move(in.name);
    SmallVector<int64_t> index(rank, 0);
    for (size_t i = 0; i < out.values.size(); ++i) {
      int64_t source = 0;
      for (int64_t d = 0; d < rank; ++d)
        source += index[d] * inStrides[perm[d]];
      out.values[i] = in.values[source];
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
    return success();
  }
  if (auto extf = dyn_cast_if_present<arith::ExtFOp>(def))
    return readFloatConstant(extf.getIn(), out, fail);
  if (auto truncf = dyn_cast_if_present<arith::TruncFOp>(def)) {
    if (std::optional<arith::RoundingMode> mode = truncf.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return fail("arith.truncf with a rounding mode other than "
                  "to_nearest_even");
    if (failed(readFloatConstant(truncf.getIn(), out, fail)))
      return failure();
    constexpr numerics::ScalarOps ops{};
    bool bf16 = type.getElementType().isBF16();
    for (float &v : out.values)
      v = bf16 ? numerics::roundToBF16(ops, v) : numerics::roundToF16(ops, v);
    return success();
  }
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return fail("input is not a constant (behind linalg.transpose, "
                "arith.extf, arith.truncf)");
  if (failed(readConstantAttr(attr, type, out, fail)))
    return failure();
  if (out.name.empty() && def)
    out.name = locationName(def->getLoc());
  return success();
}

/// A constant of `type` (f32, bf16 or f16 elements) holding `values` rounded
/// to nearest even: `dense` when small or uniform, else a dense_resource
/// blob named `name`.
static TypedAttr buildFloatConstant(RankedTensorType type,
                                    ArrayRef<float> values, const Twine &name) {
  ConstantStorage storage(type);
  storeFloatElements(type.getElementType(), values, storage.bytes());
  return storage.finish(name);
}

static std::string stem(const FloatConstant &source, Location loc) {
  if (!source.name.empty())
    return source.name;
  std::string name = locationName(loc);
  return name.empty() ? "const" : name;
}

namespace {
struct FoldConstantRotate final : OpRewritePattern<RotateOp> {
  FoldConstantRotate(MLIRContext *context, const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(RotateOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getResult().getType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    if (type.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "constant has " << type.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });
    FloatConstant source;
    if (failed(
            readFloatConstant(op.getInput(), source, [&](const Twine &reason) {
              return rewriter.notifyMatchFailure(op, reason);
            })))
      return failure();

    // Rotate row-view rows (the axis moved last) in parallel chunks.
    numerics::HadamardParams params = op.getHadamardParams();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t axis = op.getAxis();
    int64_t cols = shape[axis];
    int64_t rows = cols == 0 ? 0 : type.getNumElements() / cols;
    bool axisLast = axis == type.getRank() - 1;
    std::vector<float> result(source.values.size());
    int64_t numTasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
    parallelFor(op.getContext(), 0, numTasks, [&](size_t task) {
      int64_t first = task * kRowsPerTask;
      int64_t count = std::min(kRowsPerTask, rows - first);
      if (axisLast) {
        std::memcpy(result.data() + first * cols,
                    source.values.data() + first * cols,
                    sizeof(float) * count * cols);
        numerics::hadamardRotateRows(params, result.data() + first * cols,
                                     count, cols);
        return;
      }
      std::vector<float> chunk(count * cols);
      gatherRowViewRows(shape, axis, sizeof(float), first, count,
                        reinterpret_cast<const char *>(source.values.data()),
                        reinterpret_cast<char *>(chunk.data()));
      numerics::hadamardRotateRows(params, chunk.data(), count, cols);
      scatterRowViewRows(shape, axis, sizeof(float), first, count,
                         reinterpret_cast<const char *>(chunk.data()),
                         reinterpret_cast<char *>(result.data()));
    });

    Value input = op.getInput();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, buildFloatConstant(type, result,
                               stem(source, op.getLoc()) + "_rotated"));
    eraseDeadProducers(rewriter, input);
    return success();
  }

  FoldConstantsOptions options;
};

struct FoldConstantPermute final : OpRewritePattern<PermuteOp> {
  FoldConstantPermute(MLIRContext *context, const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    if (type.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "constant has " << type.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });
    FloatConstant source;
    if (failed(
            readFloatConstant(op.getInput(), source, [&](const Twine &reason) {
              return rewriter.notifyMatchFailure(op, reason);
            })))
      return failure();
    // [outer, axis, inner] view: result[o, i, n] = input[o, perm[i], n].
    ArrayRef<int64_t> shape = type.getShape();
    int64_t axis = op.getAxis(), length = shape[axis], inner = 1;
    for (int64_t d = axis + 1; d < type.getRank(); ++d)
      inner *= shape[d];
    int64_t outer =
        length * inner == 0 ? 0 : type.getNumElements() / (length * inner);
    ArrayRef<int64_t> perm = op.getPermutation();
    std::vector<float> result(source.values.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < length; ++i)
        std::memcpy(result.data() + (o * length + i) * inner,
                    source.values.data() + (o * length + perm[i]) * inner,
                    sizeof(float) * inner);
    Value input = op.getInput();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, buildFloatConstant(type, result,
                               stem(source, op.getLoc()) + "_permuted"));
    eraseDeadProducers(rewriter, input);
    return success();
  }

  FoldConstantsOptions options;
};
} // namespace

void mlir::fp4::populateFP4FoldRotationPatterns(
    RewritePatternSet &patterns, const FoldConstantsOptions &options) {
  patterns.add<FoldConstantRotate, FoldConstantPermute>(patterns.getContext(),
                                                        options);
}
