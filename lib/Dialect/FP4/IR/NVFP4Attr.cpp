//===- NVFP4Attr.cpp - #fp4.nvfp4 scheme ----------------------------------===//
//
// NVFP4: E2M1 codes, one E4M3 byte per 16 elements (or per 16x16 tile), and
// one f32 decode scale for the whole tensor.
//
//===----------------------------------------------------------------------===//

#include "SchemeParameters.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Numerics/Reference.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

static constexpr int64_t kNVFP4Block = 16;

Attribute NVFP4Attr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  bool fourOverSix = false, tile2d = false;
  ElementRounding rounding = ElementRounding::NearestEven;
  uint32_t seed = 0;
  SchemeParameterParser params(parser, getMnemonic());
  params.addBool("four_over_six", fourOverSix);
  params.addBool("tile2d", tile2d);
  params.addElementRounding("rounding", rounding);
  params.addUInt32("seed", seed);
  if (failed(params.parse()))
    return {};
  return parser.getChecked<NVFP4Attr>(loc, parser.getContext(), fourOverSix,
                                      tile2d, rounding, seed);
}

void NVFP4Attr::print(AsmPrinter &printer) const {
  SchemeParameterPrinter params;
  if (getFourOverSix())
    params.add("four_over_six", "true");
  if (getTile2d())
    params.add("tile2d", "true");
  if (getRounding() != ElementRounding::NearestEven)
    params.add("rounding", stringifyElementRounding(getRounding()).str());
  if (getSeed() != 0)
    params.add("seed", std::to_string(getSeed()));
  params.print(printer);
}

LogicalResult NVFP4Attr::verify(function_ref<InFlightDiagnostic()> emitError,
                                bool, bool, ElementRounding rounding,
                                uint32_t seed) {
  return verifyElementRounding(emitError, getMnemonic(), rounding, seed);
}

StringRef NVFP4Attr::getFormatName() const { return getMnemonic(); }

Type NVFP4Attr::getElementType() const {
  return Float4E2M1FNType::get(getContext());
}

int64_t NVFP4Attr::getBlockSize() const { return kNVFP4Block; }

int64_t NVFP4Attr::getAxisMultiple() const { return kNVFP4Block; }

double NVFP4Attr::getBitsPerElement() const { return 4.0 + 8.0 / kNVFP4Block; }

/// With 16x16 tiles, the tile's second dimension is the other of the two
/// innermost dimensions.
static int64_t tilePartnerAxis(int64_t rank, int64_t axis) {
  return axis == rank - 1 ? rank - 2 : rank - 1;
}

void NVFP4Attr::getComponentTypes(ArrayRef<int64_t> shape, int64_t axis,
                                  SmallVectorImpl<Type> &types) const {
  MLIRContext *ctx = getContext();
  auto i8 = IntegerType::get(ctx, 8);
  types.push_back(RankedTensorType::get(componentShape(shape, axis, 2), i8));
  // With 16x16 tiles the layout stays one byte per 16 elements along the axis:
  // each tile's byte repeats in its 16 lines, so dequantization (and every
  // consumer of the components) is the same with and without tiles.
  types.push_back(
      RankedTensorType::get(componentShape(shape, axis, kNVFP4Block), i8));
  types.push_back(RankedTensorType::get({}, Float32Type::get(ctx)));
}

void NVFP4Attr::getComponentNames(SmallVectorImpl<StringRef> &names) const {
  names.append({"codes", "scales", "tensor_scale"});
}

LogicalResult NVFP4Attr::verifyShape(function_ref<InFlightDiagnostic()> emitError,
                                     ArrayRef<int64_t> shape,
                                     int64_t axis) const {
  if (!getTile2d())
    return success();
  int64_t rank = shape.size();
  if (rank < 2)
    return emitError() << "#fp4.nvfp4<tile2d = true> needs a tensor of rank >= 2";
  if (axis < rank - 2)
    return emitError() << "#fp4.nvfp4<tile2d = true> tiles the two innermost "
                          "dimensions, but the blocked axis is "
                       << axis;
  int64_t partner = tilePartnerAxis(rank, axis);
  if (ShapedType::isDynamic(shape[partner]) || shape[partner] % kNVFP4Block != 0)
    return emitError() << "#fp4.nvfp4<tile2d = true> needs dimension " << partner
                       << " to be a static multiple of 16";
  return success();
}

//===----------------------------------------------------------------------===//
// Reference quantization (numerics library, ReferenceQuantization.h)
//===----------------------------------------------------------------------===//

int64_t NVFP4Attr::getReferenceRowMultiple() const {
  return getTile2d() ? kNVFP4Block : 1;
}

bool NVFP4Attr::referenceNeedsTensorAmax() const { return true; }

static numerics::NVFP4Params referenceParams(NVFP4Attr attr) {
  numerics::NVFP4Params params;
  params.fourOverSix = attr.getFourOverSix();
  params.tile2d = attr.getTile2d();
  params.rounding = toNumerics(attr.getRounding());
  params.seed = attr.getSeed();
  return params;
}

LogicalResult
NVFP4Attr::quantizeReference(const ReferenceRows &rows, ArrayRef<float> values,
                             float tensorAmax,
                             ArrayRef<MutableArrayRef<char>> components) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  // A tile's 16 rows must be 16 consecutive logical lines for its
  // stochastic-rounding indices to be affine (see the index strides below).
  int64_t inner = rows.logicalInner;
  if (getTile2d() && inner != 1 && inner % kNVFP4Block != 0)
    return failure();
  numerics::NVFP4Params params = referenceParams(*this);
  numerics::NVFP4TensorScale ts = numerics::nvfp4TensorScale(params, tensorAmax);
  int64_t n = rows.cols;
  auto *codes = reinterpret_cast<uint8_t *>(components[0].data());
  auto *scales = reinterpret_cast<uint8_t *>(components[1].data());
  if (!getTile2d()) {
    for (int64_t r = 0; r < rows.numRows; ++r)
      numerics::quantizeNVFP4Row(params, ts, values.data() + r * n, n,
                                 codes + r * (n / 2),
                                 scales + r * (n / kNVFP4Block),
                                 rows.indexBase(rows.firstRow + r),
                                 rows.indexStride());
  } else {
    // Axis last: the tile's lines are rows of the logical matrix, a row
    // apart in index; axis second to last: they are neighbouring columns.
    int64_t rowStride = inner == 1 ? n : 1;
    for (int64_t r = 0; r < rows.numRows; r += kNVFP4Block)
      numerics::quantizeNVFP4Tile2D(params, ts, values.data() + r * n,
                                    kNVFP4Block, n, codes + r * (n / 2),
                                    scales + r * (n / kNVFP4Block),
                                    rows.indexBase(rows.firstRow + r),
                                    rowStride, rows.indexStride());
  }
  if (rows.firstRow == 0)
    std::memcpy(components[2].data(), &ts.decode, sizeof(float));
  return success();
}

LogicalResult
NVFP4Attr::dequantizeReference(const ReferenceRows &rows,
                               ArrayRef<ArrayRef<char>> components,
                               MutableArrayRef<float> values) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  float decode;
  std::memcpy(&decode, components[2].data(), sizeof(float));
  int64_t n = rows.cols;
  auto *codes = reinterpret_cast<const uint8_t *>(components[0].data());
  auto *scales = reinterpret_cast<const uint8_t *>(components[1].data());
  for (int64_t r = 0; r < rows.numRows; ++r)
    numerics::dequantizeNVFP4Row(codes + r * (n / 2),
                                 scales + r * (n / kNVFP4Block), n, decode,
                                 values.data() + r * n);
  return success();
}
