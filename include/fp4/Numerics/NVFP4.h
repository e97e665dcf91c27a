//===- NVFP4.h - NVFP4 scale and element rules ------------------*- C++ -*-===//
//
// NVFP4, numerics.md section 3, in TransformerEngine's reference order. Every
// step is one f32 operation rounded to nearest even:
//
//   tensor_amax = max |x| over the finite values of the tensor
//   g_enc = min(448*6 / tensor_amax, FLT_MAX)   (tensor_amax == 0 -> 1)
//   g_dec = 1 / g_enc                           (stored per tensor)
//   k     = g_enc / 6                           (one division, per tensor)
//   s     = e4m3_rne(min(block_amax * k, 448))  (block scale byte)
//   enc   = min(1 / (float(s) * g_dec), FLT_MAX)
//   q_i   = Q(x_i * enc)          (Q saturates at 6, so the spec's clamp to
//                                  [-6, 6] is implied)
//   x_i'  = (e2m1(q_i) * float(s)) * g_dec
//
// A block scale of 0 zeroes its block (codes 0 / 8 by sign); a block with a
// NaN or Inf gets scale byte 0x7F.
//
// four_over_six: the tensor encode uses 256 instead of 448, and each block
// also tries s4 = e4m3_rne(min(1.5 * (block_amax * k), 448)) (the block max
// lands on 4), keeping the candidate whose f32 dequantized values have the
// lower sum of squared errors, accumulated in f64 sequentially in element
// order; ties keep the map-to-6 candidate. The selection is done by the
// caller (it needs the whole block); this file supplies the pieces.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_NVFP4_H
#define FP4_NUMERICS_NVFP4_H

#include "fp4/Numerics/E2M1.h"
#include "fp4/Numerics/E4M3.h"

namespace mlir::fp4::numerics {

/// NVFP4 block size.
constexpr int64_t kNVFP4BlockSize = 16;

/// g_enc from the finite tensor amax.
template <typename Ops>
typename Ops::F32 nvfp4GlobalEncodeScale(const Ops &ops,
                                         typename Ops::F32 tensorAmax,
                                         bool fourOverSix) {
  float top = (fourOverSix ? 256.0f : kE4M3Max) * kE2M1Max;
  auto g = minWithLimit(ops, ops.divf(ops.f32(top), tensorAmax), kF32Max);
  return ops.selectf(ops.cmpf(FPred::OEQ, tensorAmax, ops.f32(0.0f)),
                     ops.f32(1.0f), g);
}

/// g_dec = 1 / g_enc, the stored per-tensor scale.
template <typename Ops>
typename Ops::F32 nvfp4GlobalDecodeScale(const Ops &ops,
                                         typename Ops::F32 gEnc) {
  return ops.divf(ops.f32(1.0f), gEnc);
}

/// k = g_enc / 6, the per-tensor factor of the block scale.
template <typename Ops>
typename Ops::F32 nvfp4BlockScaleFactor(const Ops &ops,
                                        typename Ops::F32 gEnc) {
  return ops.divf(gEnc, ops.f32(kE2M1Max));
}

/// E4M3 block scale byte. `mapToFour` selects the four_over_six candidate
/// s4 (1.5 times the unrounded map-to-6 scale). NaN/Inf amax -> 0x7F.
template <typename Ops>
typename Ops::I32
nvfp4BlockScaleByte(const Ops &ops, typename Ops::F32 blockAmax,
                    typename Ops::F32 blockScaleFactor, bool mapToFour) {
  auto s = ops.mulf(blockAmax, blockScaleFactor);
  if (mapToFour)
    s = ops.mulf(ops.f32(1.5f), s);
  s = minWithLimit(ops, s, kE4M3Max);
  auto byte = e4m3EncodeNonNegative(ops, s);
  return ops.selecti(isNonFinite(ops, blockAmax), ops.i32(kE4M3NaN), byte);
}

/// enc = min(1 / (float(s) * g_dec), FLT_MAX), the element encode factor.
template <typename Ops>
typename Ops::F32 nvfp4EncodeFactor(const Ops &ops, typename Ops::I32 scaleByte,
                                    typename Ops::F32 gDec) {
  auto denom = ops.mulf(e4m3Decode(ops, scaleByte), gDec);
  return minWithLimit(ops, ops.divf(ops.f32(1.0f), denom), kF32Max);
}

/// E2M1 code of x in a block with scale byte `scaleByte` and encode factor
/// `enc`. A zero scale gives the sign-only code.
template <typename Ops>
typename Ops::I32
nvfp4ElementCode(const Ops &ops, typename Ops::F32 x, typename Ops::F32 enc,
                 typename Ops::I32 scaleByte, ElementRounding mode,
                 typename Ops::I32 randomBits) {
  auto code = e2m1Encode(ops, ops.mulf(x, enc), mode, randomBits);
  return ops.selecti(ops.cmpi(IPred::EQ, scaleByte, ops.i32(0)),
                     signCodeBit(ops, x), code);
}

/// x' = (e2m1(code) * float(s)) * g_dec.
template <typename Ops>
typename Ops::F32 nvfp4Dequant(const Ops &ops, typename Ops::I32 code,
                               typename Ops::I32 scaleByte,
                               typename Ops::F32 gDec) {
  return ops.mulf(ops.mulf(e2m1Decode(ops, code), e4m3Decode(ops, scaleByte)),
                  gDec);
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_NVFP4_H
