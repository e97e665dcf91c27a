"""CPU emulation of the decode matmul kernel's data layout and bit tricks.

lib/Conversion/FP4ToGPU/DecodeMatmulKernel.cpp and BF16PairDequant.cpp build
mma.sync fragments from packed FP4 codes with integer tricks and a K
permutation shared by both operands. A layout bug there would only show on
the GPU, so this file ports the kernel's index functions and bit
manipulations one to one (same names, same order of operations) and runs the
whole kernel on the CPU: lanes, warps, chunks, the PTX mma.m16n8k16 fragment
layouts, the cross-warp reduction and the store mapping. The result must
equal an f64 product of the dequantized operands (the emulated tensor core
accumulates in f64, so the only difference is summation order).

It also checks the exactness claims of BF16PairDequant.h over every code and
every scale byte: E2M1 pair bits times the one- or two-multiply E8M0 factors,
and times the NVFP4 E4M3 factor, give exactly the reference values in bf16.
"""

import numpy as np
import pytest

from bf16_emulation import E2M1, bf16_to_f64, f64_to_bf16_exact, mul_bf16x2

# --------------------------------------------------------------------------
# bit-level helpers (BF16PairDequant.cpp)
# --------------------------------------------------------------------------


def e2m1_pair_bits(word, pair):
    """buildE2M1PairBits: bf16x2 of e2m1 * 2^-126 for nibbles pair, pair+4."""
    w = np.asarray(word, dtype=np.uint32)

    def shift(amount):
        if amount > 0:
            return (w << np.uint32(amount)) & np.uint32(0xFFFFFFFF)
        if amount < 0:
            return w >> np.uint32(-amount)
        return w

    magnitude = shift(6 - 4 * pair) & np.uint32(0x01C001C0)
    sign = shift(12 - 4 * pair) & np.uint32(0x80008000)
    return (magnitude | sign).astype(np.uint32)


def bf16_pair_selector(pair):
    return 0x5410 if pair % 2 == 0 else 0x7632


def prmt(lo, hi, selector):
    """prmt.b32 default mode."""
    pool = (np.asarray(hi, dtype=np.uint64) << np.uint64(32)) | np.asarray(lo, dtype=np.uint64)
    out = np.zeros(np.shape(pool), dtype=np.uint64)
    for i in range(4):
        sel = (selector >> (4 * i)) & 0xF
        assert sel < 8, "sign-replicate mode is never used"
        byte = (pool >> np.uint64(8 * sel)) & np.uint64(0xFF)
        out |= byte << np.uint64(8 * i)
    return out.astype(np.uint32)


