//===- HiF4Attr.cpp - #fp4.hif4 scheme ------------------------------------===//
//
// HiFloat4: S1P2 codes plus one 32-bit metadata word per 64-element group
// (E6M2 scale, 8 level-2 bits, 16 level-3 bits; docs/ABI.md).
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

static constexpr int64_t kHiF4Group = 64;

Attribute HiF4Attr::parse(AsmParser &parser, Type) {
  SchemeParameterParser params(parser, getMnemonic());
  if (failed(params.parse()))
    return {};
  return HiF4Attr::get(parser.getContext());
}

void HiF4Attr::print(AsmPrinter &) const {}

StringRef HiF4Attr::getFormatName() const { return getMnemonic(); }

Type HiF4Attr::getElementType() const { return S1P2Type::get(getContext()); }

int64_t HiF4Attr::getBlockSize() const { return 4; }

int64_t HiF4Attr::getAxisMultiple() const { return kHiF4Group; }

double HiF4Attr::getBitsPerElement() const { return 4.0 + 32.0 / kHiF4Group; }

void HiF4Attr::getComponentTypes(ArrayRef<int64_t> shape, int64_t axis,
                                 SmallVectorImpl<Type> &types) const {
  MLIRContext *ctx = getContext();
  types.push_back(RankedTensorType::get(componentShape(shape, axis, 2),
                                        IntegerType::get(ctx, 8)));
  types.push_back(RankedTensorType::get(componentShape(shape, axis, kHiF4Group),
                                        IntegerType::get(ctx, 32)));
}

void HiF4Attr::getComponentNames(SmallVectorImpl<StringRef> &names) const {
  names.append({"codes", "metadata"});
}

LogicalResult HiF4Attr::verifyShape(function_ref<InFlightDiagnostic()>,
                                    ArrayRef<int64_t>, int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// Reference quantization (numerics library, ReferenceQuantization.h)
//===----------------------------------------------------------------------===//

// The metadata words go through a local array: component buffers are bytes
// without any alignment promise.
LogicalResult
HiF4Attr::quantizeReference(const ReferenceRows &rows, ArrayRef<float> values,
                            float, ArrayRef<MutableArrayRef<char>> components) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  numerics::HiF4Params params;
  int64_t n = rows.cols, groups = n / kHiF4Group;
  auto *codes = reinterpret_cast<uint8_t *>(components[0].data());
  std::vector<uint32_t> meta(groups);
  for (int64_t r = 0; r < rows.numRows; ++r) {
    numerics::quantizeHiF4Row(params, values.data() + r * n, n,
                              codes + r * (n / 2), meta.data());
    std::memcpy(components[1].data() + r * groups * sizeof(uint32_t),
                meta.data(), groups * sizeof(uint32_t));
  }
  return success();
}

LogicalResult
HiF4Attr::dequantizeReference(const ReferenceRows &rows,
                              ArrayRef<ArrayRef<char>> components,
                              MutableArrayRef<float> values) const {
  if (failed(checkReferenceArguments(*this, rows, values.size(), components)))
    return failure();
  numerics::HiF4Params params;
  int64_t n = rows.cols, groups = n / kHiF4Group;
  auto *codes = reinterpret_cast<const uint8_t *>(components[0].data());
  std::vector<uint32_t> meta(groups);
  for (int64_t r = 0; r < rows.numRows; ++r) {
    std::memcpy(meta.data(),
                components[1].data() + r * groups * sizeof(uint32_t),
                groups * sizeof(uint32_t));
    numerics::dequantizeHiF4Row(params, codes + r * (n / 2), meta.data(), n,
                                values.data() + r * n);
  }
  return success();
}
