//===- MXFP4Attr.cpp - #fp4.mxfp4 scheme ----------------------------------===//
//
// OCP MXFP4: E2M1 codes plus one E8M0 byte per block along the axis.
//
//===----------------------------------------------------------------------===//

#include "SchemeParameters.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Numerics/Reference.h"

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

Attribute MXFP4Attr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t blockSize = 32;
  ScaleRounding scaleRounding = ScaleRounding::Floor;
  ElementRounding rounding = ElementRounding::NearestEven;
  uint32_t seed = 0;
  SchemeParameterParser params(parser, getMnemonic());
  params.addInt("block_size", blockSize);
  params.addScaleRounding("scale_rounding", scaleRounding);
  params.addElementRounding("rounding", rounding);
  params.addUInt32("seed", seed);
  if (failed(params.parse()))
    return {};
  return parser.getChecked<MXFP4Attr>(loc, parser.getContext(), blockSize,
                                      scaleRounding, rounding, seed);
}

void MXFP4Attr::print(AsmPrinter &printer) const {
  SchemeParameterPrinter params;
  if (getBlockSize() != 32)
    params.add("block_size", std::to_string(getBlockSize()));
  if (getScaleRounding() != ScaleRounding::Floor)
    params.add("scale_rounding", stringifyScaleRounding(getScaleRounding()).str());
  if (getRounding() != ElementRounding::NearestEven)
    params.add("rounding", stringifyElementRounding(getRounding()).str());
  if (getSeed() != 0)
    params.add("seed", std::to_string(getSeed()));
  params.print(printer);
}

LogicalResult MXFP4Attr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t blockSize, ScaleRounding,
                                ElementRounding rounding, uint32_t seed) {
  // Two codes share a byte, so a block must hold an even number of them.
  if (blockSize < 2 || blockSize > 1024 || blockSize % 2 != 0)
    return emitError() << "#fp4.mxfp4: block_size must be an even number in "
                          "[2, 1024], got "
                       << blockSize;
  return verifyElementRounding(emitError, getMnemonic(), rounding, seed);
}

StringRef MXFP4Attr::getFormatName() const { return getMnemonic(); }

Type MXFP4Attr::getElementType() const {
  return Float4E2M1FNType::get(getContext());
}

int64_t MXFP4Attr::getAxisMultiple() const { return getBlockSize(); }

double MXFP4Attr::getBitsPerElement() const {
  return 4.0 + 8.0 / static_cast<double>(getBlockSize());
}

void MXFP4Attr::getComponentTypes(ArrayRef<int64_t> shape, int64_t axis,
                                  SmallVectorImpl<Type> &types) const {
  auto i8 = IntegerType::get(getContext(), 8);
  types.push_back(RankedTensorType::get(componentShape(shape, axis, 2), i8));
  types.push_back(
      RankedTensorType::get(componentShape(shape, axis, getBlockSize()), i8));
}

void MXFP4Attr::getComponentNames(SmallVectorImpl<StringRef> &names) const {
  names.append({"codes", "scales"});
}

LogicalResult MXFP4Attr::verifyShape(function_ref<InFlightDiagnostic()>,
                                     ArrayRef<int64_t>, int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// Reference quantization (numerics library, ReferenceQuantization.h)
//===----------------------------------------------------------------------===//

static numerics::MXFP4Params referenceParams(MXFP4Attr attr) {
  numerics::MXFP4Params params;
  params.blockSize = attr.getBlockSize();
  params.scaleRounding = toNumerics(attr.getScaleRounding());
  params.rounding = toNumerics(attr.getRounding());
  params.seed = attr.getSeed();
  return params;
}

LogicalResult
MXFP4Attr::quantizeReference(const ReferenceRows &rows, ArrayRef<float> values,
                             float, ArrayRef<MutableArrayRef<char>> components) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  numerics::MXFP4Params params = referenceParams(*this);
  int64_t n = rows.cols;
  auto *codes = reinterpret_cast<uint8_t *>(components[0].data());
  auto *scales = reinterpret_cast<uint8_t *>(components[1].data());
  for (int64_t r = 0; r < rows.numRows; ++r)
    numerics::quantizeMXFP4Row(params, values.data() + r * n, n,
                               codes + r * (n / 2),
                               scales + r * (n / params.blockSize),
                               rows.indexBase(rows.firstRow + r),
                               rows.indexStride());
  return success();
}

LogicalResult
MXFP4Attr::dequantizeReference(const ReferenceRows &rows,
                               ArrayRef<ArrayRef<char>> components,
                               MutableArrayRef<float> values) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  numerics::MXFP4Params params = referenceParams(*this);
  int64_t n = rows.cols;
  auto *codes = reinterpret_cast<const uint8_t *>(components[0].data());
  auto *scales = reinterpret_cast<const uint8_t *>(components[1].data());
  for (int64_t r = 0; r < rows.numRows; ++r)
    numerics::dequantizeMXFP4Row(params, codes + r * (n / 2),
                                 scales + r * (n / params.blockSize), n,
                                 values.data() + r * n);
  return success();
}
