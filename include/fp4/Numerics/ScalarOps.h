//===- ScalarOps.h - C++ backend of the scalar rules ------------*- C++ -*-===//
//
// ScalarOps runs the generic scalar rules (see OpsConcept.h) on plain C++
// values. It is what the reference quantizers and the constant folder use.
//
// Floating-point contraction is disabled in each f32/f64 operation: after
// inlining, `addf(mulf(a, b), c)` must stay two roundings, exactly as the
// emitted arith ops, even under -ffp-contract=fast (GCC's default).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_SCALAROPS_H
#define FP4_NUMERICS_SCALAROPS_H

#include "fp4/Numerics/OpsConcept.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__clang__)
#define FP4_NO_CONTRACT _Pragma("clang fp contract(off)")
#else
#define FP4_NO_CONTRACT
#endif

namespace mlir::fp4::numerics {

struct ScalarOps {
  using F32 = float;
  using F64 = double;
  using I32 = int32_t;
  using Bool = bool;

  F32 f32(float c) const { return c; }
  F64 f64(double c) const { return c; }
  I32 i32(int32_t c) const { return c; }

  I32 bitcastToI32(F32 v) const {
    uint32_t u;
    std::memcpy(&u, &v, sizeof(u));
    return static_cast<I32>(u);
  }
  F32 bitcastToF32(I32 v) const {
    uint32_t u = static_cast<uint32_t>(v);
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  }

  F32 addf(F32 a, F32 b) const {
    FP4_NO_CONTRACT
    return a + b;
  }
  F32 subf(F32 a, F32 b) const {
    FP4_NO_CONTRACT
    return a - b;
  }
  F32 mulf(F32 a, F32 b) const {
    FP4_NO_CONTRACT
    return a * b;
  }
  F32 divf(F32 a, F32 b) const {
    FP4_NO_CONTRACT
    return a / b;
  }
  F32 absf(F32 a) const { return bitcastToF32(bitcastToI32(a) & 0x7FFFFFFF); }
  F32 negf(F32 a) const {
    return bitcastToF32(
        static_cast<I32>(static_cast<uint32_t>(bitcastToI32(a)) ^ 0x80000000u));
  }
  F32 floorf(F32 a) const { return std::floor(a); }

  F64 extf(F32 a) const { return static_cast<double>(a); }
  F64 addd(F64 a, F64 b) const {
    FP4_NO_CONTRACT
    return a + b;
  }
  F64 subd(F64 a, F64 b) const {
    FP4_NO_CONTRACT
    return a - b;
  }
  F64 muld(F64 a, F64 b) const {
    FP4_NO_CONTRACT
    return a * b;
  }

  // Integer arithmetic wraps as in arith: compute on uint32_t.
  static uint32_t u(I32 a) { return static_cast<uint32_t>(a); }
  static I32 s(uint32_t a) { return static_cast<I32>(a); }
  I32 addi(I32 a, I32 b) const { return s(u(a) + u(b)); }
  I32 subi(I32 a, I32 b) const { return s(u(a) - u(b)); }
  I32 muli(I32 a, I32 b) const { return s(u(a) * u(b)); }
  I32 andi(I32 a, I32 b) const { return a & b; }
  I32 ori(I32 a, I32 b) const { return a | b; }
  I32 xori(I32 a, I32 b) const { return a ^ b; }
  I32 shli(I32 a, I32 b) const { return s(u(a) << (b & 31)); }
  I32 shrui(I32 a, I32 b) const { return s(u(a) >> (b & 31)); }
  I32 shrsi(I32 a, I32 b) const {
    // Arithmetic shift written without implementation-defined behaviour.
    uint32_t sh = u(b) & 31;
    uint32_t r = u(a) >> sh;
    if (a < 0 && sh != 0)
      r |= ~(0xFFFFFFFFu >> sh);
    return s(r);
  }

  Bool cmpf(FPred p, F32 a, F32 b) const {
    switch (p) {
    case FPred::OLT:
      return a < b;
    case FPred::OLE:
      return a <= b;
    case FPred::OGT:
      return a > b;
    case FPred::OGE:
      return a >= b;
    case FPred::OEQ:
      return a == b;
    case FPred::ONE:
      return a < b || a > b;
    case FPred::UNO:
      return a != a || b != b;
    case FPred::ORD:
      return a == a && b == b;
    }
    return false;
  }
  Bool cmpd(FPred p, F64 a, F64 b) const {
    switch (p) {
    case FPred::OLT:
      return a < b;
    case FPred::OLE:
      return a <= b;
    case FPred::OGT:
      return a > b;
    case FPred::OGE:
      return a >= b;
    case FPred::OEQ:
      return a == b;
    case FPred::ONE:
      return a < b || a > b;
    case FPred::UNO:
      return a != a || b != b;
    case FPred::ORD:
      return a == a && b == b;
    }
    return false;
  }
  Bool cmpi(IPred p, I32 a, I32 b) const {
    switch (p) {
    case IPred::EQ:
      return a == b;
    case IPred::NE:
      return a != b;
    case IPred::SLT:
      return a < b;
    case IPred::SLE:
      return a <= b;
    case IPred::SGT:
      return a > b;
    case IPred::SGE:
      return a >= b;
    case IPred::ULT:
      return u(a) < u(b);
    case IPred::ULE:
      return u(a) <= u(b);
    case IPred::UGT:
      return u(a) > u(b);
    case IPred::UGE:
      return u(a) >= u(b);
    }
    return false;
  }

  F32 selectf(Bool c, F32 a, F32 b) const { return c ? a : b; }
  I32 selecti(Bool c, I32 a, I32 b) const { return c ? a : b; }
  F64 selectd(Bool c, F64 a, F64 b) const { return c ? a : b; }
  Bool andb(Bool a, Bool b) const { return a && b; }
  Bool orb(Bool a, Bool b) const { return a || b; }
  Bool notb(Bool a) const { return !a; }

  F32 sitofp(I32 a) const { return static_cast<float>(a); }
  I32 fptosi(F32 a) const {
    // The rules never pass NaN or out-of-range values; keep C++ free of UB
    // anyway.
    if (!(a > -2147483648.0f && a < 2147483648.0f))
      return 0;
    return static_cast<I32>(a);
  }
};

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_SCALAROPS_H
