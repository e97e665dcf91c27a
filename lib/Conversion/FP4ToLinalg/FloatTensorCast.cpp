//===- FloatTensorCast.cpp - elementwise float conversion of tensors ------===//
//
// Rewrite: tensor<...xA> -> linalg.generic { convert } -> tensor<...xB>.
// bf16 is converted with the numerics rules (bit manipulation: exact
// extension, round to nearest even with correct NaN/overflow handling), so
// it needs no soft-float runtime routine; f16 uses arith.extf/truncf.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fp4/Conversion/FP4ToLinalg/ArithOps.h"
#include "fp4/Numerics/BF16.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp4;

static Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  ArithOps ops(b, loc);
  Type f32 = b.getF32Type();
  // Go through f32: every supported conversion is exact into f32 and
  // rounds once out of it.
  if (from.isBF16()) {
    Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), v);
    v = numerics::bf16Decode(ops,
                             arith::ExtUIOp::create(b, loc, b.getI32Type(), bits));
  } else if (from != f32) {
    v = arith::ExtFOp::create(b, loc, f32, v);
  }
  if (to == f32)
    return v;
  if (to.isBF16()) {
    Value bits = numerics::bf16StorageBits(ops, numerics::roundToBF16(ops, v));
    return arith::BitcastOp::create(
        b, loc, to, arith::TruncIOp::create(b, loc, b.getI16Type(), bits));
  }
  return arith::TruncFOp::create(b, loc, to, v);
}

Value mlir::fp4::detail::castFloatTensor(OpBuilder &b, Location loc,
                                         Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, value), elementType);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{value}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l,
                                convertScalar(nb, l, args[0], elementType));
      });
  return op.getResult(0);
}
