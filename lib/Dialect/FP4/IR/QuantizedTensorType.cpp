//===- QuantizedTensorType.cpp - !fp4.tensor ------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::fp4;

/// Syntax: `!fp4.tensor<` dims `x` element `,` scheme `, axis =` int `>`.
Type QuantizedTensorType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute scheme;
  int64_t axis = 0;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma())
    return {};
  SMLoc schemeLoc = parser.getCurrentLocation();
  if (parser.parseAttribute(scheme))
    return {};
  auto schemeIface = dyn_cast<QuantSchemeAttrInterface>(scheme);
  if (!schemeIface) {
    parser.emitError(schemeLoc)
        << "expected a quantization scheme attribute (#fp4.mxfp4, "
           "#fp4.nvfp4, #fp4.hif4, #fp4.mxfp4_macro), got "
        << scheme;
    return {};
  }
  if (parser.parseComma() || parser.parseKeyword("axis") ||
      parser.parseEqual() || parser.parseInteger(axis) || parser.parseGreater())
    return {};
  return parser.getChecked<QuantizedTensorType>(loc, parser.getContext(),
                                                ArrayRef<int64_t>(shape),
                                                elementType, schemeIface, axis);
}

void QuantizedTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  printer << "x" << getElementType() << ", ";
  printer.printAttribute(getScheme());
  printer << ", axis = " << getAxis() << ">";
}

LogicalResult
QuantizedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                            ArrayRef<int64_t> shape, Type elementType,
                            QuantSchemeAttrInterface scheme, int64_t axis) {
  if (!scheme)
    return emitError() << "quantized tensor needs a quantization scheme";
  int64_t rank = shape.size();
  if (rank == 0)
    return emitError() << "quantized tensor must have rank >= 1";
  if (axis < 0 || axis >= rank)
    return emitError() << "blocked axis " << axis
                       << " is out of range for a rank-" << rank << " tensor";
  for (int64_t dim : shape)
    if (dim < 0 && !ShapedType::isDynamic(dim))
      return emitError() << "dimension sizes must be non-negative, got " << dim;
  int64_t axisSize = shape[axis];
  if (ShapedType::isDynamic(axisSize))
    return emitError() << "blocked axis " << axis
                       << " must have a static size (blocks are laid out "
                          "along it)";
  int64_t multiple = scheme.getAxisMultiple();
  if (axisSize % multiple != 0)
    return emitError() << "blocked axis " << axis << " has size " << axisSize
                       << ", which is not a multiple of " << multiple
                       << " (the block structure of #fp4."
                       << scheme.getFormatName() << ")";
  if (elementType != scheme.getElementType())
    return emitError() << "element type " << elementType
                       << " does not match the element type "
                       << scheme.getElementType() << " of #fp4."
                       << scheme.getFormatName();
  return scheme.verifyShape(emitError, shape, axis);
}

QuantizedTensorType
QuantizedTensorType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                               Type elementType) const {
  return QuantizedTensorType::get(getContext(), shape ? *shape : getShape(),
                                  elementType, getScheme(), getAxis());
}

SmallVector<Type> QuantizedTensorType::getComponentTypes() const {
  SmallVector<Type> types;
  getScheme().getComponentTypes(getShape(), getAxis(), types);
  return types;
}
