//===- RoundingModes.h - Scale and element rounding options -----*- C++ -*-===//
//
// Options of the quantizers (numerics.md sections 1 and 2). They are plain C++
// values: a rule specialised on them emits only the chosen variant.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_ROUNDINGMODES_H
#define FP4_NUMERICS_ROUNDINGMODES_H

namespace mlir::fp4::numerics {

/// How an MXFP4 block picks its shared exponent e from amax (numerics.md 2).
enum class ScaleRounding {
  Floor, ///< floor(log2 amax) - 2 (OCP default; (6,8)*X clips to 6).
  Ceil,  ///< ceil(log2 amax) - 2 (never clips).
  Even,  ///< floor(log2 r) - 2, r = amax rounded to 1 mantissa bit, ties up.
  RCeil, ///< ceil(log2(amax / 6)) (NVIDIA's UE8M0 round-up; never clips).
};

/// How an element is rounded onto the E2M1 grid (numerics.md 1).
enum class ElementRounding {
  NearestEven, ///< Ties to the even code (default everywhere).
  HalfAway,    ///< Ties away from zero (microxcaling's default).
  Stochastic,  ///< Up with probability (v-lo)/(hi-lo), counter-based bits.
};

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_ROUNDINGMODES_H