def bf16_pair_from_words(words, pair):
    """buildBF16PairFromWords: words is a list of 4 uint32 arrays."""
    return prmt(words[pair // 2], words[pair // 2 + 2], bf16_pair_selector(pair))


def splat_bf16_bits(bits):
    return (np.asarray(bits, dtype=np.uint32) * np.uint32(0x00010001)).astype(np.uint32)


def e8m0_factor_times_2pow126(byte):
    """buildE8M0FactorTimes2Pow126 (the prefill kernel's one-multiply form)."""
    return ((np.asarray(byte, dtype=np.uint32) * np.uint32(0x00800080))
            + np.uint32(126 * 0x00800080)).astype(np.uint32)


def e8m0_decode_f32(byte):
    """numerics::e8m0Decode (E8M0.h) on the f32 bit pattern."""
    b = np.asarray(byte, dtype=np.uint32) & 0xFF
    bits = np.where(b == 0, np.uint32(0x00400000), b << np.uint32(23))
    bits = np.where(b == 0xFF, np.uint32(0x7FC00000), bits)
    return bits.astype(np.uint32).view(np.float32)


def e8m0_factor(byte):
    bits = e8m0_decode_f32(byte).view(np.uint32)
    return splat_bf16_bits(bits >> np.uint32(16))


def e4m3_decode_f32(byte):
    """numerics::e4m3Decode (E4M3.h)."""
    b = np.asarray(byte, dtype=np.int64) & 0xFF
    mag = b & 0x7F
    sub = (mag.astype(np.float32) * np.float32(2.0 ** -9))
    normal = ((mag << 20) + (120 << 23)).astype(np.uint32).view(np.float32)
    value = np.where(mag < 8, sub, normal).astype(np.float32).view(np.uint32)
    value = value | ((b & 0x80).astype(np.uint32) << np.uint32(24))
    value = np.where(mag == 0x7F, np.uint32(0x7FC00000), value)
    return value.astype(np.uint32).view(np.float32)


def e4m3_factor_times_2pow118(byte):
    f = e4m3_decode_f32(byte) * np.float32(2.0 ** 118)
    return splat_bf16_bits(f.view(np.uint32) >> np.uint32(16))


BF16X2_2POW126 = int(splat_bf16_bits(f64_to_bf16_exact(2.0 ** 126)))


# --------------------------------------------------------------------------
# Exactness of the factors over all codes and bytes
# --------------------------------------------------------------------------

def all_code_words():
    """Words whose pair 0 covers every (code, code) combination."""
    lo, hi = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    return (lo.ravel() | (hi.ravel() << 16)).astype(np.uint32), lo.ravel(), hi.ravel()


def halves(bits):
    bits = np.asarray(bits, dtype=np.uint32)
    return bf16_to_f64(bits), bf16_to_f64(bits >> np.uint32(16))


def expect_equal(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    both_nan = np.isnan(got) & np.isnan(want)
    assert np.all(both_nan | (got == want)), (got[~both_nan & (got != want)][:5],
                                              want[~both_nan & (got != want)][:5])
    # Signed zeros must survive too (code 8 is -0).
    zero = (want == 0) & ~both_nan
    assert np.all(np.signbit(got[zero]) == np.signbit(want[zero]))


def test_pair_bits_are_e2m1_times_2pow_minus126():
    words, lo, hi = all_code_words()
    for pair in range(4):
        shifted = (words << np.uint32(4 * pair)).astype(np.uint32)
        a, b = halves(e2m1_pair_bits(shifted, pair))
        expect_equal(a, E2M1[lo] * 2.0 ** -126)
        expect_equal(b, E2M1[hi] * 2.0 ** -126)


def test_e8m0_one_multiply_is_exact_up_to_byte_128():
    words, lo, hi = all_code_words()
    pairs = e2m1_pair_bits(words, 0)
    for byte in range(0, 129):
        a, b = halves(mul_bf16x2(pairs, e8m0_factor_times_2pow126(byte)))
        expect_equal(a, E2M1[lo] * 2.0 ** (byte - 127))
        expect_equal(b, E2M1[hi] * 2.0 ** (byte - 127))


def test_e8m0_two_multiplies_are_exact_for_every_byte():
    words, lo, hi = all_code_words()
    pairs = e2m1_pair_bits(words, 0)
    for byte in range(256):
        got = mul_bf16x2(mul_bf16x2(pairs, BF16X2_2POW126), e8m0_factor(byte))
        a, b = halves(got)
        if byte == 0xFF:
            assert np.all(np.isnan(a)) and np.all(np.isnan(b))
            continue
        with np.errstate(over="ignore"):  # the f32 reference overflows to inf
            ref = (E2M1.astype(np.float32) * e8m0_decode_f32(byte)).astype(np.float64)
        expect_equal(a, ref[lo])
        expect_equal(b, ref[hi])


def test_e4m3_factor_is_exact_for_every_scale():
    words, lo, hi = all_code_words()
    pairs = e2m1_pair_bits(words, 0)
    for byte in range(256):
        a, b = halves(mul_bf16x2(pairs, e4m3_factor_times_2pow118(byte)))
        s = e4m3_decode_f32(byte).astype(np.float64)
        if np.isnan(s):
            assert np.all(np.isnan(a)) and np.all(np.isnan(b))
            continue
        expect_equal(a, E2M1[lo] * s * 2.0 ** -8)
        expect_equal(b, E2M1[hi] * s * 2.0 ** -8)


def test_activation_pairs_match_code_pairs():
    """Pair p of 8 bf16 values holds elements (p, p + 4), like the codes."""
    values = np.arange(8, dtype=np.uint32) + 0x3F80  # distinct bf16 patterns
    words = [np.uint32(values[2 * t] | (values[2 * t + 1] << 16)) for t in range(4)]
    for pair in range(4):
        got = int(bf16_pair_from_words(words, pair))
        assert got & 0xFFFF == values[pair]
        assert got >> 16 == values[pair + 4]
    # And the code word's nibble j is element j.
    codes = np.arange(8)
    word = np.uint32(sum(int(c) << (4 * j) for j, c in enumerate(codes)))
    for pair in range(4):
        a, b = halves(e2m1_pair_bits(word, pair))
        assert a == E2M1[pair] * 2.0 ** -126 and b == E2M1[pair + 4] * 2.0 ** -126


# --------------------------------------------------------------------------
# The kernel (DecodeMatmulKernel.cpp)
# --------------------------------------------------------------------------

K_CHUNK, K_UNIT, STEPS_PER_CHUNK = 128, 32, 8


class Quant:
    """A quantized operand: scheme description + component arrays."""

    def __init__(self, kind, block, codes, scales, extra=None, macro=0):
        self.kind, self.block, self.macro = kind, block, macro
        self.codes, self.scales, self.extra = codes, scales, extra

    @property
    def e8m0(self):
        return self.kind in ("mxfp4", "macro")

    def fragment_shift(self):
        return 8 if self.kind == "nvfp4" else 0

    def scales_per_unit(self):
        return 2 if self.block == 16 else 1

    def scale_slot(self, word):
        return word // 2 if self.block == 16 else 0

    def benign_scale_byte(self):
        return 127 if self.e8m0 else 0x38

    def dequantize(self):
        rows, half = self.codes.shape
        c = np.stack([self.codes & 0xF, self.codes >> 4], -1).reshape(rows, 2 * half)
        k = np.arange(2 * half)
        if self.e8m0:
            s = np.where(self.scales == 0xFF, np.nan,
                         np.ldexp(1.0, self.scales.astype(np.int64) - 127))
        else:
            s = e4m3_decode_f32(self.scales).astype(np.float64)
        v = E2M1[c] * s[:, k // self.block]
        if self.kind == "macro":
            v = v * bf16_to_f64(self.extra)[:, k // self.macro]
        if self.kind == "nvfp4":
            v = v * float(self.extra)
        return v


def choose_warps(k, unroll):
    chunks = -(-k // K_CHUNK)
    warps = 1
    while warps < 8 and chunks >= 2 * unroll * (2 * warps):
        warps *= 2
    return warps


def mma_m16n8k16(a, b):
    """a: [32, 4] bf16x2, b: [32, 2] bf16x2 -> D [32, 4] per the PTX layout
    (mma.m16n8k16 .bf16: A rows g / g+8, K columns 2t, 2t+1 / 2t+8, 2t+9;
    B K rows 2t, 2t+1 / 2t+8, 2t+9, column g; D rows g / g+8, columns 2t, 2t+1)."""
    lanes = np.arange(32)
    g, t = lanes // 4, lanes % 4
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    for reg, (row, col) in enumerate([(g, 2 * t), (g + 8, 2 * t),
                                      (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
        lo, hi = halves(a[:, reg])
        A[row, col], A[row, col + 1] = lo, hi
    for reg, k in enumerate([2 * t, 2 * t + 8]):
        lo, hi = halves(b[:, reg])
        B[k, g], B[k + 1, g] = lo, hi
    with np.errstate(invalid="ignore", over="ignore"):
        D = A @ B
    return np.stack([D[g, 2 * t], D[g, 2 * t + 1], D[g + 8, 2 * t], D[g + 8, 2 * t + 1]], 1)


def code_words(codes, rows, k0):
    """loadCodeWords: 16 bytes of codes[row, k0/2:] as 4 little-endian words."""
    out = []
    for i in range(4):
        b = [codes[rows, k0 // 2 + 4 * i + j].astype(np.uint32) for j in range(4)]
        out.append(b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24))
    return out


def run_kernel(m, n, k, lhs_bits, lhs_q, w, unroll=2, warps=0):
    """Runs the decode kernel's data movement on the CPU. lhs_bits: bf16
    bit patterns [m, k] (W4A16) or None; lhs_q: Quant (W4A4) or None."""
    n_tiles = -(-m // 8)
    warps = warps or choose_warps(k, unroll)
    full_chunks, partial = k // K_CHUNK, k % K_CHUNK != 0
    full_groups = full_chunks // unroll
    tail_start = full_groups * unroll
    result = np.full((m, n), np.nan)
    lanes = np.arange(32)
    g, tig = lanes // 4, lanes % 4
    has_macro = w.kind == "macro" or (lhs_q is not None and lhs_q.kind == "macro")

    for cta in range(-(-n // 16)):
        row_base = cta * 16
        weight_rows = [np.minimum(row_base + g + 8 * half, n - 1) for half in (0, 1)]
        act_rows = [np.minimum(g + 8 * nt, m - 1) for nt in range(n_tiles)]
        column_rows = [np.minimum(2 * tig + 8 * nt + c, m - 1)
                       for nt in range(n_tiles) for c in (0, 1)]
        sums_per_warp = []
        for warp in range(warps):
            acc = np.zeros((n_tiles, 2, 32, 4))

            def load_chunk(chunk, masked):
                k0 = chunk * K_CHUNK + tig * K_UNIT
                valid = k0 < k if masked else np.ones(32, bool)
                k0 = np.where(valid, k0, 0)

                def scale_bytes(q, rows):
                    block = k0 // q.block
                    return [np.where(valid, q.scales[rows, block + s].astype(np.int64),
                                     q.benign_scale_byte())
                            for s in range(q.scales_per_unit())]

                def macro(q, rows):
                    return bf16_to_f64(q.extra[rows, chunk * K_CHUNK // q.macro])

                ld = {"w_words": [], "w_scales": [], "w_macro": [],
                      "a_words": [], "a_scales": [], "a_macro": []}
                for rows in weight_rows:
                    ld["w_words"].append([np.where(valid, x, 0).astype(np.uint32)
                                          for x in code_words(w.codes, rows, k0)])
                    ld["w_scales"].append(scale_bytes(w, rows))
                    if w.kind == "macro":
                        ld["w_macro"].append(macro(w, rows))
                for rows in act_rows:
                    if lhs_q is None:
                        words = []
                        for v in range(4):
                            for t in range(4):
                                lo = lhs_bits[rows, k0 + 8 * v + 2 * t].astype(np.uint32)
                                hi = lhs_bits[rows, k0 + 8 * v + 2 * t + 1].astype(np.uint32)
                                words.append(np.where(valid, lo | (hi << 16), 0).astype(np.uint32))
                        ld["a_words"].append(words)
                    else:
                        ld["a_words"].append([np.where(valid, x, 0).astype(np.uint32)
                                              for x in code_words(lhs_q.codes, rows, k0)])
                        ld["a_scales"].append(scale_bytes(lhs_q, rows))
                if lhs_q is not None and lhs_q.kind == "macro":
                    for rows in column_rows:
                        ld["a_macro"].append(macro(lhs_q, rows))
                return ld

            def factors(q, byte_list):
                out = []
                for byte in byte_list:
                    if not q.e8m0:
                        out.append([e4m3_factor_times_2pow118(byte)])
                    else:
                        out.append([np.full(32, BF16X2_2POW126, np.uint32), e8m0_factor(byte)])
                return out

            def dequant_pair(word, pair, factor):
                v = e2m1_pair_bits(word, pair)
                for f in factor:
                    v = mul_bf16x2(v, f)
                return v

            def compute(chunks, acc):
                acc = acc.copy()
                for ld in chunks:
                    wf = [factors(w, b) for b in ld["w_scales"]]
                    af = [factors(lhs_q, b) for b in ld["a_scales"]]
                    chain = np.zeros_like(acc) if has_macro else acc
                    for s in range(STEPS_PER_CHUNK):
                        word, p0 = s // 2, 2 * (s % 2)
                        p1, parity = p0 + 1, s % 2
                        b_frags = []
                        for nt in range(n_tiles):
                            if lhs_q is None:
                                words = ld["a_words"][nt][4 * word:4 * word + 4]
                                b_frags.append([bf16_pair_from_words(words, p0),
                                                bf16_pair_from_words(words, p1)])
                            else:
                                x = ld["a_words"][nt][word]
                                f = af[nt][lhs_q.scale_slot(word)]
                                b_frags.append([dequant_pair(x, p0, f), dequant_pair(x, p1, f)])
                        word_g, word_g8 = ld["w_words"][0][word], ld["w_words"][1][word]
                        f_g = wf[0][w.scale_slot(word)]
                        f_g8 = wf[1][w.scale_slot(word)]
                        a_frag = np.stack([dequant_pair(word_g, p0, f_g),
                                           dequant_pair(word_g8, p0, f_g8),
                                           dequant_pair(word_g, p1, f_g),
                                           dequant_pair(word_g8, p1, f_g8)], 1)
                        for nt in range(n_tiles):
                            chain[nt, parity] += mma_m16n8k16(a_frag, np.stack(b_frags[nt], 1))
                    if not has_macro:
                        acc = chain
                        continue
                    for nt in range(n_tiles):
                        for e in range(4):
                            total = chain[nt, 0, :, e] + chain[nt, 1, :, e]
                            factor = np.ones(32)
                            if w.kind == "macro":
                                factor = factor * ld["w_macro"][e // 2]
                            if lhs_q is not None and lhs_q.kind == "macro":
                                factor = factor * ld["a_macro"][2 * nt + e % 2]
                            acc[nt, 0, :, e] += total * factor
                return acc

            def group(acc, first, count, masked):
                # All loads of the group first, then the chunks' mmas.
                chunks = [load_chunk(first + u, masked) for u in range(count)]
                return compute(chunks, acc)

            for j in range(warp, full_groups, warps):
                acc = group(acc, j * unroll, unroll, False)
            for c in range(tail_start + warp, full_chunks, warps):
                acc = group(acc, c, 1, False)
            if partial and warp == (full_chunks - tail_start) % warps:
                acc = group(acc, full_chunks, 1, True)
            sums_per_warp.append(acc[:, 0] + acc[:, 1])  # [nt, lane, e]

        total = sum(sums_per_warp)
        scale = 2.0 ** (w.fragment_shift() + (lhs_q.fragment_shift() if lhs_q else 0))
        for q in (w, lhs_q):
            if q is not None and q.kind == "nvfp4":
                scale *= float(q.extra)
        # storeResult: sum index i = nt * 4 + e of lane l.
        for nt in range(n_tiles):
            for e in range(4):
                for lane in range(32):
                    lg, lt = lane // 4, lane % 4
                    row = row_base + lg + 8 * (e // 2)
                    column = 8 * nt + 2 * lt + e % 2
                    if row < n and column < m:
                        assert np.isnan(result[column, row]), "stored twice"
                        result[column, row] = total[nt, lane, e] * scale
    return result


def random_quant(rng, kind, rows, k, block=32, macro=256, scale_range=(110, 140)):
    codes = rng.integers(0, 256, size=(rows, k // 2), dtype=np.uint8)
    if kind == "nvfp4":
        scales = rng.integers(0, 0x7F, size=(rows, k // 16), dtype=np.uint8)
        return Quant(kind, 16, codes, scales, np.float32(rng.uniform(0.5, 2.0)))
    lo, hi = scale_range
    scales = rng.integers(lo, hi + 1, size=(rows, k // block), dtype=np.uint8)
    if kind == "macro":
        mb = macro or k
        # bf16 values in [1, 2): 1 + j/128.
        values = 1.0 + rng.integers(0, 128, size=(rows, k // mb)) / 128.0
        return Quant(kind, 32, codes, scales, f64_to_bf16_exact(values), macro=mb)
    return Quant(kind, block, codes, scales)


def random_bf16(rng, m, k):
    x = rng.standard_normal((m, k)).astype(np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint32)


def check(m, n, k, w, lhs_bits=None, lhs_q=None, **kw):
    got = run_kernel(m, n, k, lhs_bits, lhs_q, w, **kw)
    a = bf16_to_f64(lhs_bits) if lhs_q is None else lhs_q.dequantize()
    want = a @ w.dequantize().T
    assert not np.any(np.isnan(got)), "an output was never stored"
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert err < 1e-12, err


SHAPES = [(1, 40, 416), (3, 16, 128), (8, 33, 256), (9, 24, 160), (16, 20, 544)]


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_w4a16_mxfp4(m, n, k):
    rng = np.random.default_rng(m * 1000 + n + k)
    check(m, n, k, random_quant(rng, "mxfp4", n, k), lhs_bits=random_bf16(rng, m, k))


def test_w4a16_mxfp4_extreme_scales():
    """E8M0 bytes from 0 (2^-127, a bf16 subnormal) to 250: the two-multiply
    factors are exact at both ends."""
    rng = np.random.default_rng(77)
    m, n, k = 2, 16, 256
    check(m, n, k, random_quant(rng, "mxfp4", n, k, scale_range=(0, 250)),
          lhs_bits=random_bf16(rng, m, k))


@pytest.mark.parametrize("warps,unroll", [(1, 1), (2, 2), (4, 1), (3, 2), (8, 4)])
def test_w4a16_warp_and_unroll_options(warps, unroll):
    rng = np.random.default_rng(warps * 10 + unroll)
    m, n, k = 5, 18, 1184  # 9 full chunks + a partial one
    check(m, n, k, random_quant(rng, "mxfp4", n, k), lhs_bits=random_bf16(rng, m, k),
          warps=warps, unroll=unroll)


@pytest.mark.parametrize("block", [16, 64])
def test_w4a16_mxfp4_block_sizes(block):
    rng = np.random.default_rng(block)
    m, n, k = 2, 17, 448
    check(m, n, k, random_quant(rng, "mxfp4", n, k, block=block),
          lhs_bits=random_bf16(rng, m, k))


@pytest.mark.parametrize("m,n,k", SHAPES[:4])
def test_w4a16_nvfp4(m, n, k):
    rng = np.random.default_rng(11 + k)
    check(m, n, k, random_quant(rng, "nvfp4", n, k), lhs_bits=random_bf16(rng, m, k))


@pytest.mark.parametrize("macro", [128, 256, 0])
def test_w4a16_macro(macro):
    rng = np.random.default_rng(macro + 3)
    m, n, k = 4, 19, 512
    check(m, n, k, random_quant(rng, "macro", n, k, macro=macro),
          lhs_bits=random_bf16(rng, m, k))


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_w4a4_mxfp4(m, n, k):
    rng = np.random.default_rng(100 + m + n)
    check(m, n, k, random_quant(rng, "mxfp4", n, k),
          lhs_q=random_quant(rng, "mxfp4", m, k))


def test_w4a4_nvfp4_and_macro():
    rng = np.random.default_rng(5)
    m, n, k = 11, 21, 640
    check(m, n, k, random_quant(rng, "nvfp4", n, k), lhs_q=random_quant(rng, "nvfp4", m, k))
    check(m, n, k, random_quant(rng, "macro", n, k, macro=128),
          lhs_q=random_quant(rng, "macro", m, k, macro=0))
    check(m, n, k, random_quant(rng, "mxfp4", n, k),
          lhs_q=random_quant(rng, "nvfp4", m, k))


def test_nan_scale_poisons_only_its_block():
    rng = np.random.default_rng(9)
    m, n, k = 2, 16, 256
    w = random_quant(rng, "mxfp4", n, k)
    w.scales[3, 2] = 0xFF
    got = run_kernel(m, n, k, random_bf16(rng, m, k), None, w)
    assert np.all(np.isnan(got[:, 3]))
    assert not np.any(np.isnan(np.delete(got, 3, axis=1)))
