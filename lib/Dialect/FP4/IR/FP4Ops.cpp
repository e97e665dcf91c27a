//===- FP4Ops.cpp - fp4 dialect operations --------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp4;

#define GET_OP_CLASSES
#include "fp4/Dialect/FP4/IR/FP4Ops.cpp.inc"

/// Prints a shape as `[16, ?, 32]` for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

static LogicalResult verifySameShape(Operation *op, ArrayRef<int64_t> floatShape,
                                     ArrayRef<int64_t> quantShape,
                                     StringRef floatName, StringRef quantName) {
  if (floatShape.size() != quantShape.size() ||
      failed(verifyCompatibleShape(floatShape, quantShape)))
    return op->emitOpError() << floatName << " shape " << shapeString(floatShape)
                             << " does not match " << quantName << " shape "
                             << shapeString(quantShape);
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp / DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  return verifySameShape(*this, getInput().getType().getShape(),
                         getResult().getType().getShape(), "input", "result");
}

LogicalResult DequantizeOp::verify() {
  return verifySameShape(*this, getResult().getType().getShape(),
                         getInput().getType().getShape(), "result", "input");
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  auto lhsType = cast<ShapedType>(getLhs().getType());
  auto rhsType = cast<ShapedType>(getRhs().getType());
  auto resultType = getResult().getType();
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  if (lhsRank != 2 && lhsRank != 3)
    return emitOpError() << "lhs must be [M, K] or [B, M, K], got rank "
                         << lhsRank;
  if (rhsRank != 2 && rhsRank != 3)
    return emitOpError() << "rhs must be [N, K] or [B, N, K], got rank "
                         << rhsRank;
  if (rhsRank == 3 && lhsRank != 3)
    return emitOpError() << "a batched rhs [B, N, K] needs a batched lhs "
                            "[B, M, K]";
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"lhs", getLhs()}, {"rhs", getRhs()}}) {
    auto quantType = dyn_cast<QuantizedTensorType>(value.getType());
    if (quantType && quantType.getAxis() != quantType.getRank() - 1)
      return emitOpError() << name << " is quantized along axis "
                           << quantType.getAxis()
                           << ", but fp4.matmul contracts its last axis (K); "
                              "quantize it along axis "
                           << quantType.getRank() - 1;
  }
  ArrayRef<int64_t> lhs = lhsType.getShape(), rhs = rhsType.getShape();
  if (failed(verifyCompatibleShape(ArrayRef<int64_t>{lhs.back()},
                                   ArrayRef<int64_t>{rhs.back()})))
    return emitOpError() << "contraction sizes differ: lhs has K = "
                         << lhs.back() << ", rhs has K = " << rhs.back()
                         << " (both operands are K-major: lhs [M, K], rhs "
                            "[N, K])";
  if (lhsRank == 3 && rhsRank == 3 &&
      failed(verifyCompatibleShape(ArrayRef<int64_t>{lhs[0]},
                                   ArrayRef<int64_t>{rhs[0]})))
    return emitOpError() << "batch sizes differ: lhs " << lhs[0] << ", rhs "
                         << rhs[0];
  SmallVector<int64_t> expected(lhs.drop_back());
  expected.push_back(rhs[rhsRank - 2]);
  if (resultType.getRank() != lhsRank ||
      failed(verifyCompatibleShape(resultType.getShape(), expected)))
    return emitOpError() << "result shape " << shapeString(resultType.getShape())
                         << " does not match the expected shape "
                         << shapeString(expected) << " (lhs "
                         << shapeString(lhs) << " times rhs^T, rhs "
                         << shapeString(rhs) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// PackOp / UnpackOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyComponents(Operation *op, QuantizedTensorType type,
                                      TypeRange components, StringRef role) {
  SmallVector<Type> expected = type.getComponentTypes();
  SmallVector<StringRef> names;
  type.getScheme().getComponentNames(names);
  if (components.size() != expected.size()) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "expected " << expected.size() << " " << role
                              << " for " << type << " (";
    llvm::interleaveComma(names, diag);
    return diag << "), got " << components.size();
  }
  for (auto [index, pair] : llvm::enumerate(llvm::zip(components, expected))) {
    auto [actual, want] = pair;
    if (actual != want)
      return op->emitOpError()
             << "component #" << index << " ('" << names[index]
             << "') has type " << actual << ", expected " << want << " for "
             << type;
  }
  return success();
}

LogicalResult PackOp::verify() {
  return verifyComponents(*this, getResult().getType(),
                          getComponents().getTypes(), "operands");
}

LogicalResult UnpackOp::verify() {
  return verifyComponents(*this, getInput().getType(),
                          getComponents().getTypes(), "results");
}

OpFoldResult PackOp::fold(FoldAdaptor) {
  // pack(unpack(%q)) -> %q when every component is passed through in order.
  auto unpack = getComponents().front().getDefiningOp<UnpackOp>();
  if (!unpack || unpack.getInput().getType() != getResult().getType())
    return {};
  for (auto [index, component] : llvm::enumerate(getComponents()))
    if (component != unpack.getResult(index))
      return {};
  return unpack.getInput();
}

LogicalResult UnpackOp::fold(FoldAdaptor,
                             SmallVectorImpl<OpFoldResult> &results) {
  auto pack = getInput().getDefiningOp<PackOp>();
  if (!pack)
    return failure();
  for (Value component : pack.getComponents())
    results.push_back(component);
  return success();
}
