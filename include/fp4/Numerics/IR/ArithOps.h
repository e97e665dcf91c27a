//===- ArithOps.h - IR backend of the generic numerics rules ----*- C++ -*-===//
//
// ArithOps implements the arithmetic backend concept of the numerics library
// (fp4/Numerics/OpsConcept.h) by building arith/math operations. Running a
// rule such as `e2m1Encode(ops, x, mode, bits)` with an ArithOps emits the
// exact sequence of IEEE operations that ScalarOps executes in C++, so the
// lowered IR and the constant folder cannot disagree.
//
// Values are scalars or vectors: with a vector shape set, every constant is
// a splat of that shape and every operation is elementwise, so the same rule
// builds vectorized code (a GPU lowering can use vector<4xf32> lanes).
//
// The rules' arithmetic must be one IEEE operation per call: no fastmath
// flags are set on any op, and arith.maximumf/minimumf are never used for
// the rules' min/max (those are built from compare + select by the rules).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_IR_ARITHOPS_H
#define FP4_NUMERICS_IR_ARITHOPS_H

#include "fp4/Numerics/OpsConcept.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::fp4 {

class ArithOps {
public:
  using F32 = Value;
  using F64 = Value;
  using I32 = Value;
  using Bool = Value;
  using FPred = numerics::FPred;
  using IPred = numerics::IPred;

  /// Scalar backend: values are f32, f64, i32 and i1.
  ArithOps(OpBuilder &builder, Location loc) : builder(builder), loc(loc) {}
  /// Vector backend: values are vector<shape x f32/f64/i32/i1>.
  ArithOps(OpBuilder &builder, Location loc, ArrayRef<int64_t> vectorShape)
      : builder(builder), loc(loc), vectorShape(vectorShape) {}

  OpBuilder &getBuilder() const { return builder; }
  Location getLoc() const { return loc; }
  /// The type of a value of element type `element` in this backend (the
  /// element itself or a vector of it).
  Type typeOf(Type element) const;

  F32 f32(float c) const;
  F64 f64(double c) const;
  I32 i32(int32_t c) const;

  I32 bitcastToI32(F32 v) const;
  F32 bitcastToF32(I32 v) const;

  F32 addf(F32 a, F32 b) const;
  F32 subf(F32 a, F32 b) const;
  F32 mulf(F32 a, F32 b) const;
  F32 divf(F32 a, F32 b) const;
  F32 absf(F32 a) const;
  F32 negf(F32 a) const;
  F32 floorf(F32 a) const;

  F64 extf(F32 a) const;
  F64 addd(F64 a, F64 b) const;
  F64 subd(F64 a, F64 b) const;
  F64 muld(F64 a, F64 b) const;

  I32 addi(I32 a, I32 b) const;
  I32 subi(I32 a, I32 b) const;
  I32 muli(I32 a, I32 b) const;
  I32 andi(I32 a, I32 b) const;
  I32 ori(I32 a, I32 b) const;
  I32 xori(I32 a, I32 b) const;
  I32 shli(I32 a, I32 b) const;
  I32 shrui(I32 a, I32 b) const;
  I32 shrsi(I32 a, I32 b) const;

  Bool cmpf(FPred p, F32 a, F32 b) const;
  Bool cmpd(FPred p, F64 a, F64 b) const;
  Bool cmpi(IPred p, I32 a, I32 b) const;

  F32 selectf(Bool c, F32 a, F32 b) const;
  I32 selecti(Bool c, I32 a, I32 b) const;
  F64 selectd(Bool c, F64 a, F64 b) const;
  Bool andb(Bool a, Bool b) const;
  Bool orb(Bool a, Bool b) const;
  Bool notb(Bool a) const;

  F32 sitofp(I32 a) const;
  I32 fptosi(F32 a) const;

private:
  Value splat(Attribute scalar, Type element) const;
  Value select(Bool c, Value a, Value b) const;

  OpBuilder &builder;
  Location loc;
  SmallVector<int64_t, 2> vectorShape;
};

} // namespace mlir::fp4

#endif // FP4_NUMERICS_IR_ARITHOPS_H
