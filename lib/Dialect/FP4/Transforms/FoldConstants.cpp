//===- FoldConstants.cpp - quantize constant tensors at compile time ------===//
//
// Rewrites fp4.quantize of a constant into fp4.pack of constant components:
//
//   %w = arith.constant dense_resource<w0> : tensor<4096x4096xbf16>
//   %q = fp4.quantize %w : tensor<4096x4096xbf16>
//        -> !fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
// becomes
//   %c = arith.constant dense_resource<fp4_w0_codes> : tensor<4096x2048xi8>
//   %s = arith.constant dense_resource<fp4_w0_scales> : tensor<4096x128xi8>
//   %q = fp4.pack %c, %s : tensor<4096x2048xi8>, tensor<4096x128xi8>
//        -> !fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>
//
// The constant is a `dense` (splat included) or `dense_resource` f32, bf16
// or f16 tensor, read straight from its bytes, possibly behind
// linalg.transpose (the permutation becomes index arithmetic on the read),
// arith.extf (exact) and arith.truncf (applied with the numerics library's
// round-to-nearest-even rules, as arith.truncf defines it). The components
// come from the scheme's reference quantizer (quantizeReferenceTensor), in
// parallel over rows; no float copy of the tensor is ever made. Producers
// left without users are erased.
//
// Second rewrite: fp4.dequantize of fp4.pack of constants becomes the float
// constant the scheme's reference dequantizer computes.
//
//===----------------------------------------------------------------------===//

#include "FoldedConstant.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/ScalarOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <memory>

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

/// Components with fewer elements are emitted as `dense` literals (readable
/// tests); larger ones as `dense_resource` blobs.

namespace {

enum class SourceKind { F32, BF16, F16 };

/// A rounding to a narrower float type, applied on the way from the constant
/// to the quantize input.
enum class CastStep { ToBF16, ToF16 };

/// Where the quantize input's elements come from: the constant's bytes, an
/// affine index map (transposes), and the casts in between.
struct ConstantSource {
  ArrayRef<char> data;
  SourceKind kind = SourceKind::F32;
  /// Per dimension of the quantize input: element stride in `data` (all 0
  /// for a splat).
  SmallVector<int64_t> strides;
  /// Casts in program order.
  SmallVector<CastStep> steps;
  /// Name hint for the component blobs.
  std::string name;
};

} // namespace

static std::optional<SourceKind> sourceKind(Type elementType) {
  if (elementType.isF32())
    return SourceKind::F32;
  if (elementType.isBF16())
    return SourceKind::BF16;
  if (elementType.isF16())
    return SourceKind::F16;
  return std::nullopt;
}

static int64_t sourceBytes(SourceKind kind) {
  return kind == SourceKind::F32 ? 4 : 2;
}

/// Follows `value` back to a constant through transposes and float casts.
/// `fail` receives the reason when it is not one the pattern can read.
static LogicalResult
matchConstantSource(Value value, ConstantSource &source,
                    function_ref<LogicalResult(const Twine &)> fail) {
  auto inputType = dyn_cast<RankedTensorType>(value.getType());
  if (!inputType || !inputType.hasStaticShape())
    return fail("input is not a statically shaped tensor");
  int64_t rank = inputType.getRank();
  // dims[d]: which dimension of the current value is input dimension d.
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  SmallVector<CastStep> reversedSteps;
  while (Operation *def = value.getDefiningOp()) {
    if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      if (transpose->getNumResults() != 1)
        return fail("linalg.transpose on buffers");
      ArrayRef<int64_t> perm = transpose.getPermutation();
      for (int64_t &d : dims)
        d = perm[d];
      value = transpose.getInput();
      continue;
    }
    if (auto extf = dyn_cast<arith::ExtFOp>(def)) {
      if (!sourceKind(getElementTypeOrSelf(extf.getIn().getType())))
        return fail("arith.extf from a type other than f32, bf16, f16");
      value = extf.getIn();
      continue;
    }
    if (auto truncf = dyn_cast<arith::TruncFOp>(def)) {
      if (!getElementTypeOrSelf(truncf.getIn().getType()).isF32())
        return fail("arith.truncf from a type other than f32");
      if (std::optional<arith::RoundingMode> mode = truncf.getRoundingmode();
          mode && *mode != arith::RoundingMode::to_nearest_even)
        return fail("arith.truncf with a rounding mode other than "
                    "to_nearest_even");
      Type outType = getElementTypeOrSelf(truncf.getType());
      reversedSteps.push_back(outType.isBF16() ? CastStep::ToBF16
                                               : CastStep::ToF16);
      value = truncf.getIn();
      continue;
    }
    break;
  }

  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return fail("input is not a constant (behind linalg.transpose, "
                "arith.extf, arith.truncf)");
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return fail("constant is not a statically shaped tensor");
  std::optional<SourceKind> kind = sourceKind(type.getElementType());
  if (!kind)
    return fail("constant element type is not f32, bf16 or f16");
  source.kind = *kind;
  bool splat = false;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
    source.data = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return fail("dense_resource blob '" + resource.getRawHandle().getKey() +
                  "' is not loaded");
    source.data = blob->getData();
    source.name = resource.getRawHandle().getKey().str();
  } else {
    return fail("constant is neither dense nor dense_resource");
  }
  int64_t expectedBytes =
      (splat ? 1 : type.getNumElements()) * sourceBytes(source.kind);
  if (static_cast<int64_t>(source.data.size()) != expectedBytes)
    return fail("constant holds " + Twine(source.data.size()) +
                " bytes, expected " + Twine(expectedBytes));

  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> constStrides(shape.size(), 0);
  if (!splat) {
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      constStrides[d] = stride;
      stride *= shape[d];
    }
  }
  source.strides.clear();
  for (int64_t d : dims)
    source.strides.push_back(constStrides[d]);
  source.steps.assign(reversedSteps.rbegin(), reversedSteps.rend());
  return success();
}

