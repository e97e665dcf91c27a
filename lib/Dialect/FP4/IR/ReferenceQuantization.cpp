//===- ReferenceQuantization.cpp - C++ reference quantization -------------===//
//
// Whole-tensor drivers around the schemes' quantizeReference /
// dequantizeReference (row view, parallel chunks, layout transposition) and
// the argument checks the schemes share. Format knowledge stays in the
// schemes; nothing here looks at a particular one.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Numerics/Reference.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Threading.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::fp4;

numerics::ScaleRounding mlir::fp4::toNumerics(ScaleRounding rounding) {
  switch (rounding) {
  case ScaleRounding::Floor:
    return numerics::ScaleRounding::Floor;
  case ScaleRounding::Ceil:
    return numerics::ScaleRounding::Ceil;
  case ScaleRounding::Even:
    return numerics::ScaleRounding::Even;
  case ScaleRounding::RCeil:
    return numerics::ScaleRounding::RCeil;
  }
  llvm_unreachable("unknown ScaleRounding");
}

numerics::ElementRounding mlir::fp4::toNumerics(ElementRounding rounding) {
  switch (rounding) {
  case ElementRounding::NearestEven:
    return numerics::ElementRounding::NearestEven;
  case ElementRounding::HalfAway:
    return numerics::ElementRounding::HalfAway;
  case ElementRounding::Stochastic:
    return numerics::ElementRounding::Stochastic;
  }
  llvm_unreachable("unknown ElementRounding");
}

/// Bytes of one element of a component type (i8, i32, bf16, f32, ...).
static int64_t elementBytes(Type type) {
  return cast<ShapedType>(type).getElementTypeBitWidth() / 8;
}

SmallVector<int64_t>
mlir::fp4::getReferenceComponentBytes(QuantSchemeAttrInterface scheme,
                                      const ReferenceRows &rows) {
  SmallVector<Type> types;
  scheme.getComponentTypes({rows.numRows, rows.cols}, /*axis=*/1, types);
  SmallVector<int64_t> bytes;
  for (Type type : types)
    bytes.push_back(cast<ShapedType>(type).getNumElements() *
                    elementBytes(type));
  return bytes;
}

template <typename BufferT>
static SmallVector<int64_t> bufferSizes(ArrayRef<BufferT> buffers) {
  SmallVector<int64_t> sizes;
  for (const BufferT &b : buffers)
    sizes.push_back(b.size());
  return sizes;
}

static LogicalResult checkArguments(QuantSchemeAttrInterface scheme,
                                    const ReferenceRows &rows, size_t numValues,
                                    ArrayRef<int64_t> componentSizes) {
  int64_t rowMultiple = scheme.getReferenceRowMultiple();
  if (rows.cols <= 0 || rows.cols % scheme.getAxisMultiple() != 0 ||
      rows.numRows < 0 || rows.firstRow < 0 || rows.logicalInner < 1 ||
      rows.numRows % rowMultiple != 0 || rows.firstRow % rowMultiple != 0 ||
      static_cast<int64_t>(numValues) != rows.numRows * rows.cols)
    return failure();
  SmallVector<int64_t> expected = getReferenceComponentBytes(scheme, rows);
  return success(ArrayRef<int64_t>(expected) == componentSizes);
}

LogicalResult
mlir::fp4::checkReferenceArguments(QuantSchemeAttrInterface scheme,
                                   const ReferenceRows &rows, size_t numValues,
                                   ArrayRef<MutableArrayRef<char>> components) {
  return checkArguments(scheme, rows, numValues, bufferSizes(components));
}

LogicalResult
mlir::fp4::checkReferenceArguments(QuantSchemeAttrInterface scheme,
                                   const ReferenceRows &rows, size_t numValues,
                                   ArrayRef<ArrayRef<char>> components) {
  return checkArguments(scheme, rows, numValues, bufferSizes(components));
}

/// Calls copy(rowViewOffset, logicalOffset) for every element of row-view
/// rows [firstRow, firstRow + numRows), offsets in elements.
template <typename CopyFn>
static void forEachRowViewElement(ArrayRef<int64_t> logicalShape, int64_t axis,
                                  int64_t firstRow, int64_t numRows,
                                  CopyFn copy) {
  int64_t rank = logicalShape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * logicalShape[d + 1];
  int64_t len = logicalShape[axis];
  for (int64_t r = firstRow; r < firstRow + numRows; ++r) {
    // Row r enumerates the non-axis dimensions row-major.
    int64_t rest = r, offset = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d == axis)
        continue;
      offset += (rest % logicalShape[d]) * strides[d];
      rest /= logicalShape[d];
    }
    for (int64_t k = 0; k < len; ++k)
      copy((r - firstRow) * len + k, offset + k * strides[axis]);
  }
}

