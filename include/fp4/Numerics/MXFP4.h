//===- MXFP4.h - MXFP4 element quantize / dequantize rules ------*- C++ -*-===//
//
// MXFP4 (OCP MX v1.0), numerics.md section 2: a block of B elements shares
// the E8M0 scale byte from mxScaleByte(amax). An element is
//   code = e2m1Encode(x * e8m0QuantizeFactor(byte))      (exact, see E8M0.h)
//   x'   = e2m1Decode(code) * e8m0Decode(byte)
// The dequantize product is one f32 multiply of two exact values (the E2M1
// value has two significant bits, the scale one), so it is exact, with one
// exception: 4 * 2^126 = 2^128 exceeds FLT_MAX and becomes +-Inf (the IEEE
// rounding of the exact value). Only the ceil/even/rceil rules reach e = 126,
// for amax > 2^127.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_MXFP4_H
#define FP4_NUMERICS_MXFP4_H

#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/E8M0.h"

namespace mlir::fp4::numerics {

/// E2M1 code of x in a block whose quantize factor is `factor`
/// (= e8m0QuantizeFactor(byte)).
template <typename Ops>
typename Ops::I32
mxfp4ElementCode(const Ops &ops, typename Ops::F32 x, typename Ops::F32 factor,
                 ElementRounding mode, typename Ops::I32 randomBits) {
  return e2m1Encode(ops, ops.mulf(x, factor), mode, randomBits);
}

/// Dequantized value of a code in a block with scale byte `byte`.
template <typename Ops>
typename Ops::F32 mxfp4Dequant(const Ops &ops, typename Ops::I32 code,
                               typename Ops::I32 byte) {
  return ops.mulf(e2m1Decode(ops, code), e8m0Decode(ops, byte));
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_MXFP4_H