bool mlir::fp4::isFoldableConstantQuantize(Operation *op) {
  auto quantize = dyn_cast<QuantizeOp>(op);
  if (!quantize)
    return false;
  ConstantSource source;
  return succeeded(matchConstantSource(
      quantize.getInput(), source, [](const Twine &) { return failure(); }));
}

//===----------------------------------------------------------------------===//
// Reading rows of the quantize input
//===----------------------------------------------------------------------===//

namespace {
/// Reads row-view rows (ReferenceQuantization.h) of the quantize input from
/// a ConstantSource.
class SourceRowReader {
public:
  SourceRowReader(const ConstantSource &source, ArrayRef<int64_t> shape,
                  int64_t axis)
      : source(source), shape(shape), axis(axis) {}

  void operator()(int64_t firstRow, int64_t numRows,
                  MutableArrayRef<float> values) const {
    int64_t cols = shape[axis];
    int64_t step = source.strides[axis];
    for (int64_t r = 0; r < numRows; ++r) {
      // Row r enumerates the non-axis dimensions row-major.
      int64_t rest = firstRow + r, base = 0;
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        if (d == axis)
          continue;
        base += (rest % shape[d]) * source.strides[d];
        rest /= shape[d];
      }
      float *out = values.data() + r * cols;
      switch (source.kind) {
      case SourceKind::F32:
        readLine<SourceKind::F32>(base, step, cols, out);
        break;
      case SourceKind::BF16:
        readLine<SourceKind::BF16>(base, step, cols, out);
        break;
      case SourceKind::F16:
        readLine<SourceKind::F16>(base, step, cols, out);
        break;
      }
      for (CastStep cast : source.steps)
        for (int64_t k = 0; k < cols; ++k)
          out[k] = cast == CastStep::ToBF16 ? numerics::roundToBF16(ops, out[k])
                                            : numerics::roundToF16(ops, out[k]);
    }
  }

private:
  template <SourceKind kind>
  void readLine(int64_t base, int64_t step, int64_t cols, float *out) const {
    const char *data = source.data.data();
    for (int64_t k = 0; k < cols; ++k) {
      int64_t i = base + k * step;
      if constexpr (kind == SourceKind::F32) {
        std::memcpy(&out[k], data + 4 * i, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, data + 2 * i, 2);
        out[k] = kind == SourceKind::BF16 ? numerics::bf16Decode(ops, bits)
                                          : numerics::f16Decode(ops, bits);
      }
    }
  }

  static constexpr numerics::ScalarOps ops{};
  const ConstantSource &source;
  ArrayRef<int64_t> shape;
  int64_t axis;
};
} // namespace

FailureOr<ConstantRowReader>
mlir::fp4::getConstantQuantizeInputReader(Operation *op, std::string *reason) {
  auto quantize = dyn_cast<QuantizeOp>(op);
  if (!quantize) {
    if (reason)
      *reason = "not an fp4.quantize";
    return failure();
  }
  auto source = std::make_shared<ConstantSource>();
  if (failed(matchConstantSource(quantize.getInput(), *source,
                                 [&](const Twine &why) {
                                   if (reason)
                                     *reason = why.str();
                                   return failure();
                                 })))
    return failure();
  QuantizedTensorType type = quantize.getResult().getType();
  // The type's shape is uniqued in the context: the ArrayRef stays valid.
  return ConstantRowReader(
      [source, shape = type.getShape(), axis = type.getAxis()](
          int64_t firstRow, int64_t numRows, MutableArrayRef<float> values) {
        SourceRowReader(*source, shape, axis)(firstRow, numRows, values);
      });
}

FailureOr<ConstantRowReader>
mlir::fp4::getConstantRowReader(Value value, std::string *reason,
                                std::string *sourceName) {
  auto source = std::make_shared<ConstantSource>();
  if (failed(matchConstantSource(value, *source, [&](const Twine &why) {
        if (reason)
          *reason = why.str();
        return failure();
      })))
    return failure();
  if (sourceName)
    *sourceName = source->name;
  auto type = cast<RankedTensorType>(value.getType());
  return ConstantRowReader(
      [source, shape = SmallVector<int64_t>(type.getShape()),
       axis = type.getRank() - 1](int64_t firstRow, int64_t numRows,
                                  MutableArrayRef<float> values) {
        SourceRowReader(*source, shape, axis)(firstRow, numRows, values);
      });
}

