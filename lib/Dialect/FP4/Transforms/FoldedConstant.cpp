//===- FoldedConstant.cpp - constants computed at compile time ------------===//

#include "FoldedConstant.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/ScalarOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4;
using namespace mlir::fp4::detail;

/// Whether all `elementBytes`-byte elements of `data` are equal (a splat,
/// e.g. the codes of a splat constant, is kept as a splat literal).
static bool isUniform(ArrayRef<char> data, int64_t elementBytes) {
  for (size_t i = elementBytes; i < data.size(); i += elementBytes)
    if (std::memcmp(data.data(), data.data() + i, elementBytes) != 0)
      return false;
  return true;
}

ConstantStorage::ConstantStorage(ShapedType type)
    : type(type), elementBytes(type.getElementTypeBitWidth() / 8) {
  int64_t bytes = type.getNumElements() * elementBytes;
  if (type.getNumElements() < kInlineElements) {
    small.resize(bytes);
    data = small;
  } else {
    blob = HeapAsmResourceBlob::allocate(bytes, alignof(uint64_t));
    data = blob.getMutableData();
  }
}

TypedAttr ConstantStorage::finish(const Twine &name) {
  if (type.getNumElements() < kInlineElements)
    return DenseElementsAttr::getFromRawBuffer(type, small);
  if (isUniform(data, elementBytes))
    return DenseElementsAttr::getFromRawBuffer(type,
                                               data.take_front(elementBytes));
  return DenseResourceElementsAttr::get(type, name.str(), std::move(blob));
}

void mlir::fp4::detail::storeFloatElements(Type elementType,
                                           ArrayRef<float> values,
                                           MutableArrayRef<char> bytes) {
  char *data = bytes.data();
  if (elementType.isF32()) {
    // An empty constant has no buffer: memcpy needs valid pointers even for
    // zero bytes (UBSan, tests with K = 0).
    if (!values.empty())
      std::memcpy(data, values.data(), values.size() * sizeof(float));
    return;
  }
  constexpr numerics::ScalarOps ops{};
  bool bf16 = elementType.isBF16();
  for (size_t i = 0; i < values.size(); ++i) {
    auto bits = static_cast<uint16_t>(
        bf16 ? numerics::bf16StorageBits(ops,
                                         numerics::roundToBF16(ops, values[i]))
             : numerics::f16StorageBits(ops,
                                        numerics::roundToF16(ops, values[i])));
    std::memcpy(data + 2 * i, &bits, 2);
  }
}

void mlir::fp4::detail::eraseDeadProducers(PatternRewriter &rewriter,
                                           Value value) {
  SmallVector<Operation *> worklist;
  llvm::SmallPtrSet<Operation *, 8> erased;
  if (Operation *def = value.getDefiningOp())
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val();
    // Checked before `def` is touched: it may already be erased.
    if (erased.contains(def) || !isOpTriviallyDead(def))
      continue;
    for (Value operand : def->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
    erased.insert(def);
    rewriter.eraseOp(def);
  }
}

std::string mlir::fp4::detail::blobStem(StringRef sourceName, Location loc) {
  if (!sourceName.empty())
    return sourceName.str();
  if (auto nameLoc = dyn_cast<NameLoc>(loc))
    return nameLoc.getName().str();
  return "const";
}

