//===- CounterRandom.h - Counter-based random bits for rounding -*- C++ -*-===//
//
// Stochastic rounding must give the same bytes on CPU and GPU and for any
// tiling, so the random bits of an element are a pure function of
// (seed, element's linear index in the logical row-major tensor): no state.
//
// counterRandom(seed, lo, hi) with the 64-bit index split into 32-bit halves:
//   mix(x) = x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b;
//            x ^= x >> 16                       (Wellons' "lowbias32")
//   h = mix(seed ^ 0x9e3779b9)
//   h = mix(h ^ lo)
//   h = mix(h ^ hi ^ 0x85ebca6b)
// All arithmetic is 32-bit wrapping multiply / xor / logical shift; mix is a
// bijection, so distinct indices within one 2^32 range never collide. The
// constants keep mix(0) = 0 from making seed 0, index 0 special.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_COUNTERRANDOM_H
#define FP4_NUMERICS_COUNTERRANDOM_H

#include "fp4/Numerics/OpsConcept.h"

#include <cstdint>

namespace mlir::fp4::numerics {

/// Wellons' lowbias32 integer finaliser.
template <typename Ops>
typename Ops::I32 lowbias32(const Ops &ops, typename Ops::I32 x) {
  x = ops.xori(x, ops.shrui(x, ops.i32(16)));
  x = ops.muli(x, ops.i32(0x7feb352d));
  x = ops.xori(x, ops.shrui(x, ops.i32(15)));
  x = ops.muli(x, ops.i32(static_cast<int32_t>(0x846ca68bu)));
  x = ops.xori(x, ops.shrui(x, ops.i32(16)));
  return x;
}

/// 32 random bits for the element with 64-bit linear index (indexHi:indexLo)
/// under `seed`.
template <typename Ops>
typename Ops::I32 counterRandom(const Ops &ops, typename Ops::I32 seed,
                                typename Ops::I32 indexLo,
                                typename Ops::I32 indexHi) {
  auto h = lowbias32(
      ops, ops.xori(seed, ops.i32(static_cast<int32_t>(0x9e3779b9u))));
  h = lowbias32(ops, ops.xori(h, indexLo));
  h = lowbias32(ops, ops.xori(ops.xori(h, indexHi),
                              ops.i32(static_cast<int32_t>(0x85ebca6bu))));
  return h;
}

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_COUNTERRANDOM_H