//===----------------------------------------------------------------------===//
// fp4.quantize of a constant
//===----------------------------------------------------------------------===//

namespace {
struct FoldConstantQuantize final : OpRewritePattern<QuantizeOp> {
  FoldConstantQuantize(MLIRContext *context,
                       const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    ConstantSource source;
    if (failed(matchConstantSource(
            op.getInput(), source, [&](const Twine &reason) {
              return rewriter.notifyMatchFailure(op, reason);
            })))
      return failure();
    QuantizedTensorType type = op.getResult().getType();
    if (type.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "constant has " << type.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });

    // Components are written straight into their final storage.
    SmallVector<Type> componentTypes = type.getComponentTypes();
    SmallVector<ConstantStorage> storage;
    SmallVector<MutableArrayRef<char>> buffers;
    for (Type t : componentTypes) {
      storage.emplace_back(cast<ShapedType>(t));
      buffers.push_back(storage.back().bytes());
    }
    SourceRowReader reader(source, type.getShape(), type.getAxis());
    if (failed(quantizeReferenceTensor(op.getContext(), type, reader, buffers)))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "scheme " << type.getScheme()
             << " has no reference quantizer for this shape";
      });

    SmallVector<StringRef> names;
    type.getScheme().getComponentNames(names);
    std::string stem = blobStem(source.name, op.getLoc());
    SmallVector<Value> components;
    for (auto [i, name] : llvm::enumerate(names))
      components.push_back(arith::ConstantOp::create(
          rewriter, op.getLoc(),
          storage[i].finish("fp4_" + stem + "_" + name)));
    Value input = op.getInput();
    rewriter.replaceOpWithNewOp<PackOp>(op, type, components);
    eraseDeadProducers(rewriter, input);
    return success();
  }

  FoldConstantsOptions options;
};
} // namespace

//===----------------------------------------------------------------------===//
// fp4.dequantize of fp4.pack of constants
//===----------------------------------------------------------------------===//

namespace {
struct FoldDequantizeOfConstantPack final : OpRewritePattern<DequantizeOp> {
  FoldDequantizeOfConstantPack(MLIRContext *context,
                               const FoldConstantsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto pack = op.getInput().getDefiningOp<PackOp>();
    if (!pack)
      return rewriter.notifyMatchFailure(op, "input is not an fp4.pack");
    QuantizedTensorType type = op.getInput().getType();
    RankedTensorType resultType = op.getResult().getType();
    if (!type.hasStaticShape() || !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    if (type.getNumElements() > options.maxElements)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "tensor has " << type.getNumElements()
             << " elements, more than max-elements = " << options.maxElements;
      });
    SmallVector<std::vector<char>> expanded(pack.getNumOperands());
    SmallVector<ArrayRef<char>> components;
    for (auto [i, component] : llvm::enumerate(pack.getComponents())) {
      components.emplace_back();
      if (failed(readConstantBytes(component, cast<ShapedType>(component.getType()),
                               expanded[i], components.back())))
        return rewriter.notifyMatchFailure(
            op, "component " + Twine(i) + " is not a readable constant");
    }

    Type elementType = resultType.getElementType();
    ConstantStorage storage(resultType);
    std::vector<float> f32Values;
    MutableArrayRef<float> values;
    if (elementType.isF32()) {
      values = MutableArrayRef<float>(
          reinterpret_cast<float *>(storage.bytes().data()),
          resultType.getNumElements());
    } else {
      f32Values.resize(resultType.getNumElements());
      values = f32Values;
    }
    if (failed(dequantizeReferenceTensor(op.getContext(), type, components,
                                         values)))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &diag) {
        diag << "scheme " << type.getScheme()
             << " has no reference dequantizer for this shape";
      });
    if (!elementType.isF32()) {
      // bf16 / f16 results round to nearest even from f32 (fp4.dequantize).
      constexpr numerics::ScalarOps ops{};
      bool bf16 = elementType.isBF16();
      char *out = storage.bytes().data();
      for (auto [i, v] : llvm::enumerate(f32Values)) {
        auto bits = static_cast<uint16_t>(
            bf16 ? numerics::bf16StorageBits(ops, numerics::roundToBF16(ops, v))
                 : numerics::f16StorageBits(ops, numerics::roundToF16(ops, v)));
        std::memcpy(out + 2 * i, &bits, 2);
      }
    }
    Value input = op.getInput();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op,
        storage.finish("fp4_" + blobStem("", op.getLoc()) + "_dequantized"));
    eraseDeadProducers(rewriter, input);
    return success();
  }

  FoldConstantsOptions options;
};
} // namespace

void mlir::fp4::populateFP4FoldConstantsPatterns(
    RewritePatternSet &patterns, const FoldConstantsOptions &options) {
  patterns.add<FoldConstantQuantize>(patterns.getContext(), options);
  populateFP4FoldRotationPatterns(patterns, options);
  populateFP4FoldCorrectionPatterns(patterns, options);
  if (options.foldDequantize)
    patterns.add<FoldDequantizeOfConstantPack>(patterns.getContext(), options);
}
