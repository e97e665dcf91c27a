//===- ConstantBytes.cpp - raw bytes of a constant tensor -----------------===//

#include "fp4/Dialect/FP4/IR/ConstantBytes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;

LogicalResult mlir::fp4::readConstantBytes(Value value, ShapedType type,
                                          std::vector<char> &expanded,
                                          ArrayRef<char> &bytes) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return failure();
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  int64_t size = type.getNumElements() * elementBytes;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
    bytes = dense.getRawData();
    if (dense.isSplat() && size != elementBytes) {
      expanded.resize(size);
      for (int64_t i = 0; i < size; i += elementBytes)
        std::memcpy(expanded.data() + i, bytes.data(), elementBytes);
      bytes = expanded;
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    bytes = blob->getData();
  } else {
    return failure();
  }
  return success(static_cast<int64_t>(bytes.size()) == size);
}
