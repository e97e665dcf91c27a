//===- CorrectionOps.cpp - outlier and residual correction ops ------------===//
//
// Verifiers of fp4.split_outliers, fp4.split_channels, fp4.residual and
// fp4.correction_matmul (FP4CorrectionOps.td). The block-sparse layout is
// checked in one place, verifySparsePair, so the ops agree on it.
//
//===----------------------------------------------------------------------===//

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Numerics/Outliers.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp4;

#define GET_OP_CLASSES
#include "fp4/Dialect/FP4/IR/FP4CorrectionOps.cpp.inc"

/// A shape as `[16, ?, 32]` for diagnostics.
static std::string shapeText(ArrayRef<int64_t> shape) {
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

/// 1 <= k <= blockSize <= 128.
static LogicalResult verifyBlockAndK(Operation *op, int64_t blockSize,
                                     std::optional<int64_t> k) {
  if (blockSize < 1 || blockSize > numerics::kMaxSparseBlock)
    return op->emitOpError()
           << "block size " << blockSize << " is outside [1, "
           << numerics::kMaxSparseBlock << "] (in-block indices are i8)";
  if (k && (*k < 1 || *k > blockSize))
    return op->emitOpError() << "k = " << *k << " is outside [1, " << blockSize
                             << "] (the block size)";
  return success();
}

/// Checks that `values` / `indices` are the block-sparse form, blocks of
/// `blockSize` along the last axis, of a tensor of shape `dense` (dynamic
/// dimensions are compatible with anything), with k entries per block when
/// `k` is given. `what` names the pair in messages.
static LogicalResult verifySparsePair(Operation *op, StringRef what,
                                      ShapedType values, ShapedType indices,
                                      ArrayRef<int64_t> dense,
                                      int64_t blockSize,
                                      std::optional<int64_t> k) {
  if (values.getShape() != indices.getShape())
    return op->emitOpError()
           << what << " values " << shapeText(values.getShape())
           << " and indices " << shapeText(indices.getShape())
           << " must have the same shape";
  if (!indices.getElementType().isInteger(8))
    return op->emitOpError()
           << what << " indices must be i8, got " << indices.getElementType();
  if (!isa<FloatType>(values.getElementType()))
    return op->emitOpError()
           << what << " values must be floats, got " << values.getElementType();
  if (values.getRank() != static_cast<int64_t>(dense.size()) + 1)
    return op->emitOpError()
           << what << " values " << shapeText(values.getShape())
           << " must have rank " << dense.size() + 1
           << " ([.., rows, blocks, k] for a tensor of shape "
           << shapeText(dense) << ")";
  if (k && values.getShape().back() != *k)
    return op->emitOpError()
           << what << " values " << shapeText(values.getShape())
           << " must have k = " << *k << " entries per block (last dimension)";
  if (values.isDynamicDim(values.getRank() - 1))
    return op->emitOpError() << what << " values must have a static k "
                             << "(last dimension)";
  SmallVector<int64_t> expected(dense.drop_back());
  int64_t cols = dense.back();
  expected.push_back(ShapedType::isDynamic(cols) ? ShapedType::kDynamic
                                                 : cols / blockSize);
  expected.push_back(values.getShape().back());
  if (failed(verifyCompatibleShape(values.getShape(), expected)))
    return op->emitOpError()
           << what << " values " << shapeText(values.getShape())
           << " do not match the expected shape " << shapeText(expected)
           << " (blocks of " << blockSize << " along the last axis of "
           << shapeText(dense) << ")";
  return success();
}

/// The last axis of `shape` is static and a multiple of `blockSize`.
static LogicalResult verifyBlockedAxis(Operation *op, StringRef what,
                                       ArrayRef<int64_t> shape,
                                       int64_t blockSize) {
  if (shape.empty())
    return op->emitOpError() << what << " must have rank >= 1";
  if (ShapedType::isDynamic(shape.back()))
    return op->emitOpError() << what
                             << " must have a static last axis (the "
                                "blocked axis)";
  if (shape.back() % blockSize != 0)
    return op->emitOpError()
           << what << " last axis " << shape.back()
           << " is not a multiple of the block size " << blockSize;
  return success();
}

//===----------------------------------------------------------------------===//
// SplitOutliersOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOutliersOp::verify() {
  int64_t blockSize = getBlockSize(), k = getK();
  if (failed(verifyBlockAndK(*this, blockSize, k)))
    return failure();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  if (failed(verifyBlockedAxis(*this, "input", shape, blockSize)))
    return failure();
  return verifySparsePair(*this, "outlier", getValues().getType(),
                          getIndices().getType(), shape, blockSize, k);
}