void mlir::fp4::scatterRowViewRows(ArrayRef<int64_t> logicalShape, int64_t axis,
                                   int64_t elementBytes, int64_t firstRow,
                                   int64_t numRows, const char *rowView,
                                   char *logical) {
  forEachRowViewElement(
      logicalShape, axis, firstRow, numRows, [&](int64_t row, int64_t log) {
        std::memcpy(logical + log * elementBytes, rowView + row * elementBytes,
                    elementBytes);
      });
}

void mlir::fp4::gatherRowViewRows(ArrayRef<int64_t> logicalShape, int64_t axis,
                                  int64_t elementBytes, int64_t firstRow,
                                  int64_t numRows, const char *logical,
                                  char *rowView) {
  forEachRowViewElement(
      logicalShape, axis, firstRow, numRows, [&](int64_t row, int64_t log) {
        std::memcpy(rowView + row * elementBytes, logical + log * elementBytes,
                    elementBytes);
      });
}

namespace {
/// How a tensor of a quantized type is cut into row chunks and how its
/// components map between the row view and the logical layout.
struct TensorPlan {
  QuantSchemeAttrInterface scheme;
  ArrayRef<int64_t> shape;
  int64_t axis = 0;
  int64_t cols = 0, rows = 0, inner = 1;
  int64_t chunkRows = 0, numChunks = 0;
  /// Axis last: row views are the logical layouts, chunks write in place.
  bool inPlace = true;
  SmallVector<SmallVector<int64_t>> componentShapes;
  SmallVector<int64_t> componentElementBytes;

  /// Fails if the type or the buffer sizes do not fit.
  LogicalResult init(QuantizedTensorType type, ArrayRef<int64_t> bufferSizes);

  ReferenceRows chunk(int64_t c) const {
    ReferenceRows r;
    r.firstRow = c * chunkRows;
    r.numRows = std::min(chunkRows, rows - r.firstRow);
    r.cols = cols;
    r.logicalInner = inner;
    return r;
  }
  bool isPerTensor(size_t i) const { return componentShapes[i].empty(); }

  /// First row and number of rows of component i's row view that belong to
  /// the chunk `r`, whose part of the component is `bytes` long.
  std::pair<int64_t, int64_t> componentRows(size_t i, const ReferenceRows &r,
                                            int64_t bytes) const {
    int64_t numRows =
        bytes / (componentShapes[i][axis] * componentElementBytes[i]);
    return {r.firstRow * numRows / r.numRows, numRows};
  }
};
} // namespace

/// Rows a chunk aims at: large enough to amortize a task, small enough to
/// keep one chunk of floats per worker in cache-sized memory.
static constexpr int64_t kChunkElements = 1 << 16;

LogicalResult TensorPlan::init(QuantizedTensorType type,
                               ArrayRef<int64_t> bufferSizes) {
  if (!type.hasStaticShape())
    return failure();
  scheme = type.getScheme();
  shape = type.getShape();
  axis = type.getAxis();
  cols = shape[axis];
  if (cols <= 0)
    return failure();
  rows = type.getNumElements() / cols;
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  inPlace = axis == static_cast<int64_t>(shape.size()) - 1;
  int64_t multiple = scheme.getReferenceRowMultiple();
  if (rows % multiple != 0)
    return failure();
  chunkRows = std::max<int64_t>(1, kChunkElements / cols);
  chunkRows = llvm::divideCeil(chunkRows, multiple) * multiple;
  numChunks = llvm::divideCeil(rows, chunkRows);
  SmallVector<Type> types = type.getComponentTypes();
  if (types.size() != bufferSizes.size())
    return failure();
  for (auto [t, size] : llvm::zip(types, bufferSizes)) {
    auto shaped = cast<ShapedType>(t);
    componentShapes.emplace_back(shaped.getShape());
    componentElementBytes.push_back(elementBytes(t));
    if (shaped.getNumElements() * componentElementBytes.back() != size)
      return failure();
  }
  return success();
}

