"""CPU emulation of the prefill matmul kernel's data layout and bit tricks.

lib/Conversion/FP4ToGPU/PrefillMatmulKernel.cpp stages operands through
swizzled shared memory with cp.async, permutes K inside every 64-wide group
and builds mma.sync B fragments from packed codes (FragmentDequant.cpp on
top of BF16PairDequant.cpp). A mistake in any index function would only
show on the GPU, so this file ports them one to one (same names, same
order) and runs the kernel on the CPU: CTAs, the K-tile ring, every
cp.async with its zero-fill, the scale prefetch, the W4A4 cooperative
dequantization, per-lane shared-memory reads, the warp-uniform choice of
the one- or two-multiply MXFP4 form, the PTX m16n8k16 fragment layouts, the
macro-factor partial sums and the guarded epilogue. The result must equal
the f64 product of the dequantized operands (the emulated tensor core
accumulates in f64 and every bf16 product in the kernel is exact, so only
summation order differs).

It also checks that the shared-memory reads of the mma loop are free of bank
conflicts, and the exactness of the dequantized pairs for every code and
scale byte.
"""
import itertools
import math

import numpy as np
import pytest

from bf16_emulation import E2M1, bf16_to_f64, mul_bf16x2

K_GROUP = 64


def e2m1_pair_bits(word, pair):
    """buildE2M1PairBits: (element pair, element pair + 4), e2m1 * 2^-126."""
    w = np.asarray(word, dtype=np.uint32)

    def shift(amount):
        if amount > 0:
            return (w << np.uint32(amount)) & np.uint32(0xFFFFFFFF)
        if amount < 0:
            return w >> np.uint32(-amount)
        return w

    magnitude = shift(6 - 4 * pair) & np.uint32(0x01C001C0)
    sign = shift(12 - 4 * pair) & np.uint32(0x80008000)
    return magnitude | sign


def prmt(lo, hi, selector):
    """prmt.b32 default mode: result byte i = pool byte selector[4i+3:4i]
    (bit 3 of a selector nibble is sign replication, unused here)."""
    lo = np.asarray(lo, dtype=np.uint32)
    hi = np.asarray(hi, dtype=np.uint32)
    pool = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))
    out = np.zeros(np.broadcast(lo, hi).shape, dtype=np.uint32)
    for i in range(4):
        nib = (selector >> (4 * i)) & 0xF
        assert nib < 8
        byte = (pool >> np.uint64(8 * nib)) & np.uint64(0xFF)
        out |= byte.astype(np.uint32) << np.uint32(8 * i)
    return out


def splat_upper_half(f):
    bits = np.asarray(f, dtype=np.float32).view(np.uint32)
    assert np.all((bits[np.isfinite(np.asarray(f, np.float32))] & 0xFFFF) == 0)
    half = bits >> np.uint32(16)
    return (half * np.uint32(0x00010001)).astype(np.uint32)


def e8m0_decode(byte):
    b = np.asarray(byte, dtype=np.int64) & 0xFF
    v = np.where(b == 0, 2.0 ** -127, np.ldexp(1.0, b - 127))
    return np.where(b == 0xFF, np.nan, v)


def e4m3_decode(byte):
    b = np.asarray(byte, dtype=np.int64) & 0xFF
    mag = b & 0x7F
    e = mag >> 3
    m = mag & 7
    v = np.where(e == 0, m * 2.0 ** -9, np.ldexp(1.0 + m / 8.0, e - 7))
    v = np.where(b & 0x80, -v, v)
    return np.where(mag == 0x7F, np.nan, v)


NV_OFFSET = 8  # BF16FragmentDequant::kNVFP4Offset


class Dequant:
    """BF16FragmentDequant: MXFP4 (any block multiple of 16), NVFP4, or the
    MXFP4 part of macro-scaled MXFP4 (macro_block >= 0)."""

    def __init__(self, nvfp4, block_size, macro_block=-1):
        self.nvfp4 = nvfp4
        self.block_size = block_size
        self.macro_block = macro_block

    def has_macro_factors(self):
        return self.macro_block >= 0

    def macro_span(self, k):
        return k if self.macro_block == 0 else self.macro_block

    def exponent_offset(self):
        return NV_OFFSET if self.nvfp4 else 0

    def has_fast_form(self):
        return not self.nvfp4

    def emit_fast_form_applies(self, byte):
        return np.asarray(byte) <= 128

    def emit_multiplier(self, byte, fast=False):
        if self.nvfp4:
            f = (e4m3_decode(byte) * 2.0 ** (126 - NV_OFFSET)).astype(np.float32)
        elif fast:
            # buildE8M0FactorTimes2Pow126: (byte + 126) * 0x00800080.
            b = np.asarray(byte, dtype=np.uint64)
            return ((b * 0x00800080 + 126 * 0x00800080) & 0xFFFFFFFF).astype(np.uint32)
        else:
            f = e8m0_decode(byte).astype(np.float32)
        return splat_upper_half(f)

    def emit_dequant_word(self, word, multiplier, fast=False):
        p0 = e2m1_pair_bits(word, 0)
        p1 = e2m1_pair_bits(word, 1)
        p2 = e2m1_pair_bits(word, 2)
        p3 = e2m1_pair_bits(word, 3)
        pairs = [prmt(p0, p1, 0x5410), prmt(p2, p3, 0x5410),
                 prmt(p0, p1, 0x7632), prmt(p2, p3, 0x7632)]
        restore = None if (self.nvfp4 or fast) else \
            splat_upper_half(np.float32(2.0 ** 126))
        out = []
        for pair in pairs:
            if restore is not None:
                pair = mul_bf16x2(pair, restore)
            out.append(mul_bf16x2(pair, multiplier))
        return out


