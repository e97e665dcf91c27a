//===- OpsConcept.h - Arithmetic backend of the scalar rules ----*- C++ -*-===//
//
// Every scalar numerics rule (E2M1, E8M0, E4M3, bf16, NVFP4, HiF4, macro-block)
// is written once, as a function template over an arithmetic backend `Ops`.
// The same template then
//   * runs in C++ (ScalarOps: the reference quantizer and the constant folder),
//   * builds arith/math ops on mlir::Value (ArithOps: the lowering), where a
//     value may be a scalar or a vector and constants are splats.
// Because both backends execute the identical sequence of IEEE operations,
// folded constants, CPU code and GPU code agree bit for bit.
//
// The concept (all methods const; rules take `const Ops &ops`):
//
//   struct Ops {
//     using F32 = ...; using F64 = ...; using I32 = ...; using Bool = ...;
//     F32 f32(float c); F64 f64(double c); I32 i32(int32_t c); // splats
//     I32 bitcastToI32(F32); F32 bitcastToF32(I32);
//     F32 addf(F32,F32); F32 subf(F32,F32); F32 mulf(F32,F32);
//     F32 divf(F32,F32); F32 absf(F32); F32 negf(F32); F32 floorf(F32);
//     F64 extf(F32); F64 addd(F64,F64); F64 subd(F64,F64);
//     F64 muld(F64,F64);
//     I32 addi, subi, muli, andi, ori, xori, shli, shrui, shrsi (I32,I32);
//     Bool cmpf(FPred, F32, F32); Bool cmpd(FPred, F64, F64);
//     Bool cmpi(IPred, I32, I32);
//     F32 selectf(Bool,F32,F32); I32 selecti(Bool,I32,I32);
//     F64 selectd(Bool,F64,F64);
//     Bool andb(Bool,Bool); Bool orb(Bool,Bool); Bool notb(Bool);
//     F32 sitofp(I32); I32 fptosi(F32);
//   };
//
// Semantics a backend must provide (arith dialect names in brackets):
//   * Every F32/F64 operation is one IEEE-754 operation rounded to nearest,
//     ties to even: no FMA contraction, no flush-to-zero of subnormals, no
//     fast-math. (arith.addf/subf/mulf/divf without fastmath flags; absf,
//     negf, floorf [math.floor] are exact.) F64 is only used to accumulate
//     sums of squared errors; extf [arith.extf] is exact.
//   * Integer ops are 32-bit two's complement and wrap. Shift amounts are
//     always constants in [0, 31] (arith shifts are poison outside).
//     shrui is the logical, shrsi the arithmetic right shift.
//   * cmpf predicates are the *ordered* ones (false when an operand is NaN)
//     plus UNO/ORD, as arith.cmpf; cmpi predicates are arith.cmpi's.
//   * sitofp rounds to nearest even (the rules only convert |i| < 2^24, so
//     it is exact). fptosi is only applied to values that are already
//     integral and in range (the rules select away NaN first); a backend may
//     do anything else with other inputs.
//   * bitcastToI32/bitcastToF32 reinterpret the 32 bits [arith.bitcast].
//   * Rounding modes and options are plain C++ parameters of the rules, never
//     backend values, so the emitted IR contains only the chosen variant.
//
// Rules never call libm log2/exp2/frexp/ldexp: exponents come from the f32
// bit pattern, so exact powers of two behave the same on every target.
//
// The rules (ScalarRules.h includes them all):
//   F32Bits.h        absBits, maxAbsBits (NaN-propagating block amax),
//                    isNonFinite, signCodeBit, min/maxWithLimit,
//                    squaredErrorF64
//   E2M1.h           e2m1Encode(v, ElementRounding, randomBits), e2m1Decode
//   CounterRandom.h  counterRandom(seed, indexLo, indexHi)
//   E8M0.h           mxScaleByte(amax, ScaleRounding), e8m0Decode,
//                    e8m0QuantizeFactor (exact 2^-e)
//   MXFP4.h          mxfp4ElementCode, mxfp4Dequant
//   E4M3.h           e4m3EncodeNonNegative, e4m3Decode
//   BF16.h           roundToBF16, bf16StorageBits, bf16Decode
//   NVFP4.h          nvfp4GlobalEncodeScale/DecodeScale, nvfp4BlockScaleFactor,
//                    nvfp4BlockScaleByte, nvfp4EncodeFactor,
//                    nvfp4ElementCode, nvfp4Dequant
//   HiF4.h           hif4ScaleByte, e6m2Decode, hif4Reciprocal,
//                    hif4Level2Bit, hif4Level3Bit, hif4LevelScale,
//                    hif4ElementCode, hif4Dequant
//   MacroBlock.h     macroFactorFromAmax, macroSearchFactor,
//                    macroScaledInput, macroDequant
// Block loops (amax reductions, four_over_six and macro search selection)
// are in Reference.cpp for C++; a lowering writes the same loops in IR.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_NUMERICS_OPSCONCEPT_H
#define FP4_NUMERICS_OPSCONCEPT_H

namespace mlir::fp4::numerics {

/// Floating-point comparison predicates (arith.cmpf). Ordered predicates are
/// false when either operand is NaN; UNO is true iff either operand is NaN.
enum class FPred { OLT, OLE, OGT, OGE, OEQ, ONE, UNO, ORD };

/// Integer comparison predicates (arith.cmpi).
enum class IPred { EQ, NE, SLT, SLE, SGT, SGE, ULT, ULE, UGT, UGE };

} // namespace mlir::fp4::numerics

#endif // FP4_NUMERICS_OPSCONCEPT_H
