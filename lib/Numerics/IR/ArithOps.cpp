//===- ArithOps.cpp - IR backend of the generic numerics rules ------------===//
//
// One arith/math op per backend call, with no fastmath flags, so that each
// f32/f64 operation is a single IEEE operation rounded to nearest even, as
// OpsConcept.h requires (LLVM never contracts an fmul/fadd pair that does
// not carry the `contract` flag into an FMA).
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp4;

Type ArithOps::typeOf(Type element) const {
  if (vectorShape.empty())
    return element;
  return VectorType::get(vectorShape, element);
}

Value ArithOps::splat(Attribute scalar, Type element) const {
  if (vectorShape.empty())
    return arith::ConstantOp::create(builder, loc, cast<TypedAttr>(scalar));
  auto type = VectorType::get(vectorShape, element);
  return arith::ConstantOp::create(builder, loc,
                                   DenseElementsAttr::get(type, scalar));
}

Value ArithOps::f32(float c) const {
  return splat(builder.getF32FloatAttr(c), builder.getF32Type());
}
Value ArithOps::f64(double c) const {
  return splat(builder.getF64FloatAttr(c), builder.getF64Type());
}
Value ArithOps::i32(int32_t c) const {
  return splat(builder.getI32IntegerAttr(c), builder.getI32Type());
}

Value ArithOps::bitcastToI32(Value v) const {
  return arith::BitcastOp::create(builder, loc, typeOf(builder.getI32Type()),
                                  v);
}
Value ArithOps::bitcastToF32(Value v) const {
  return arith::BitcastOp::create(builder, loc, typeOf(builder.getF32Type()),
                                  v);
}

Value ArithOps::addf(Value a, Value b) const {
  return arith::AddFOp::create(builder, loc, a, b);
}
Value ArithOps::subf(Value a, Value b) const {
  return arith::SubFOp::create(builder, loc, a, b);
}
Value ArithOps::mulf(Value a, Value b) const {
  return arith::MulFOp::create(builder, loc, a, b);
}
Value ArithOps::divf(Value a, Value b) const {
  return arith::DivFOp::create(builder, loc, a, b);
}
// math.absf clears the sign bit (NaN payloads included), exactly as
// ScalarOps::absf does on the bit pattern.
Value ArithOps::absf(Value a) const {
  return math::AbsFOp::create(builder, loc, a);
}
Value ArithOps::negf(Value a) const {
  return arith::NegFOp::create(builder, loc, a);
}
Value ArithOps::floorf(Value a) const {
  return math::FloorOp::create(builder, loc, a);
}

Value ArithOps::extf(Value a) const {
  return arith::ExtFOp::create(builder, loc, typeOf(builder.getF64Type()), a);
}
Value ArithOps::addd(Value a, Value b) const { return addf(a, b); }
Value ArithOps::subd(Value a, Value b) const { return subf(a, b); }
Value ArithOps::muld(Value a, Value b) const { return mulf(a, b); }

Value ArithOps::addi(Value a, Value b) const {
  return arith::AddIOp::create(builder, loc, a, b);
}
Value ArithOps::subi(Value a, Value b) const {
  return arith::SubIOp::create(builder, loc, a, b);
}
Value ArithOps::muli(Value a, Value b) const {
  return arith::MulIOp::create(builder, loc, a, b);
}
Value ArithOps::andi(Value a, Value b) const {
  return arith::AndIOp::create(builder, loc, a, b);
}
Value ArithOps::ori(Value a, Value b) const {
  return arith::OrIOp::create(builder, loc, a, b);
}
Value ArithOps::xori(Value a, Value b) const {
  return arith::XOrIOp::create(builder, loc, a, b);
}
Value ArithOps::shli(Value a, Value b) const {
  return arith::ShLIOp::create(builder, loc, a, b);
}
Value ArithOps::shrui(Value a, Value b) const {
  return arith::ShRUIOp::create(builder, loc, a, b);
}
Value ArithOps::shrsi(Value a, Value b) const {
  return arith::ShRSIOp::create(builder, loc, a, b);
}

static arith::CmpFPredicate toArith(numerics::FPred p) {
  switch (p) {
  case numerics::FPred::OLT:
    return arith::CmpFPredicate::OLT;
  case numerics::FPred::OLE:
    return arith::CmpFPredicate::OLE;
  case numerics::FPred::OGT:
    return arith::CmpFPredicate::OGT;
  case numerics::FPred::OGE:
    return arith::CmpFPredicate::OGE;
  case numerics::FPred::OEQ:
    return arith::CmpFPredicate::OEQ;
  case numerics::FPred::ONE:
    return arith::CmpFPredicate::ONE;
  case numerics::FPred::UNO:
    return arith::CmpFPredicate::UNO;
  case numerics::FPred::ORD:
    return arith::CmpFPredicate::ORD;
  }
  llvm_unreachable("unknown FPred");
}

static arith::CmpIPredicate toArith(numerics::IPred p) {
  switch (p) {
  case numerics::IPred::EQ:
    return arith::CmpIPredicate::eq;
  case numerics::IPred::NE:
    return arith::CmpIPredicate::ne;
  case numerics::IPred::SLT:
    return arith::CmpIPredicate::slt;
  case numerics::IPred::SLE:
    return arith::CmpIPredicate::sle;
  case numerics::IPred::SGT:
    return arith::CmpIPredicate::sgt;
  case numerics::IPred::SGE:
    return arith::CmpIPredicate::sge;
  case numerics::IPred::ULT:
    return arith::CmpIPredicate::ult;
  case numerics::IPred::ULE:
    return arith::CmpIPredicate::ule;
  case numerics::IPred::UGT:
    return arith::CmpIPredicate::ugt;
  case numerics::IPred::UGE:
    return arith::CmpIPredicate::uge;
  }
  llvm_unreachable("unknown IPred");
}

Value ArithOps::cmpf(FPred p, Value a, Value b) const {
  return arith::CmpFOp::create(builder, loc, toArith(p), a, b);
}
Value ArithOps::cmpd(FPred p, Value a, Value b) const { return cmpf(p, a, b); }
Value ArithOps::cmpi(IPred p, Value a, Value b) const {
  return arith::CmpIOp::create(builder, loc, toArith(p), a, b);
}

Value ArithOps::select(Value c, Value a, Value b) const {
  return arith::SelectOp::create(builder, loc, c, a, b);
}
Value ArithOps::selectf(Value c, Value a, Value b) const {
  return select(c, a, b);
}
Value ArithOps::selecti(Value c, Value a, Value b) const {
  return select(c, a, b);
}
Value ArithOps::selectd(Value c, Value a, Value b) const {
  return select(c, a, b);
}
Value ArithOps::andb(Value a, Value b) const {
  return arith::AndIOp::create(builder, loc, a, b);
}
Value ArithOps::orb(Value a, Value b) const {
  return arith::OrIOp::create(builder, loc, a, b);
}
Value ArithOps::notb(Value a) const {
  Value one = splat(builder.getBoolAttr(true), builder.getI1Type());
  return arith::XOrIOp::create(builder, loc, a, one);
}

Value ArithOps::sitofp(Value a) const {
  return arith::SIToFPOp::create(builder, loc, typeOf(builder.getF32Type()),
                                 a);
}
Value ArithOps::fptosi(Value a) const {
  return arith::FPToSIOp::create(builder, loc, typeOf(builder.getI32Type()),
                                 a);
}