# --------------------------------------------------------------------------
# The kernel (PrefillMatmulKernel.cpp), ported function by function
# --------------------------------------------------------------------------


class Plan:
    """planPrefill."""

    def __init__(self, m, n, k, bm=128, bn=128, bk=64, warps_m=2, warps_n=4,
                 stages=3, w4a4=False, lhs_dq=None, rhs_dq=None,
                 shared=False):
        self.m, self.n, self.k = m, n, k
        self.bm, self.bn, self.bk = bm, bn, bk
        self.warps_m, self.warps_n, self.stages = warps_m, warps_n, stages
        self.threads = 32 * warps_m * warps_n
        self.w4a4 = w4a4
        # prefill-dequant=shared
        self.shared = shared
        assert not shared or stages >= 3
        assert bk in (64, 128, 256)
        assert bm % (16 * warps_m) == 0 and bn % (8 * warps_n) == 0
        self.wm = bm // warps_m
        self.wn = bn // warps_n
        self.m_tiles = self.wm // 16
        self.n_tiles = self.wn // 8
        assert self.m_tiles * self.n_tiles * 4 <= 128
        assert k % 16 == 0
        self.groups = bk // K_GROUP
        self.num_k = -(-k // bk)
        self.lhs_row_factor = self.rhs_row_factor = False
        self.lhs_macro_tiles = self.rhs_macro_tiles = self.flush_tiles = 0

        def macro(dq):
            if dq is None or not dq.has_macro_factors():
                return False, 0
            span = dq.macro_span(k)
            if span >= k:
                return True, 0
            assert span % bk == 0
            tiles = span // bk
            self.flush_tiles = (math.gcd(self.flush_tiles, tiles)
                                if self.flush_tiles else tiles)
            return False, tiles

        self.rhs_row_factor, self.rhs_macro_tiles = macro(rhs_dq)
        self.lhs_row_factor, self.lhs_macro_tiles = macro(lhs_dq)
        while (w4a4 and self.flush_tiles and self.m_tiles * self.n_tiles * 4 > 32
               and (self.bn // 2) % (8 * warps_n) == 0):
            self.bn //= 2
            self.wn = self.bn // warps_n
            self.n_tiles = self.wn // 8
        if shared:
            assert self.wm % 16 == 0 and self.wn % 16 == 0
        self.code_chunk = 16 if k % 32 == 0 else 8


def code_group_swizzle(p, row):
    if p.groups == 1:
        return 0 * row
    if p.groups == 2:
        return (row >> 1) & 1
    return row & 3


def bf16_chunk_swizzle(chunk, row):
    return chunk ^ (row & 7)


def cp_async(dst, dst_start, src_row, src_start, dst_elements, src_elements):
    """nvgpu.device_async_copy with zero fill."""
    dst[dst_start:dst_start + dst_elements] = 0
    dst[dst_start:dst_start + src_elements] = \
        src_row[src_start:src_start + src_elements]


def zero_fill_source(p, row, total_rows, tile_rows, col, cols, chunk):
    """zeroFillSource: (source row, source column, source elements)."""
    valid = None
    if p.k % p.bk != 0:
        valid = col < cols
        col = col if valid else 0
    if total_rows % tile_rows != 0:
        row_in = row < total_rows
        valid = row_in if valid is None else (valid and row_in)
        row = min(row, total_rows - 1)
    count = chunk if valid is None else (chunk if valid else 0)
    return row, col, count


def issue_bf16_rows(p, src, view, row_base, rows, total_rows, tile):
    chunks_per_row = p.bk // 8
    k_base = tile * p.bk
    for u in range(rows * chunks_per_row):
        row = u // chunks_per_row
        chunk = u % chunks_per_row
        g_row = row_base + row
        g_k = k_base + chunk * 8
        src_row, src_k, src_elements = zero_fill_source(
            p, g_row, total_rows, rows, g_k, p.k, 8)
        dst_col = bf16_chunk_swizzle(chunk, row) * 8
        cp_async(view[row], dst_col, src[src_row], src_k, 8, src_elements)


def issue_code_rows(p, src, view, row_base, rows, total_rows, tile):
    row_bytes = p.bk // 2
    chunks_per_row = row_bytes // p.code_chunk
    byte_base = tile * row_bytes
    for u in range(rows * chunks_per_row):
        row = u // chunks_per_row
        chunk = u % chunks_per_row
        lb = chunk * p.code_chunk
        g_row = row_base + row
        g_byte = byte_base + lb
        src_row, src_byte, src_elements = zero_fill_source(
            p, g_row, total_rows, rows, g_byte, p.k // 2, p.code_chunk)
        group = (lb // 32) ^ code_group_swizzle(p, row)
        dst_byte = group * 32 + lb % 32
        cp_async(view[row], dst_byte, src[src_row], src_byte, p.code_chunk,
                 src_elements)


class Operand:
    """A quantized operand: codes [R, K/2] uint8, scales [R, K/bs] uint8,
    tensor scale (NVFP4)."""

    def __init__(self, dq, codes, scales, tensor_scale=1.0, factors=None):
        self.dq = dq
        self.codes = codes
        self.scales = scales
        self.tensor_scale = tensor_scale
        self.factors = factors  # macro: [R, K / span] bf16 values (f64)

    def dequantized(self):
        lo = self.codes & 0xF
        hi = self.codes >> 4
        codes = np.stack([lo, hi], axis=-1).reshape(self.codes.shape[0], -1)
        values = E2M1[codes]
        bs = self.dq.block_size
        if self.dq.nvfp4:
            s = e4m3_decode(self.scales) * self.tensor_scale
        else:
            s = e8m0_decode(self.scales)
        out = values * np.repeat(s, bs, axis=1)
        if self.factors is not None:
            span = out.shape[1] // self.factors.shape[1]
            out = out * np.repeat(self.factors, span, axis=1)
        return out


class Kernel:
    def __init__(self, p, lhs, rhs, out_dtype=np.float32):
        """lhs: bf16 bits [M, K] (uint16) or an Operand (W4A4)."""
        self.p = p
        self.lhs = lhs
        self.rhs = rhs
        self.out = np.full((p.m, p.n), np.nan)
        # Tiles run in the general (False) and one-multiply (True) form.
        self.paths = {False: 0, True: 0}
        self.stores = np.zeros((p.m, p.n), dtype=np.int64)

    # Scales -------------------------------------------------------------
    def load_rhs_scales(self, tile, n0, warp_col, g, q):
        p = self.p
        bs = self.rhs.dq.block_size
        blocks = p.k // bs
        k_lane = tile * p.bk + q * 16
        out = []
        for jn in range(p.n_tiles):
            row = n0 + warp_col + g + 8 * jn
            if p.n % p.bn != 0:
                row = np.minimum(row, p.n - 1)
            for kg in range(p.groups):
                block = (k_lane + kg * K_GROUP) // bs
                if p.k % p.bk != 0:
                    block = np.minimum(block, blocks - 1)
                out.append(self.rhs.scales[row, block].astype(np.uint32))
        return out

    def load_lhs_scales(self, tile, m0, tid):
        return self.load_unit_scales(self.lhs, m0, self.p.bm, self.p.m, tile,
                                     tid)

    def load_unit_scales(self, operand, row_base, rows, total_rows, tile, tid):
        """loadUnitScales."""
        p = self.p
        units_per_row = p.bk // 32
        count = rows * units_per_row
        bs = operand.dq.block_size
        blocks = p.k // bs
        out = []
        for base in range(0, count, p.threads):
            u = tid + base
            if base + p.threads > count:
                u = min(u, count - 1)
            row = row_base + u // units_per_row
            if total_rows % rows != 0:
                row = min(row, total_rows - 1)
            k = tile * p.bk + (u % units_per_row) * 32
            for h in range(1 if bs % 32 == 0 else 2):
                block = (k + 16 * h) // bs
                if p.k % p.bk != 0:
                    block = min(block, blocks - 1)
                out.append(np.uint32(operand.scales[row, block]))
        return out

    def multiplier(self, dq, byte, k_start, fast=False):
        mult = dq.emit_multiplier(byte, fast)
        if self.p.k % self.p.bk == 0:
            return mult
        return np.where(np.asarray(k_start) < self.p.k, mult, np.uint32(0))

    # W4A4 cooperative dequantization -----------------------------------
    def dequantize_lhs_tile(self, tile, a_codes, a_buf32, scales_per_thread):
        self.dequantize_tile(self.lhs.dq, self.p.bm, tile, a_codes, a_buf32,
                             scales_per_thread)

    def dequantize_tile(self, dq, rows, tile, codes, buf32, scales_per_thread):
        """dequantizeTile: codes [rows, BK/2] uint8 (one ring slot), buf32
        [rows, BK/2] uint32 (one bf16 buffer)."""
        p = self.p
        units_per_row = p.bk // 32
        count = rows * units_per_row
        bs = dq.block_size
        per_unit = 1 if bs % 32 == 0 else 2
        codes32 = codes.view(np.uint32)  # [rows, BK/8]
        for tid in range(p.threads):
            scales = scales_per_thread[tid]
            for rnd, base in enumerate(range(0, count, p.threads)):
                u = tid + base
                if u >= count:
                    continue
                row = u // units_per_row
                unit = u % units_per_row
                group = (unit // 2) ^ code_group_swizzle(p, row)
                src_word = group * 8 + (unit % 2) * 4
                words = codes32[row, src_word:src_word + 4]
                k_unit = tile * p.bk + unit * 32
                fast = False  # the general form only
                for t in range(4):
                    h = t // 2 if per_unit == 2 else 0
                    mult = self.multiplier(dq, scales[rnd * per_unit + h],
                                           k_unit + 16 * h, fast)
                    pairs = dq.emit_dequant_word(words[t], mult, fast)
                    chunk = unit * 4 + t
                    dst_word = bf16_chunk_swizzle(chunk, row) * 4
                    buf32[row, dst_word:dst_word + 4] = \
                        np.array(pairs, dtype=np.uint32).reshape(4)

    # mma loop (prefill-dequant=shared) ----------------------------------
    @staticmethod
    def ldmatrix_x4(view32, rows, cols):
        """ldmatrix.x4 (no transpose) of a bf16 tile given as [R, C/2]
        uint32: lane l supplies the address (rows[l], cols[l]) (bf16 element
        units, 16-byte aligned) of row l % 8 of matrix l / 8; register j of
        lane (g, q) is row g, columns 2q, 2q+1 of matrix j."""
        lane = np.arange(32)
        g, q = lane // 4, lane % 4
        assert np.all(cols % 8 == 0)
        regs = []
        for j in range(4):
            src = 8 * j + g
            regs.append(view32[rows[src], cols[src] // 2 + q])
        return regs

    def mma_tile_shared(self, a32, b32, warp_row, warp_col, lane, acc):
        """mmaTileShared: a32 [BM, BK/2], b32 [BN, BK/2] uint32 views of
        the swizzled bf16 tiles."""
        p = self.p
        g, q = lane // 4, lane % 4
        row_swizzle = lane & 7
        a_row_lane, a_chunk_lane = lane % 16, lane // 16
        b_row_lane = (lane // 16) * 8 + lane % 8
        b_chunk_lane = (lane // 8) % 2
        a_row, b_row = warp_row + a_row_lane, warp_col + b_row_lane
        # The swizzle of every row a lane reads is lane & 7.
        assert np.all((a_row & 7) == row_swizzle)
        assert np.all((b_row & 7) == row_swizzle)
        for ks in range(p.bk // 16):
            a_col = ((a_chunk_lane + 2 * ks) ^ row_swizzle) * 8
            b_col = ((b_chunk_lane + 2 * ks) ^ row_swizzle) * 8
            a = [self.ldmatrix_x4(a32, a_row + 16 * i, a_col)
                 for i in range(p.m_tiles)]
            bw = []
            for jp in range(p.n_tiles // 2):
                r = self.ldmatrix_x4(b32, b_row + 16 * jp, b_col)
                bw.append([r[0], r[1]])
                bw.append([r[2], r[3]])
            for i in range(p.m_tiles):
                for jn in range(p.n_tiles):
                    acc[i][jn] = mma_m16n8k16(a[i], bw[jn], acc[i][jn], g, q)

    # mma loop -----------------------------------------------------------
    def mma_tile_dispatch(self, tile, a32, b32, warp_row, warp_col, g, q,
                          rhs_scales, acc):
        if not self.rhs.dq.has_fast_form():
            return self.mma_tile(tile, a32, b32, warp_row, warp_col, g, q,
                                 rhs_scales, acc, False)
        ok = np.ones(32, dtype=bool)
        for byte in rhs_scales:
            ok &= self.rhs.dq.emit_fast_form_applies(byte)
        fast = bool(np.all(ok))  # vote.sync.all
        self.paths[fast] += 1
        return self.mma_tile(tile, a32, b32, warp_row, warp_col, g, q,
                             rhs_scales, acc, fast)

    def mma_tile(self, tile, a32, b32, warp_row, warp_col, g, q, rhs_scales,
                 acc, fast):
        """One warp; g, q: lane arrays (32,). a32: [BM, BK/2] uint32 view of
        the A bf16 tile, b32: [BN, BK/8] uint32 view of the codes tile."""
        p = self.p
        k_lane = tile * p.bk + q * 16
        row_g = warp_row + g
        col_g = warp_col + g
        code_swizzle = code_group_swizzle(p, g)
        q2 = q * 2
        for kg in range(p.groups):
            code_word = (kg ^ code_swizzle) * 8 + q2
            codes, mults = [], []
            for jn in range(p.n_tiles):
                rows = col_g + 8 * jn
                codes.append(np.stack([b32[rows, code_word],
                                       b32[rows, code_word + 1]], axis=-1))
                mults.append(self.multiplier(self.rhs.dq,
                                             rhs_scales[jn * p.groups + kg],
                                             k_lane + kg * K_GROUP, fast))
            for j in range(2):
                chunk = kg * 8 + q2 + j
                a_word = bf16_chunk_swizzle(chunk, g) * 4
                a_lo, a_hi = [], []
                for i in range(p.m_tiles):
                    row = row_g + 16 * i
                    a_lo.append(np.stack([a32[row, a_word + w] for w in range(4)], -1))
                    a_hi.append(np.stack([a32[row + 8, a_word + w] for w in range(4)], -1))
                pairs = [self.rhs.dq.emit_dequant_word(codes[jn][:, j], mults[jn], fast)
                         for jn in range(p.n_tiles)]
                for t in range(2):
                    for i in range(p.m_tiles):
                        a = [a_lo[i][:, 2 * t], a_hi[i][:, 2 * t],
                             a_lo[i][:, 2 * t + 1], a_hi[i][:, 2 * t + 1]]
                        for jn in range(p.n_tiles):
                            bw = [pairs[jn][2 * t], pairs[jn][2 * t + 1]]
                            acc[i][jn] = mma_m16n8k16(a, bw, acc[i][jn], g, q)

    def load_column_factors(self, block, n0, warp_col, q):
        p = self.p
        out = []
        for jn in range(p.n_tiles):
            for e in range(2):
                col = n0 + warp_col + q * 2 + 8 * jn + e
                if p.n % p.bn != 0 or p.n % 2 != 0:
                    col = np.minimum(col, p.n - 1)
                out.append(self.rhs.factors[col, block])
        return out

    def load_row_factors(self, block, m0, warp_row, g):
        p = self.p
        out = []
        for i in range(p.m_tiles):
            for half in range(2):
                row = m0 + warp_row + g + 16 * i + 8 * half
                if p.m % p.bm != 0:
                    row = np.minimum(row, p.m - 1)
                out.append(self.lhs.factors[row, block])
        return out

    @staticmethod
    def apply_factors(v, i, jn, e, col_factors, row_factors):
        if col_factors:
            v = v * col_factors[2 * jn + e % 2]
        if row_factors:
            v = v * row_factors[2 * i + e // 2]
        return v

    def flush_partials(self, kt, acc, sums, m0, n0, warp_row, warp_col, g, q):
        p = self.p
        nxt = kt + 1
        if not (nxt % p.flush_tiles == 0 or nxt == p.num_k):
            return acc, sums
        col_f = (self.load_column_factors(kt // p.rhs_macro_tiles, n0, warp_col, q)
                 if p.rhs_macro_tiles else [])
        row_f = (self.load_row_factors(kt // p.lhs_macro_tiles, m0, warp_row, g)
                 if p.lhs_macro_tiles else [])
        folded = [[None] * p.n_tiles for _ in range(p.m_tiles)]
        for i in range(p.m_tiles):
            for jn in range(p.n_tiles):
                t = np.empty((32, 4))
                for e in range(4):
                    t[:, e] = acc[i][jn][:, e] + self.apply_factors(
                        sums[i][jn][:, e], i, jn, e, col_f, row_f)
                folded[i][jn] = t
        zeros = [[np.zeros((32, 4)) for _ in range(p.n_tiles)]
                 for _ in range(p.m_tiles)]
        return folded, zeros

    def epilogue(self, acc, m0, n0, warp_row, warp_col, g, q):
        p = self.p
        col_f = self.load_column_factors(0, n0, warp_col, q) if p.rhs_row_factor else []
        row_f = self.load_row_factors(0, m0, warp_row, g) if p.lhs_row_factor else []
        factor = 2.0 ** (self.rhs.dq.exponent_offset() +
                         (self.lhs.dq.exponent_offset()
                          if isinstance(self.lhs, Operand) else 0))
        if self.rhs.dq.nvfp4:
            factor *= self.rhs.tensor_scale
        if isinstance(self.lhs, Operand) and self.lhs.dq.nvfp4:
            factor *= self.lhs.tensor_scale
        for i in range(p.m_tiles):
            for jn in range(p.n_tiles):
                c = acc[i][jn]
                col = n0 + warp_col + q * 2 + 8 * jn
                for half in range(2):
                    row = m0 + warp_row + g + 16 * i + 8 * half
                    for e, cc in ((0, col), (1, col + 1)):
                        ok = (row < p.m) & (cc < p.n)
                        r, cl = row[ok], cc[ok]
                        v = self.apply_factors(c[:, 2 * half + e], i, jn,
                                               2 * half + e, col_f, row_f)
                        self.out[r, cl] = v[ok] * factor
                        np.add.at(self.stores, (r, cl), 1)

    def run(self):
        p = self.p
        lane = np.arange(32)
        g, q = lane // 4, lane % 4
        for by, bx in itertools.product(range(-(-p.m // p.bm)),
                                        range(-(-p.n // p.bn))):
            m0, n0 = by * p.bm, bx * p.bn
            ring_b = np.zeros((p.stages, p.bn, p.bk // 2), dtype=np.uint8)
            if p.w4a4:
                ring_a = np.zeros((p.stages, p.bm, p.bk // 2), dtype=np.uint8)
                a_buf = np.zeros((2, p.bm, p.bk // 2), dtype=np.uint32)
            else:
                ring_a = np.zeros((p.stages, p.bm, p.bk), dtype=np.uint16)

            def issue(tile, stage):
                if p.w4a4:
                    issue_code_rows(p, self.lhs.codes, ring_a[stage], m0, p.bm,
                                    p.m, tile)
                else:
                    issue_bf16_rows(p, self.lhs, ring_a[stage], m0, p.bm, p.m,
                                    tile)
                issue_code_rows(p, self.rhs.codes, ring_b[stage], n0, p.bn,
                                p.n, tile)

            # cp.async completes immediately here; the ring discipline is
            # still checked: a slot is only written after its last reader.
            for t in range(p.stages - 1):
                if t < p.num_k:
                    issue(t, t)
            warps = [(w // p.warps_n * p.wm, w % p.warps_n * p.wn)
                     for w in range(p.warps_m * p.warps_n)]
            acc = [[[np.zeros((32, 4)) for _ in range(p.n_tiles)]
                    for _ in range(p.m_tiles)] for _ in warps]
            partial = [[[np.zeros((32, 4)) for _ in range(p.n_tiles)]
                        for _ in range(p.m_tiles)] for _ in warps]
            if p.shared:
                self.run_shared(m0, n0, ring_a, ring_b, issue, warps, acc,
                                partial)
                for w, (wr, wc) in enumerate(warps):
                    self.epilogue(acc[w], m0, n0, wr, wc, g, q)
                continue
            rhs_scales = [self.load_rhs_scales(0, n0, wc, g, q) for _, wc in warps]
            if p.w4a4:
                first = [self.load_lhs_scales(0, m0, tid) for tid in range(p.threads)]
                self.dequantize_lhs_tile(0, ring_a[0], a_buf[0], first)
                lhs_scales = [self.load_lhs_scales(min(1, p.num_k - 1), m0, tid)
                              for tid in range(p.threads)]
            for kt in range(p.num_k):
                nxt = kt + p.stages - 1
                if nxt < p.num_k:
                    # The slot refilled is the one tile kt - 1 used.
                    assert nxt % p.stages == (kt - 1) % p.stages
                    issue(nxt, nxt % p.stages)
                next_r = [self.load_rhs_scales(min(kt + 1, p.num_k - 1), n0, wc, g, q)
                          for _, wc in warps]
                stage = kt % p.stages
                if p.w4a4:
                    next_l = [self.load_lhs_scales(min(kt + 2, p.num_k - 1), m0, tid)
                              for tid in range(p.threads)]
                    ahead = kt + 1
                    if ahead < p.num_k:
                        self.dequantize_lhs_tile(ahead, ring_a[ahead % p.stages],
                                                 a_buf[ahead % 2], lhs_scales)
                    a32 = a_buf[kt % 2]
                else:
                    a32 = ring_a[stage].view(np.uint32)
                b32 = ring_b[stage].view(np.uint32)
                for w, (wr, wc) in enumerate(warps):
                    if not p.flush_tiles:
                        self.mma_tile_dispatch(kt, a32, b32, wr, wc, g, q,
                                               rhs_scales[w], acc[w])
                        continue
                    self.mma_tile_dispatch(kt, a32, b32, wr, wc, g, q,
                                           rhs_scales[w], partial[w])
                    acc[w], partial[w] = self.flush_partials(
                        kt, acc[w], partial[w], m0, n0, wr, wc, g, q)
                rhs_scales = next_r
                if p.w4a4:
                    lhs_scales = next_l
            for w, (wr, wc) in enumerate(warps):
                self.epilogue(acc[w], m0, n0, wr, wc, g, q)
        return self.out

    def run_shared(self, m0, n0, ring_a, ring_b, issue, warps, acc, partial):
        """The K loop of prefill-dequant=shared for one CTA: W (and the W4A4
        A) dequantized one tile ahead into double-buffered bf16 tiles."""
        p = self.p
        lane = np.arange(32)
        g, q = lane // 4, lane % 4
        b_buf = np.zeros((2, p.bn, p.bk // 2), dtype=np.uint32)
        a_buf = np.zeros((2, p.bm, p.bk // 2), dtype=np.uint32)
        # Poison: a tile read before it was written shows up as NaN.
        b_buf[:] = 0x7FC07FC0
        a_buf[:] = 0x7FC07FC0
        threads = range(p.threads)

        def w_scales(tile):
            return [self.load_unit_scales(self.rhs, n0, p.bn, p.n, tile, tid)
                    for tid in threads]

        def a_scales(tile):
            return [self.load_lhs_scales(tile, m0, tid) for tid in threads]

        first_r = w_scales(0)
        if p.w4a4:
            self.dequantize_tile(self.lhs.dq, p.bm, 0, ring_a[0], a_buf[0],
                                 a_scales(0))
        self.dequantize_tile(self.rhs.dq, p.bn, 0, ring_b[0], b_buf[0], first_r)
        second = min(1, p.num_k - 1)
        r_scales = w_scales(second)
        l_scales = a_scales(second) if p.w4a4 else None
        for kt in range(p.num_k):
            nxt = kt + p.stages - 1
            if nxt < p.num_k:
                # The slot refilled is the one tile kt - 1 used (its codes
                # were dequantized in iteration kt - 2, its bf16 A read by
                # the mma of iteration kt - 1).
                assert nxt % p.stages == (kt - 1) % p.stages
                issue(nxt, nxt % p.stages)
            next_r = w_scales(min(kt + 2, p.num_k - 1))
            next_l = a_scales(min(kt + 2, p.num_k - 1)) if p.w4a4 else None
            ahead = kt + 1
            if ahead < p.num_k:
                # Buffer ahead % 2 was last read by the mma of kt - 1.
                if p.w4a4:
                    self.dequantize_tile(self.lhs.dq, p.bm, ahead,
                                         ring_a[ahead % p.stages],
                                         a_buf[ahead % 2], l_scales)
                self.dequantize_tile(self.rhs.dq, p.bn, ahead,
                                     ring_b[ahead % p.stages],
                                     b_buf[ahead % 2], r_scales)
            a32 = a_buf[kt % 2] if p.w4a4 else ring_a[kt % p.stages].view(np.uint32)
            b32 = b_buf[kt % 2]
            for w, (wr, wc) in enumerate(warps):
                if not p.flush_tiles:
                    self.mma_tile_shared(a32, b32, wr, wc, lane, acc[w])
                    continue
                self.mma_tile_shared(a32, b32, wr, wc, lane, partial[w])
                acc[w], partial[w] = self.flush_partials(
                    kt, acc[w], partial[w], m0, n0, wr, wc, g, q)
            r_scales, l_scales = next_r, next_l


def mma_m16n8k16(a, bw, c, g, q):
    """PTX mma.m16n8k16.row.col bf16 fragments (lane = 4 g + q), f64 sums."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    C = np.zeros((16, 8))
    lo = lambda w: bf16_to_f64(w)
    hi = lambda w: bf16_to_f64(np.asarray(w, np.uint32) >> np.uint32(16))
    A[g, 2 * q], A[g, 2 * q + 1] = lo(a[0]), hi(a[0])
    A[g + 8, 2 * q], A[g + 8, 2 * q + 1] = lo(a[1]), hi(a[1])
    A[g, 2 * q + 8], A[g, 2 * q + 9] = lo(a[2]), hi(a[2])
    A[g + 8, 2 * q + 8], A[g + 8, 2 * q + 9] = lo(a[3]), hi(a[3])
    B[2 * q, g], B[2 * q + 1, g] = lo(bw[0]), hi(bw[0])
    B[2 * q + 8, g], B[2 * q + 9, g] = lo(bw[1]), hi(bw[1])
    C[g, 2 * q], C[g, 2 * q + 1] = c[:, 0], c[:, 1]
    C[g + 8, 2 * q], C[g + 8, 2 * q + 1] = c[:, 2], c[:, 3]
    D = A @ B + C
    return np.stack([D[g, 2 * q], D[g, 2 * q + 1],
                     D[g + 8, 2 * q], D[g + 8, 2 * q + 1]], axis=-1)


# --------------------------------------------------------------------------
# Test data
# --------------------------------------------------------------------------


def random_operand(rng, rows, k, nvfp4, block_size, macro_block=-1):
    codes = rng.integers(0, 256, size=(rows, k // 2), dtype=np.uint8)
    if macro_block >= 0:
        op = random_operand(rng, rows, k, False, 32)
        span = k if macro_block == 0 else macro_block
        f = rng.uniform(1.0, 2.0, size=(rows, k // span)).astype(np.float32)
        f = bf16_to_f64(f.view(np.uint32) >> 16)
        return Operand(Dequant(False, 32, macro_block), op.codes, op.scales,
                       factors=f)
    if nvfp4:
        scales = rng.integers(0x08, 0x7F, size=(rows, k // 16), dtype=np.uint8)
        return Operand(Dequant(True, 16), codes, scales, tensor_scale=0.75)
    # Around 2^0; the last block column also has scales above 2 (where
    # 2^(byte-1) leaves bf16), so that the last K tile runs the general
    # dequantization form and the others the one-multiply form.
    scales = rng.integers(112, 129, size=(rows, k // block_size), dtype=np.uint8)
    scales[:, -1] += 8
    return Operand(Dequant(False, block_size), codes, scales)


def random_bf16(rng, rows, cols):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16)


CASES = [
    # (m, n, k, scheme, block, w4a4, tiles); scheme "macroN": macro block N
    (130, 136, 160, "mx", 32, False, {}),
    (40, 24, 96, "nv", 16, False, dict(bm=32, bn=16, warps_m=1, warps_n=2)),
    (48, 40, 208, "nv", 16, True, dict(bm=32, bn=32, warps_m=2, warps_n=2)),
    (33, 20, 256, "mx", 64, True, dict(bm=32, bn=16, bk=128, warps_m=2, warps_n=1)),
    (64, 64, 512, "mx", 16, False, dict(bm=64, bn=32, bk=256, warps_m=2, warps_n=2, stages=4)),
    (20, 17, 128, "mx", 32, True, dict(bm=32, bn=16, warps_m=1, warps_n=1, stages=3)),
    # Blocks of 48: 32-code units of the A dequantization straddle blocks.
    (36, 24, 240, "mx", 48, True, dict(bm=32, bn=16, warps_m=2, warps_n=2, stages=4)),
    # Macro factors on partial sums (every 4 tiles; W4A4: gcd(2, 4) = 2 and
    # the N tile halved), per row in the epilogue (0 = whole axis, or K).
    (40, 24, 512, "macro256", 32, False, dict(bm=32, bn=16, warps_m=2, warps_n=1)),
    (36, 40, 512, "macro128/256", 32, True, dict(bm=32, bn=32, warps_m=2, warps_n=2)),
    (64, 96, 512, "macro128/256", 32, True, {}),
    (20, 24, 192, "macro0", 32, False, dict(bm=32, bn=16, warps_m=1, warps_n=2)),
    (20, 24, 256, "macro256/0", 32, True, dict(bm=32, bn=16, warps_m=1, warps_n=2)),
]


# prefill-dequant=shared: warp tiles multiples of 16x16.
SHARED_CASES = [
    (130, 136, 160, "mx", 32, False, {}),
    (200, 77, 224, "mx", 32, False, {}),
    (40, 40, 96, "nv", 16, False, dict(bm=32, bn=32, warps_m=2, warps_n=2)),
    (48, 40, 208, "nv", 16, True, dict(bm=32, bn=32, warps_m=2, warps_n=2)),
    (33, 20, 256, "mx", 64, True, dict(bm=32, bn=32, bk=128, warps_m=2, warps_n=1)),
    (64, 64, 512, "mx", 16, False, dict(bm=64, bn=64, bk=256, warps_m=2, warps_n=2, stages=4)),
    (36, 24, 240, "mx", 48, True, dict(bm=32, bn=32, warps_m=2, warps_n=2, stages=4)),
    (40, 24, 512, "macro256", 32, False, dict(bm=32, bn=32, warps_m=2, warps_n=1)),
    (36, 40, 512, "macro128/256", 32, True, dict(bm=32, bn=32, warps_m=2, warps_n=1)),
    (20, 24, 256, "macro256/0", 32, True, dict(bm=32, bn=32, warps_m=1, warps_n=2)),
    (40, 72, 128, "mx", 32, False, dict(bm=32, bn=64, warps_m=1, warps_n=1, bk=128)),
]


@pytest.mark.parametrize("m,n,k,scheme,bs,w4a4,tiles", SHARED_CASES)
def test_prefill_shared_dequant_emulation(m, n, k, scheme, bs, w4a4, tiles):
    test_prefill_kernel_emulation(m, n, k, scheme, bs, w4a4,
                                  dict(tiles, shared=True))


@pytest.mark.parametrize("m,n,k,scheme,bs,w4a4,tiles", CASES)
def test_prefill_kernel_emulation(m, n, k, scheme, bs, w4a4, tiles):
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    nv = scheme == "nv"
    macro = [-1, -1]
    if scheme.startswith("macro"):
        spans = [int(x) for x in scheme[5:].split("/")]
        macro = [spans[0], spans[-1]]  # lhs, rhs
    rhs = random_operand(rng, n, k, nv, bs, macro[1])
    if w4a4:
        lhs = random_operand(rng, m, k, nv, bs, macro[0])
        a = lhs.dequantized()
    else:
        lhs = random_bf16(rng, m, k)
        a = bf16_to_f64(lhs)
    p = Plan(m, n, k, w4a4=w4a4, lhs_dq=lhs.dq if w4a4 else None,
             rhs_dq=rhs.dq, **tiles)
    kernel = Kernel(p, lhs, rhs)
    out = kernel.run()
    assert np.all(kernel.stores == 1), "every output stored exactly once"
    if not nv and not tiles.get("shared"):
        assert kernel.paths[True] and kernel.paths[False], kernel.paths
    ref = a @ rhs.dequantized().T
    err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
    assert err < 1e-12, err


# --------------------------------------------------------------------------
# Permutation, bank conflicts, exactness
# --------------------------------------------------------------------------


def test_k_permutation_is_a_bijection():
    """Step s of lane q takes elements 16q + 4s + {0,1} (a0/b0) and
    16q + 4s + {2,3} (a2/b1) into k slots {2q, 2q+1} and {2q+8, 2q+9}."""
    seen = np.zeros(K_GROUP, dtype=int)
    for s in range(4):
        slots = set()
        for q in range(4):
            for e, slot in ((0, 2 * q), (1, 2 * q + 1), (2, 2 * q + 8), (3, 2 * q + 9)):
                seen[16 * q + 4 * s + e] += 1
                slots.add(slot)
        assert slots == set(range(16))
    assert np.all(seen == 1)


def banks(byte_addresses, width):
    """Bank-conflict degree of one shared-memory access: max over phases
    (128 bytes per phase) of the number of distinct 128-byte lines hitting
    the same bank group."""
    per_phase = 128 // width
    worst = 1
    addrs = np.asarray(byte_addresses)
    for start in range(0, len(addrs), per_phase):
        phase = addrs[start:start + per_phase]
        words = {}
        for a in phase:
            for w in range(a // 4, (a + width) // 4):
                words.setdefault(w % 32, set()).add(w)
        worst = max(worst, max(len(v) for v in words.values()))
    return worst


@pytest.mark.parametrize("bk", [64, 128, 256])
def test_mma_loop_reads_are_conflict_free(bk):
    p = Plan(128, 128, 4 * bk, bk=bk)
    lane = np.arange(32)
    g, q = lane // 4, lane % 4
    a_row_bytes = p.bk * 2
    b_row_bytes = p.bk // 2
    for kg in range(p.groups):
        for j in range(2):
            chunk = kg * 8 + q * 2 + j
            a_word = bf16_chunk_swizzle(chunk, g) * 4
            for i in range(p.m_tiles):
                addr = (g + 16 * i) * a_row_bytes + a_word * 4
                assert banks(addr, 16) == 1
        code_word = (kg ^ code_group_swizzle(p, g)) * 8 + q * 2
        for jn in range(p.n_tiles):
            addr = (g + 8 * jn) * b_row_bytes + code_word * 4
            assert banks(addr, 8) == 1


@pytest.mark.parametrize("bk", [64, 128, 256])
def test_bf16_cp_async_writes_are_conflict_free(bk):
    p = Plan(128, 128, 4 * bk, bk=bk)
    cpr = p.bk // 8
    for base in range(0, p.bm * cpr, 32):
        u = base + np.arange(32)
        row, chunk = u // cpr, u % cpr
        addr = row * p.bk * 2 + bf16_chunk_swizzle(chunk, row) * 16
        assert banks(addr, 16) == 1


@pytest.mark.parametrize("bk", [64, 128, 256])
def test_shared_dequant_accesses_are_conflict_free(bk):
    """prefill-dequant=shared: every 8-lane phase of an ldmatrix.x4 hits 8
    distinct 16-byte bank groups."""
    p = Plan(128, 128, 4 * bk, bk=bk, shared=True)
    lane = np.arange(32)
    row_bytes = p.bk * 2
    row_swizzle = lane & 7
    for ks in range(p.bk // 16):
        for chunk_lane, row_lane in (
                (lane // 16, lane % 16),
                ((lane // 8) % 2, (lane // 16) * 8 + lane % 8)):
            col = ((chunk_lane + 2 * ks) ^ row_swizzle) * 8
            assert np.all(col < p.bk)
            addr = row_lane * row_bytes + col * 2
            assert banks(addr, 16) == 1


def test_dequant_pairs_exact_every_code_and_scale():
    words = np.array([0x76543210, 0xFEDCBA98], dtype=np.uint32)
    codes = np.array([[(w >> (4 * i)) & 0xF for i in range(8)] for w in words])
    mx = Dequant(False, 32)
    for byte, fast in itertools.product(range(256), (False, True)):
        if fast and not mx.emit_fast_form_applies(byte):
            continue
        pairs = mx.emit_dequant_word(words, mx.emit_multiplier(np.uint32(byte), fast),
                                     fast)
        got = np.stack([bf16_to_f64(pairs[j // 2] >> np.uint32(16 * (j % 2)))
                        for j in range(8)], axis=-1)
        with np.errstate(over="ignore", invalid="ignore"):
            want = E2M1[codes] * e8m0_decode(byte)
        big = np.isfinite(want) & (np.abs(want) >= 2.0 ** 128)
        want = np.where(big, np.copysign(np.inf, want), want)
        np.testing.assert_array_equal(got, want)
    nv = Dequant(True, 16)
    for byte in range(256):
        pairs = nv.emit_dequant_word(words, nv.emit_multiplier(np.uint32(byte)))
        got = np.stack([bf16_to_f64(pairs[j // 2] >> np.uint32(16 * (j % 2)))
                        for j in range(8)], axis=-1)
        want = E2M1[codes] * e4m3_decode(byte) * 2.0 ** -NV_OFFSET
        np.testing.assert_array_equal(got, want)
