//===- BF16PairDequant.h - bf16x2 mma operands from 4-bit codes -*- C++ -*-===//
//
// Building blocks of the tensor-core kernels on chips without FP4
// instructions (sm_80..sm_90): packed E2M1 codes and block scales become
// bf16x2 registers for mma.sync m16n8k16 (bf16 in, f32 accumulate), with
// integer and bf16x2 operations only (no table, no conversion instruction).
//
// The code and scale bit tricks are numerics templates (fp4/Numerics/
// BF16Pair.h, where the derivation is); these are their IR builders.
//
// Pair p (0..3) of a code word is the bf16x2 register (element p, element
// p + 4), valued e2m1 * 2^-126.
//
// An activation row in bf16 uses the same pairing: pair p of 8 consecutive
// bf16 values held in 4 words is one byte permute (prmt) of words p/2 and
// p/2 + 2. Any kernel that feeds both mma operands through these functions
// multiplies matching K indices, whatever K permutation its fragment layout
// implies (the contraction is permutation-invariant).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP4TOGPU_BF16PAIRDEQUANT_H
#define LIB_CONVERSION_FP4TOGPU_BF16PAIRDEQUANT_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::fp4 {

/// bf16x2 bits (i32) of e2m1 * 2^-126 for elements `pair` and `pair` + 4 of
/// the code word `word` (i32).
Value buildE2M1PairBits(OpBuilder &b, Location loc, Value word, int64_t pair);

/// Pair `pair` of the 8 bf16 values held in `words` (4 x i32, element 2t in
/// the low half of word t): elements `pair` and `pair` + 4, as bf16x2 bits.
Value buildBF16PairFromWords(OpBuilder &b, Location loc, ValueRange words,
                             int64_t pair);

/// The prmt.b32 selector buildBF16PairFromWords uses for `pair`.
uint32_t bf16PairSelector(int64_t pair);

/// prmt.b32 (default mode): byte i of the result is byte selector[4i+3:4i]
/// of the 8-byte pool {hi, lo}.
Value buildPermuteBytes(OpBuilder &b, Location loc, Value lo, Value hi,
                        uint32_t selector);

/// x * y on bf16x2 bit patterns (i32): mul.rn.bf16x2.
Value buildMulBF16x2(OpBuilder &b, Location loc, Value x, Value y);

/// The bf16x2 bits with `value` in both halves (value must be exact in bf16).
Value buildBF16x2Constant(OpBuilder &b, Location loc, float value);

/// Both halves set to the bf16 pattern in the low 16 bits of `bits` (i32,
/// upper bits zero).
Value buildSplatBF16Bits(OpBuilder &b, Location loc, Value bits);

/// 2^(byte - 1) = 2^126 * 2^(byte - 127) in both halves, for an E8M0 byte
/// (i32, 0..255) that is at most 128 (larger bytes need two factors:
/// 2^126, then buildE8M0Factor). One multiply-add.
Value buildE8M0FactorTimes2Pow126(OpBuilder &b, Location loc, Value byte);

/// 2^(byte - 127) exactly in both halves: byte 0 is the bf16 subnormal
/// 2^-127, byte 0xFF is NaN.
Value buildE8M0Factor(OpBuilder &b, Location loc, Value byte);

/// 2^118 * e4m3(byte) in both halves (exact: E4M3 values have 4 significant
/// bits and 2^118 keeps subnormal scales normal). Times an E2M1 pair from
/// buildE2M1PairBits it gives e2m1 * e4m3 * 2^-8 exactly, for every code
/// and scale (at least 2^-18, at most 10.5). Byte 0x7F/0xFF give NaN.
Value buildE4M3FactorTimes2Pow118(OpBuilder &b, Location loc, Value byte);

/// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: `a` 4 x i32,
/// `b` 2 x i32, `c` 4 x f32 in the PTX fragment layouts; returns d.
SmallVector<Value, 4> buildMmaBF16(OpBuilder &b, Location loc, ValueRange a,
                                   ValueRange bFrag, ValueRange c);

/// mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32
/// with sparsity selector 0: `a` 4 x i32 (the 16 x 16 compressed A tile in
/// the dense m16n8k16 A layout: compressed columns 2c, 2c + 1 are the two
/// kept values of 4-element group c, lower position first), `b` 4 x i32
/// (lane (g, q) register r: k = 2q + 8r, 2q + 8r + 1 of column g, i.e. the
/// two m16n8k16 B fragments of k 0..15 and 16..31), `c` 4 x f32, `meta`
/// i32 (lanes q = 0, 1: bits 4i..4i+3 the positions (low 2 bits first) of
/// group 4q + i of row g, bits 16 + 4i.. those of row g + 8; lanes 2, 3
/// unused). Layout checked on the H200 by bench/probes/mma_sp_layout.cu.
SmallVector<Value, 4> buildMmaSpBF16(OpBuilder &b, Location loc, ValueRange a,
                                     ValueRange bFrag, ValueRange c,
                                     Value meta);

} // namespace mlir::fp4

#endif // LIB_CONVERSION_FP4TOGPU_BF16PAIRDEQUANT_H