//===----------------------------------------------------------------------===//
// SplitChannelsOp
//===----------------------------------------------------------------------===//

LogicalResult SplitChannelsOp::verify() {
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  ArrayRef<int64_t> channels = getChannels();
  if (shape.empty())
    return emitOpError() << "input must have rank >= 1";
  if (ShapedType::isDynamic(shape.back()))
    return emitOpError() << "input must have a static last axis (the channel "
                            "axis)";
  if (channels.empty())
    return emitOpError() << "needs at least one channel";
  for (auto [i, channel] : llvm::enumerate(channels)) {
    if (channel < 0 || channel >= shape.back())
      return emitOpError() << "channel " << channel << " is outside [0, "
                           << shape.back() << ")";
    if (i > 0 && channel <= channels[i - 1])
      return emitOpError() << "channels must be strictly increasing, got "
                           << channels[i - 1] << " before " << channel;
  }
  SmallVector<int64_t> expected(shape.drop_back());
  expected.push_back(channels.size());
  ArrayRef<int64_t> gathered = getGathered().getType().getShape();
  if (gathered.size() != expected.size() ||
      failed(verifyCompatibleShape(gathered, expected)))
    return emitOpError() << "gathered shape " << shapeText(gathered)
                         << " does not match the expected shape "
                         << shapeText(expected) << " (" << channels.size()
                         << " channels of " << shapeText(shape) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// ResidualOp
//===----------------------------------------------------------------------===//

LogicalResult ResidualOp::verify() {
  int64_t blockSize = getBlockSize(), k = getK();
  if (failed(verifyBlockAndK(*this, blockSize, k)))
    return failure();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  ArrayRef<int64_t> quantShape = getQuantized().getType().getShape();
  if (shape.size() != quantShape.size() ||
      failed(verifyCompatibleShape(shape, quantShape)))
    return emitOpError() << "input shape " << shapeText(shape)
                         << " does not match quantized shape "
                         << shapeText(quantShape);
  if (failed(verifyBlockedAxis(*this, "input", shape, blockSize)))
    return failure();
  return verifySparsePair(*this, "residual", getValues().getType(),
                          getIndices().getType(), shape, blockSize, k);
}

//===----------------------------------------------------------------------===//
// CorrectionMatmulOp
//===----------------------------------------------------------------------===//

/// Logical shape of a correction operand: the dense tensor's shape, or the
/// dense shape a (values, indices) pair stands for.
static SmallVector<int64_t> logicalShape(ValueRange operand,
                                         std::optional<int64_t> blockSize) {
  ArrayRef<int64_t> shape = cast<ShapedType>(operand[0].getType()).getShape();
  if (operand.size() == 1 || shape.size() < 2)
    return SmallVector<int64_t>(shape);
  SmallVector<int64_t> dense(shape.drop_back(2));
  int64_t blocks = shape[shape.size() - 2];
  dense.push_back(ShapedType::isDynamic(blocks) || !blockSize
                      ? ShapedType::kDynamic
                      : blocks * *blockSize);
  return dense;
}

SmallVector<int64_t> CorrectionMatmulOp::getLhsShape() {
  return logicalShape(getLhs(), getLhsBlockSize());
}

SmallVector<int64_t> CorrectionMatmulOp::getRhsShape() {
  return logicalShape(getRhs(), getRhsBlockSize());
}

/// One side of the product: a dense float or quantized tensor, or a
/// block-sparse pair with its block size.
static LogicalResult verifyCorrectionOperand(Operation *op, StringRef name,
                                             ValueRange operand,
                                             std::optional<int64_t> blockSize,
                                             StringRef blockAttrName) {
  if (operand.size() != 1 && operand.size() != 2)
    return op->emitOpError()
           << name << " must be one dense tensor or a (values, indices) "
           << "pair, got " << operand.size() << " operands";
  if (operand.size() == 1) {
    if (blockSize)
      return op->emitOpError() << "'" << blockAttrName << "' is only valid "
                               << "with a block-sparse " << name;
    Type type = operand[0].getType();
    if (auto quantType = dyn_cast<QuantizedTensorType>(type)) {
      if (quantType.getAxis() != quantType.getRank() - 1)
        return op->emitOpError()
               << name << " is quantized along axis " << quantType.getAxis()
               << ", but the product contracts its last axis (K)";
      return success();
    }
    if (!isa<FloatType>(getElementTypeOrSelf(type)))
      return op->emitOpError()
             << "dense " << name << " must be a float or quantized tensor, got "
             << type;
    return success();
  }
  if (!blockSize)
    return op->emitOpError()
           << "block-sparse " << name << " needs '" << blockAttrName << "'";
  if (failed(verifyBlockAndK(op, *blockSize, std::nullopt)))
    return failure();
  auto values = dyn_cast<RankedTensorType>(operand[0].getType());
  auto indices = dyn_cast<RankedTensorType>(operand[1].getType());
  if (!values || !indices)
    return op->emitOpError()
           << "block-sparse " << name << " values and indices must be tensors";
  if (values.getRank() < 3)
    return op->emitOpError() << "block-sparse " << name << " values "
                             << shapeText(values.getShape())
                             << " must have rank 3 or 4 ([B?, rows, blocks, "
                                "k])";
  if (values.getShape().back() > *blockSize)
    return op->emitOpError()
           << "block-sparse " << name << " has k = " << values.getShape().back()
           << " entries per block of " << *blockSize;
  return verifySparsePair(op, name, values, indices,
                          logicalShape(operand, blockSize), *blockSize,
                          std::nullopt);
}

LogicalResult CorrectionMatmulOp::verify() {
  if (failed(verifyCorrectionOperand(*this, "lhs", getLhs(), getLhsBlockSize(),
                                     "lhs_block_size")) ||
      failed(verifyCorrectionOperand(*this, "rhs", getRhs(), getRhsBlockSize(),
                                     "rhs_block_size")))
    return failure();
  SmallVector<int64_t> lhs = getLhsShape(), rhs = getRhsShape();
  int64_t lhsRank = lhs.size(), rhsRank = rhs.size();
  if (lhsRank != 2 && lhsRank != 3)
    return emitOpError() << "lhs must be [M, K] or [B, M, K], got "
                         << shapeText(lhs);
  if (rhsRank != 2 && rhsRank != 3)
    return emitOpError() << "rhs must be [N, K] or [B, N, K], got "
                         << shapeText(rhs);
  if (rhsRank == 3 && lhsRank != 3)
    return emitOpError() << "a batched rhs [B, N, K] needs a batched lhs "
                            "[B, M, K]";
  if (failed(verifyCompatibleShape(ArrayRef<int64_t>{lhs.back()},
                                   ArrayRef<int64_t>{rhs.back()})))
    return emitOpError() << "contraction sizes differ: lhs " << shapeText(lhs)
                         << " has K = " << lhs.back() << ", rhs "
                         << shapeText(rhs) << " has K = " << rhs.back();
  if (lhsRank == 3 && rhsRank == 3 &&
      failed(verifyCompatibleShape(ArrayRef<int64_t>{lhs[0]},
                                   ArrayRef<int64_t>{rhs[0]})))
    return emitOpError() << "batch sizes differ: lhs " << lhs[0] << ", rhs "
                         << rhs[0];
  SmallVector<int64_t> expected(ArrayRef(lhs).drop_back());
  expected.push_back(rhs[rhsRank - 2]);
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (result.size() != expected.size() ||
      failed(verifyCompatibleShape(result, expected)))
    return emitOpError() << "result shape " << shapeText(result)
                         << " does not match the expected shape "
                         << shapeText(expected) << " (lhs " << shapeText(lhs)
                         << " times rhs^T, rhs " << shapeText(rhs) << ")";
  if (Value acc = getAcc()) {
    ArrayRef<int64_t> accShape = cast<ShapedType>(acc.getType()).getShape();
    if (accShape.size() != result.size() ||
        failed(verifyCompatibleShape(accShape, result)))
      return emitOpError() << "accumulator shape " << shapeText(accShape)
                           << " does not match the result shape "
                           << shapeText(result);
  }
  return success();
}
