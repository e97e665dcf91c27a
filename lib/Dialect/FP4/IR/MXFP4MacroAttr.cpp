//===- MXFP4MacroAttr.cpp - #fp4.mxfp4_macro scheme -----------------------===//
//
// Macro-block-scaled MXFP4: MXFP4 codes and E8M0 bytes per 32, plus one bf16
// factor in [1, 2) per macro block.
//
//===----------------------------------------------------------------------===//

#include "SchemeParameters.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Numerics/Reference.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

static constexpr int64_t kMXBlock = 32;
static constexpr int64_t kMaxMacroBlock = 1 << 16;
static constexpr int64_t kMaxSearch = 256;

Attribute MXFP4MacroAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t macroBlock = 256, search = 0;
  ScaleRounding scaleRounding = ScaleRounding::Floor;
  ElementRounding rounding = ElementRounding::NearestEven;
  uint32_t seed = 0;
  SchemeParameterParser params(parser, getMnemonic());
  params.addInt("macro_block", macroBlock);
  params.addInt("search", search);
  params.addScaleRounding("scale_rounding", scaleRounding);
  params.addElementRounding("rounding", rounding);
  params.addUInt32("seed", seed);
  if (failed(params.parse()))
    return {};
  return parser.getChecked<MXFP4MacroAttr>(loc, parser.getContext(), macroBlock,
                                           search, scaleRounding, rounding, seed);
}

void MXFP4MacroAttr::print(AsmPrinter &printer) const {
  SchemeParameterPrinter params;
  if (getMacroBlock() != 256)
    params.add("macro_block", std::to_string(getMacroBlock()));
  if (getSearch() != 0)
    params.add("search", std::to_string(getSearch()));
  if (getScaleRounding() != ScaleRounding::Floor)
    params.add("scale_rounding", stringifyScaleRounding(getScaleRounding()).str());
  if (getRounding() != ElementRounding::NearestEven)
    params.add("rounding", stringifyElementRounding(getRounding()).str());
  if (getSeed() != 0)
    params.add("seed", std::to_string(getSeed()));
  params.print(printer);
}

LogicalResult
MXFP4MacroAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t macroBlock, int64_t search, ScaleRounding,
                       ElementRounding rounding, uint32_t seed) {
  if (macroBlock != 0 &&
      (macroBlock < kMXBlock || macroBlock > kMaxMacroBlock ||
       macroBlock % kMXBlock != 0))
    return emitError() << "#fp4.mxfp4_macro: macro_block must be 0 (whole axis) "
                          "or a multiple of 32 in [32, 65536], got "
                       << macroBlock;
  if (search < 0 || search > kMaxSearch)
    return emitError() << "#fp4.mxfp4_macro: search must be in [0, 256], got "
                       << search;
  return verifyElementRounding(emitError, getMnemonic(), rounding, seed);
}

StringRef MXFP4MacroAttr::getFormatName() const { return getMnemonic(); }

Type MXFP4MacroAttr::getElementType() const {
  return Float4E2M1FNType::get(getContext());
}

int64_t MXFP4MacroAttr::getBlockSize() const { return kMXBlock; }

int64_t MXFP4MacroAttr::getAxisMultiple() const {
  return getMacroBlock() == 0 ? kMXBlock : getMacroBlock();
}

double MXFP4MacroAttr::getBitsPerElement() const {
  // A whole-axis macro block costs 16 bits per row; count it as one block.
  double macro = getMacroBlock() == 0 ? 4096.0 : getMacroBlock();
  return 4.0 + 8.0 / kMXBlock + 16.0 / macro;
}

void MXFP4MacroAttr::getComponentTypes(ArrayRef<int64_t> shape, int64_t axis,
                                       SmallVectorImpl<Type> &types) const {
  MLIRContext *ctx = getContext();
  auto i8 = IntegerType::get(ctx, 8);
  types.push_back(RankedTensorType::get(componentShape(shape, axis, 2), i8));
  types.push_back(RankedTensorType::get(componentShape(shape, axis, kMXBlock), i8));
  int64_t macro = getMacroBlock();
  SmallVector<int64_t> factorShape(shape);
  if (macro == 0)
    factorShape[axis] = 1;
  else if (!ShapedType::isDynamic(factorShape[axis]))
    factorShape[axis] /= macro;
  types.push_back(RankedTensorType::get(factorShape, BFloat16Type::get(ctx)));
}

void MXFP4MacroAttr::getComponentNames(SmallVectorImpl<StringRef> &names) const {
  names.append({"codes", "scales", "factors"});
}

LogicalResult MXFP4MacroAttr::verifyShape(function_ref<InFlightDiagnostic()>,
                                          ArrayRef<int64_t>, int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// Reference quantization (numerics library, ReferenceQuantization.h)
//===----------------------------------------------------------------------===//

static numerics::MacroParams referenceParams(MXFP4MacroAttr attr) {
  numerics::MacroParams params;
  params.mx.blockSize = kMXBlock;
  params.mx.scaleRounding = toNumerics(attr.getScaleRounding());
  params.mx.rounding = toNumerics(attr.getRounding());
  params.mx.seed = attr.getSeed();
  params.macroBlock = attr.getMacroBlock();
  params.search = static_cast<int32_t>(attr.getSearch());
  return params;
}

/// Factors per row: one per macro block, or one for a whole-axis block.
static int64_t factorsPerRow(const numerics::MacroParams &params, int64_t n) {
  return params.macroBlock == 0 ? 1 : n / params.macroBlock;
}

// The bf16 factors go through a local array: component buffers are bytes
// without any alignment promise.
LogicalResult MXFP4MacroAttr::quantizeReference(
    const ReferenceRows &rows, ArrayRef<float> values, float,
    ArrayRef<MutableArrayRef<char>> components) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  numerics::MacroParams params = referenceParams(*this);
  int64_t n = rows.cols, nf = factorsPerRow(params, n);
  auto *codes = reinterpret_cast<uint8_t *>(components[0].data());
  auto *scales = reinterpret_cast<uint8_t *>(components[1].data());
  std::vector<uint16_t> factors(nf);
  for (int64_t r = 0; r < rows.numRows; ++r) {
    numerics::quantizeMacroRow(params, values.data() + r * n, n,
                               codes + r * (n / 2), scales + r * (n / kMXBlock),
                               factors.data(), rows.indexBase(rows.firstRow + r),
                               rows.indexStride());
    std::memcpy(components[2].data() + r * nf * sizeof(uint16_t),
                factors.data(), nf * sizeof(uint16_t));
  }
  return success();
}

LogicalResult MXFP4MacroAttr::dequantizeReference(
    const ReferenceRows &rows, ArrayRef<ArrayRef<char>> components,
    MutableArrayRef<float> values) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  numerics::MacroParams params = referenceParams(*this);
  int64_t n = rows.cols, nf = factorsPerRow(params, n);
  auto *codes = reinterpret_cast<const uint8_t *>(components[0].data());
  auto *scales = reinterpret_cast<const uint8_t *>(components[1].data());
  std::vector<uint16_t> factors(nf);
  for (int64_t r = 0; r < rows.numRows; ++r) {
    std::memcpy(factors.data(),
                components[2].data() + r * nf * sizeof(uint16_t),
                nf * sizeof(uint16_t));
    numerics::dequantizeMacroRow(params, codes + r * (n / 2),
                                 scales + r * (n / kMXBlock), factors.data(), n,
                                 values.data() + r * n);
  }
  return success();
}
