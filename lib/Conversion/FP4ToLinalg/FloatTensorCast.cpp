//===- FloatTensorCast.cpp - elementwise float conversion of tensors ------===//
//
// Rewrite: tensor<...xA> -> linalg.generic { convert } -> tensor<...xB>.
// bf16 and f16 are converted with the numerics rules (BF16.h, F16.h: exact
// widening, round to nearest even with IEEE overflow and NaN handling), the
// same rules the constant folder applies, so no soft-float runtime routine
// (__truncsfbf2, __extendhfsf2, ...) is needed on any target.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/BF16.h"
#include "fp4/Numerics/F16.h"
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
  auto storageBits = [&](Value x) {
    Value bits = arith::BitcastOp::create(b, loc, b.getI16Type(), x);
    return arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
  };
  auto fromStorageBits = [&](Value bits32) {
    Value bits = arith::TruncIOp::create(b, loc, b.getI16Type(), bits32);
    return arith::BitcastOp::create(b, loc, to, bits);
  };
  if (from.isBF16())
    v = numerics::bf16Decode(ops, storageBits(v));
  else if (from.isF16())
    v = numerics::f16Decode(ops, storageBits(v));
  if (to == f32)
    return v;
  if (to.isBF16())
    return fromStorageBits(
        numerics::bf16StorageBits(ops, numerics::roundToBF16(ops, v)));
  return fromStorageBits(
      numerics::f16StorageBits(ops, numerics::roundToF16(ops, v)));
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
