//===- BF16.h - bfloat16 rounding as a generic scalar rule ------*- C++ -*-===//
//
// bf16 values are kept in f32 registers; roundToBF16 rounds an f32 to bf16
// precision with round-to-nearest-even on the bit pattern (overflow goes to
// Inf as IEEE requires; NaN stays a quiet NaN with its sign).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_BF16_H
#define FP4_NUMERICS_BF16_H

#include "fp4/Numerics/F32Bits.h"

namespace mlir::fp4::numerics {

/// f32 -> nearest bf16 (ties to even), returned as an f32 with the low 16
/// bits zero.
template <typename Ops>
typename Ops::F32 roundToBF16(const Ops &ops, typename Ops::F32 x) {
  auto bits = ops.bitcastToI32(x);
  auto lsb = ops.andi(ops.shrui(bits, ops.i32(16)), ops.i32(1));
  auto rounded = ops.andi(ops.addi(bits, ops.addi(ops.i32(0x7FFF), lsb)),
                          ops.i32(static_cast<int32_t>(0xFFFF0000u)));
  // A NaN's payload could carry into the exponent or vanish: force quiet.
  auto nan = ops.ori(ops.andi(bits, ops.i32(static_cast<int32_t>(0xFFFF0000u))),
                     ops.i32(0x00400000));
  auto isNaN = ops.cmpi(IPred::SGT, absBits(ops, x), ops.i32(kF32InfBits));
  return ops.bitcastToF32(ops.selecti(isNaN, nan, rounded));
}

/// The 16 storage bits of an f32 that already has bf16 precision.
template <typename Ops>
typename Ops::I32 bf16StorageBits(const Ops &ops, typename Ops::F32 x) {
  return ops.shrui(ops.bitcastToI32(x), ops.i32(16));
}

/// bf16 storage bits (in the low 16 bits) -> f32.
template <typename Ops>
typename Ops::F32 bf16Decode(const Ops &ops, typename Ops::I32 bits16) {
  return ops.bitcastToF32(
      ops.shli(ops.andi(bits16, ops.i32(0xFFFF)), ops.i32(16)));
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_BF16_H
