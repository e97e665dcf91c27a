//===- HiF4Attr.cpp - #fp4.hif4 scheme ------------------------------------===//
//
// HiFloat4: S1P2 codes plus one 32-bit metadata word per 64-element group
// (E6M2 scale, 8 level-2 bits, 16 level-3 bits; docs/ABI.md).
//
//===----------------------------------------------------------------------===//

#include "SchemeParameters.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

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
