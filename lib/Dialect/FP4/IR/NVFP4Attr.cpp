//===- NVFP4Attr.cpp - #fp4.nvfp4 scheme ----------------------------------===//
//
// NVFP4: E2M1 codes, one E4M3 byte per 16 elements (or per 16x16 tile), and
// one f32 decode scale for the whole tensor.
//
//===----------------------------------------------------------------------===//

#include "SchemeParameters.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

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

double NVFP4Attr::getBitsPerElement() const {
  return getTile2d() ? 4.0 + 8.0 / (kNVFP4Block * kNVFP4Block)
                     : 4.0 + 8.0 / kNVFP4Block;
}

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
  SmallVector<int64_t> scaleShape = componentShape(shape, axis, kNVFP4Block);
  if (getTile2d() && shape.size() >= 2) {
    int64_t partner = tilePartnerAxis(shape.size(), axis);
    if (!ShapedType::isDynamic(scaleShape[partner]))
      scaleShape[partner] /= kNVFP4Block;
  }
  types.push_back(RankedTensorType::get(scaleShape, i8));
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