LogicalResult mlir::fp4::quantizeReferenceTensor(
    MLIRContext *context, QuantizedTensorType type, ReferenceRowReader readRows,
    ArrayRef<MutableArrayRef<char>> components) {
  TensorPlan plan;
  if (failed(plan.init(type, bufferSizes(components))))
    return failure();

  // The tensor amax must be known before any row is quantized (NVFP4): one
  // parallel reduction pass first, re-reading the rows instead of keeping
  // them.
  float tensorAmax = 0.0f;
  if (plan.scheme.referenceNeedsTensorAmax()) {
    std::vector<float> partial(plan.numChunks, 0.0f);
    parallelFor(context, 0, plan.numChunks, [&](size_t c) {
      ReferenceRows r = plan.chunk(c);
      std::vector<float> values(r.numRows * r.cols);
      readRows(r.firstRow, r.numRows, values);
      partial[c] = numerics::nvfp4TensorAmax(values.data(), values.size());
    });
    for (float a : partial)
      tensorAmax = std::max(tensorAmax, a);
  }

  // An empty tensor still has its per-tensor components.
  if (plan.numChunks == 0) {
    ReferenceRows r;
    r.cols = plan.cols;
    r.logicalInner = plan.inner;
    return plan.scheme.quantizeReference(r, {}, tensorAmax, components);
  }

  std::atomic<bool> ok(true);
  parallelFor(context, 0, plan.numChunks, [&](size_t c) {
    ReferenceRows r = plan.chunk(c);
    std::vector<float> values(r.numRows * r.cols);
    readRows(r.firstRow, r.numRows, values);
    SmallVector<int64_t> bytes = getReferenceComponentBytes(plan.scheme, r);
    SmallVector<std::vector<char>> scratch(components.size());
    SmallVector<MutableArrayRef<char>> slices;
    for (auto [i, component] : llvm::enumerate(components)) {
      if (plan.isPerTensor(i)) {
        // Only the first chunk writes per-tensor components.
        if (r.firstRow == 0) {
          slices.push_back(component);
          continue;
        }
      } else if (plan.inPlace) {
        auto [firstRow, numRows] = plan.componentRows(i, r, bytes[i]);
        slices.push_back(
            component.slice(firstRow * (bytes[i] / numRows), bytes[i]));
        continue;
      }
      scratch[i].resize(bytes[i]);
      slices.push_back(scratch[i]);
    }
    if (failed(plan.scheme.quantizeReference(r, values, tensorAmax, slices))) {
      ok = false;
      return;
    }
    if (plan.inPlace)
      return;
    for (auto [i, component] : llvm::enumerate(components)) {
      if (plan.isPerTensor(i))
        continue;
      auto [firstRow, numRows] = plan.componentRows(i, r, bytes[i]);
      scatterRowViewRows(plan.componentShapes[i], plan.axis,
                         plan.componentElementBytes[i], firstRow, numRows,
                         scratch[i].data(), component.data());
    }
  });
  return success(ok.load());
}

LogicalResult mlir::fp4::dequantizeReferenceTensor(
    MLIRContext *context, QuantizedTensorType type,
    ArrayRef<ArrayRef<char>> components, MutableArrayRef<float> values) {
  TensorPlan plan;
  if (failed(plan.init(type, bufferSizes(components))) ||
      static_cast<int64_t>(values.size()) != plan.rows * plan.cols)
    return failure();
  std::atomic<bool> ok(true);
  parallelFor(context, 0, plan.numChunks, [&](size_t c) {
    ReferenceRows r = plan.chunk(c);
    SmallVector<int64_t> bytes = getReferenceComponentBytes(plan.scheme, r);
    SmallVector<std::vector<char>> scratch(components.size());
    SmallVector<ArrayRef<char>> slices;
    for (auto [i, component] : llvm::enumerate(components)) {
      if (plan.isPerTensor(i)) {
        slices.push_back(component);
        continue;
      }
      auto [firstRow, numRows] = plan.componentRows(i, r, bytes[i]);
      if (plan.inPlace) {
        slices.push_back(
            component.slice(firstRow * (bytes[i] / numRows), bytes[i]));
        continue;
      }
      scratch[i].resize(bytes[i]);
      gatherRowViewRows(plan.componentShapes[i], plan.axis,
                        plan.componentElementBytes[i], firstRow, numRows,
                        component.data(), scratch[i].data());
      slices.push_back(scratch[i]);
    }
    if (plan.inPlace) {
      if (failed(plan.scheme.dequantizeReference(
              r, slices,
              values.slice(r.firstRow * r.cols, r.numRows * r.cols))))
        ok = false;
      return;
    }
    std::vector<float> rowValues(r.numRows * r.cols);
    if (failed(plan.scheme.dequantizeReference(r, slices, rowValues))) {
      ok = false;
      return;
    }
    scatterRowViewRows(plan.shape, plan.axis, sizeof(float), r.firstRow,
                       r.numRows,
                       reinterpret_cast<const char *>(rowValues.data()),
                       reinterpret_cast<char *>(values.data()));
  });
  return success(ok.load());
}
