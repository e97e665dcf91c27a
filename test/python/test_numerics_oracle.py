"""Bit-exact agreement of the C++ reference quantizers with an independent
oracle (numerics.md sections 1-5).

The oracle is written from the spec, differently from the C++ rules: element
and E4M3/bf16 rounding by PyPI ml_dtypes; E8M0 shared exponents from np.frexp
and exact float64 comparisons (rceil as "smallest e with 6*2^e >= amax");
HiF4's half-up as floor(t + 0.5) in float64; macro significands via frexp.
Every format/rule sees >= 10^6 values drawn to hit ties (scaled grid points
and midpoints), scale-rule boundaries, wide exponent ranges with subnormals,
zeros of both signs, NaN and Inf.
"""

import os
import sys

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import reference as ref  # noqa: E402

F32 = np.float32
N_VALUES = 1 << 20  # per format and rule
GRID = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
MIDS = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5], dtype=np.float64)
_E4M3_GRID = (np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
              .astype(np.float64))
E4M3_MIDS = (_E4M3_GRID[:-1] + _E4M3_GRID[1:]) / 2


# ----------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------

def make_blocks(rng, n_blocks, bs, specials=True):
    """[n_blocks, bs] float32 rows of mixed difficulty."""
    kind = rng.integers(0, 8, n_blocks)
    out = np.empty((n_blocks, bs), dtype=np.float64)
    k = rng.integers(-135, 120, n_blocks).astype(np.float64)[:, None]

    # 0: Gaussian with a random binade (includes subnormal blocks).
    g = rng.standard_normal((n_blocks, bs)) * np.exp2(k)
    out[:] = g
    # 1, 2: grid points and midpoints at a power-of-two scale, the block max
    #       set on a scale-rule boundary so the midpoints are exact ties.
    vals = np.concatenate([GRID, MIDS])
    tie = rng.choice(vals, (n_blocks, bs)) * rng.choice([-1, 1], (n_blocks, bs))
    bmax = rng.choice([4.0, 6.0, 7.0, 3.5, 5.0, 1.75 * 4, 1.5 * 4, 8 - 2**-20],
                      n_blocks)[:, None]
    tie[:, :1] = bmax
    kk = rng.integers(-125, 100, n_blocks).astype(np.float64)[:, None]
    tie = tie * np.exp2(kk)
    sel = (kind == 1) | (kind == 2)
    out[sel] = tie[sel]
    # 3: uniform random finite bit patterns.
    bits = rng.integers(0, 0x7F800000, (n_blocks, bs), dtype=np.int64)
    sign = rng.integers(0, 2, (n_blocks, bs), dtype=np.int64) << 31
    rb = (bits | sign).astype(np.uint32).view(np.float32).astype(np.float64)
    out[kind == 3] = rb[kind == 3]
    # 4: Laplace with an outlier.
    lap = rng.laplace(size=(n_blocks, bs)) * np.exp2(k)
    lap[:, 0] *= 20
    out[kind == 4] = lap[kind == 4]
    x = out.astype(np.float32)
    # 5: zeros of both signs with a few tiny values.
    z = np.where(rng.random((n_blocks, bs)) < 0.5, F32(0.0), F32(-0.0))
    z[:, 3] = F32(-1e-42)
    x[kind == 5] = z[kind == 5]
    # 6: a scaled Gaussian near the top of the f32 range.
    big = (rng.standard_normal((n_blocks, bs)) * 2.0**125).astype(np.float32)
    x[kind == 6] = big[kind == 6]
    if specials:
        # 7: NaN / Inf somewhere.
        pos = rng.integers(0, bs, n_blocks)
        bad = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype=np.float32),
                         n_blocks)
        rows = np.nonzero(kind == 7)[0]
        x[rows, pos[rows]] = bad[rows]
    return x


# ----------------------------------------------------------------------------
# Independent oracle pieces
# ----------------------------------------------------------------------------

def e2m1_codes(v):
    """float64/float32 -> E2M1 codes (RNE, saturating) via ml_dtypes."""
    v = np.asarray(v, dtype=np.float64)
    c = np.clip(v, -6, 6).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    return c & 0xF


def e2m1_value(codes):
    return (np.asarray(codes, np.uint8).view(ml_dtypes.float4_e2m1fn)
            .astype(np.float32))


def half_away_codes(v):
    v = np.asarray(v, dtype=np.float64)
    a = np.abs(v)
    q = np.where(a < 2, np.floor(a * 2 + 0.5) / 2,
                 np.where(a < 4, np.floor(a + 0.5), 2 * np.floor(a / 2 + 0.5)))
    q = np.minimum(q, 6)
    mag = np.searchsorted(GRID, q).astype(np.uint8)
    return mag | (np.signbit(v).astype(np.uint8) << 3)


def mx_exponent(amax, rule):
    """Shared exponent per numerics.md 2 in float64 (amax finite, > 0)."""
    a = np.asarray(amax, dtype=np.float64)
    m, ex = np.frexp(a)  # a = m * 2^ex, m in [0.5, 1)
    fl = ex - 1
    if rule == "floor":
        e = fl - 2
    elif rule == "ceil":
        e = np.where(m == 0.5, fl, fl + 1) - 2
    elif rule == "even":
        # Round a to one mantissa bit, ties up, then floor(log2).
        r = np.ldexp(np.floor(m * 4 + 0.5) / 4, ex)
        e = np.frexp(r)[1] - 1 - 2
    elif rule == "rceil":
        # Smallest e with 6 * 2^e >= amax: start low, step up exactly.
        e = np.floor(np.log2(a / 6)).astype(np.int64) - 2
        for _ in range(5):
            e = np.where(6 * np.ldexp(1.0, e) >= a, e, e + 1)
        assert np.all(6 * np.ldexp(1.0, e) >= a)
        assert np.all(6 * np.ldexp(1.0, e - 1) < a)
    else:
        raise ValueError(rule)
    return np.clip(e, -127, 127).astype(np.int64)


def mx_oracle(x, bs, rule, rounding="nearest_even"):
    """codes [rows, n], scale bytes [rows, n/bs], dequant [rows, n]."""
    rows, n = x.shape
    xb = x.reshape(rows, n // bs, bs).astype(np.float64)
    finite = np.isfinite(xb).all(axis=2)
    amax = np.where(finite, np.abs(np.where(np.isfinite(xb), xb, 0)).max(axis=2),
                    0)
    e = np.full(amax.shape, -127, dtype=np.int64)
    pos = amax > 0
    e[pos] = mx_exponent(amax[pos], rule)
    byte = np.where(finite, e + 127, 255).astype(np.uint8)
    v = xb * np.exp2(-e)[..., None]  # exact in float64
    with np.errstate(invalid="ignore"):
        codes = (e2m1_codes(v) if rounding == "nearest_even"
                 else half_away_codes(v))
    scale = byte.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    with np.errstate(over="ignore"):  # 4 * 2^126 overflows to Inf, as in f32
        deq = (e2m1_value(codes).astype(np.float32) * scale[..., None])
    return (codes.reshape(rows, n), byte, deq.reshape(rows, n).astype(F32))


def e4m3(v):
    """float32 in [0, 448] -> (byte, value) via ml_dtypes."""
    f8 = np.asarray(v, dtype=np.float32).astype(ml_dtypes.float8_e4m3fn)
    return f8.view(np.uint8), f8.astype(np.float32)


def bf16(v):
    with np.errstate(invalid="ignore"):  # NaN inputs
        return (np.asarray(v, dtype=np.float32).astype(ml_dtypes.bfloat16)
                .astype(np.float32))


def nvfp4_oracle(x, four_over_six):
    """One tensor [rows, n]: codes, scale bytes, g_dec, dequant."""
    rows, n = x.shape
    fin = np.isfinite(x)
    tamax = F32(np.abs(np.where(fin, x, 0)).max()) if fin.any() else F32(0)
    top = F32(256 * 6) if four_over_six else F32(448 * 6)
    with np.errstate(divide="ignore", over="ignore"):
        g_enc = np.minimum(top / tamax, F32(np.finfo(np.float32).max))
    if tamax == 0:
        g_enc = F32(1)
    g_enc = F32(g_enc)
    g_dec = F32(F32(1) / g_enc)
    xb = x.reshape(rows, n // 16, 16)
    bfin = np.isfinite(xb).all(axis=2)
    bamax = np.where(bfin, np.abs(np.where(np.isfinite(xb), xb, 0)).max(axis=2),
                     0).astype(F32)
    k = F32(g_enc / F32(6))
    base = (bamax * k).astype(F32)

    def candidate(s_unclamped):
        s = np.minimum(s_unclamped, F32(448)).astype(F32)
        byte, sval = e4m3(s)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            enc = np.minimum(F32(1) / (sval * g_dec).astype(F32),
                             F32(np.finfo(np.float32).max)).astype(F32)
            v = np.clip((xb * enc[..., None]).astype(F32), -6, 6)
            codes = e2m1_codes(v)
        sign = np.signbit(xb).astype(np.uint8) << 3
        codes = np.where((byte == 0)[..., None], sign, codes)
        with np.errstate(invalid="ignore", over="ignore"):
            deq = ((e2m1_value(codes) * sval[..., None]).astype(F32)
                   * g_dec).astype(F32)
        byte = np.where(bfin, byte, 0x7F).astype(np.uint8)
        deq = np.where(bfin[..., None], deq, np.nan).astype(F32)  # s is NaN
        return codes, byte, deq

    c6, b6, d6 = candidate(base)
    if four_over_six:
        with np.errstate(over="ignore"):
            c4, b4, d4 = candidate((F32(1.5) * base).astype(F32))
        e6 = np.zeros(bamax.shape)
        e4 = np.zeros(bamax.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            for i in range(16):  # sequential f64 accumulation in element order
                e6 = e6 + (xb[..., i].astype(np.float64) - d6[..., i]) ** 2
                e4 = e4 + (xb[..., i].astype(np.float64) - d4[..., i]) ** 2
        pick4 = e4 < e6
        c6 = np.where(pick4[..., None], c4, c6)
        b6 = np.where(pick4, b4, b6)
        d6 = np.where(pick4[..., None], d4, d6)
    return c6.reshape(rows, n), b6, g_dec, d6.reshape(rows, n)


def hif4_oracle(x):
    rows, n = x.shape
    g = x.reshape(rows, n // 64, 64)
    gfin = np.isfinite(g).all(axis=2)
    a = np.abs(np.where(np.isfinite(g), g, 0)).astype(F32)
    m64 = a.max(axis=2)
    sf = bf16(m64 * bf16(F32(1) / F32(7)))
    sf = np.clip(sf, F32(2.0**-48), F32(49152)).astype(F32)
    mant, ex = np.frexp(sf.astype(np.float64))
    e = ex - 1
    q = np.rint(np.ldexp(sf.astype(np.float64), 2 - e))  # in [4, 8], RNE
    sf = np.ldexp(q, e - 2).astype(F32)
    m, ex2 = np.frexp(sf.astype(np.float64))
    byte = ((ex2 - 1 + 48) * 4 + (m * 8 - 4)).astype(np.int64)
    byte = np.where(gfin, byte, 0xFF)
    rec = bf16(F32(1) / sf)[..., None, None]
    m8 = a.reshape(rows, n // 64, 8, 8).max(axis=3)
    l2 = np.where((m8 * rec[..., 0]).astype(F32) >= 4, F32(2), F32(1))
    m4 = a.reshape(rows, n // 64, 16, 4).max(axis=3)
    l2r = np.repeat(l2, 2, axis=2)
    l3 = np.where(((m4 * rec[..., 0]).astype(F32) / l2r).astype(F32) >= 2,
                  F32(2), F32(1))
    ls = (np.repeat(l2r * l3, 4, axis=2)).astype(F32)
    with np.errstate(over="ignore"):  # 4|x| may overflow: t = Inf -> 1.75
        t = (((F32(4) * a).astype(F32) * rec[..., 0]).astype(F32)
             / ls).astype(F32)
    k = np.floor(t.astype(np.float64) + 0.5)  # exact half up
    k = np.where(k >= 8, 7, k)
    codes = k.astype(np.uint8) | (np.signbit(g).astype(np.uint8) << 3)
    deq = (k / 4 * ls * sf[..., None]).astype(F32)
    deq = np.where(np.signbit(g), -deq, deq).astype(F32)
    deq = np.where(gfin[..., None], deq, np.nan).astype(F32)
    meta = byte.astype(np.uint64)
    bits2 = (l2 == 2).astype(np.uint64)
    bits3 = (l3 == 2).astype(np.uint64)
    meta |= (bits2 << (8 + np.arange(8, dtype=np.uint64))).sum(axis=2)
    meta |= (bits3 << (16 + np.arange(16, dtype=np.uint64))).sum(axis=2)
    meta = np.where(gfin, meta, 0xFF).astype(np.uint32)
    return codes.reshape(rows, n), meta, deq.reshape(rows, n)


def macro_factor(amax):
    """Significand of f32(amax/6) rounded to bf16; 2 -> 1; 0/non-finite -> 1.
    amax/6 underflowing to 0 (amax < 2^-147) counts as zero: m = 1."""
    y = (np.asarray(amax, F32) / F32(6)).astype(F32)
    with np.errstate(invalid="ignore"):
        mant, _ = np.frexp(y.astype(np.float64))
        sig = bf16((mant * 2).astype(F32))
    sig = np.where(sig == 2, F32(1), sig)
    return np.where(np.isfinite(amax) & (y > 0), sig, F32(1)).astype(F32)


def macro_with(x, m, bm, rule):
    """Quantize macro-blocks [rows, n] with factors m [rows, n/bm]."""
    rows, n = x.shape
    mrep = np.repeat(m, bm, axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        y = (x / mrep).astype(F32)
        codes, byte, deq = mx_oracle(y, 32, rule)
        deq = (deq.reshape(rows, n) * mrep).astype(F32)
    return codes, byte, deq


def macro_oracle(x, bm, rule, search):
    rows, n = x.shape
    xm = x.reshape(rows, n // bm, bm)
    fin = np.isfinite(xm).all(axis=2)
    amax = np.where(fin, np.abs(np.where(np.isfinite(xm), xm, 0)).max(axis=2),
                    np.inf).astype(F32)
    if not search:
        m = macro_factor(amax)
        return (*macro_with(x, m, bm, rule), m)
    best = None
    for j in range(search):
        mj = bf16(F32(1) + F32(j) / F32(search))
        m = np.full((rows, n // bm), mj, dtype=F32)
        codes, byte, deq = macro_with(x, m, bm, rule)
        d = deq.reshape(rows, n // bm, bm)
        sse = np.zeros((rows, n // bm))
        with np.errstate(invalid="ignore", over="ignore"):
            for i in range(bm):
                sse = sse + (xm[..., i].astype(np.float64) - d[..., i]) ** 2
        if best is None:
            best = [sse, codes, byte, deq, m]
            continue
        win = sse < best[0]  # ties keep the smaller j
        best[0] = np.where(win, sse, best[0])
        wb = np.repeat(win, bm // 32, axis=1)
        we = np.repeat(win, bm, axis=1)
        best[1] = np.where(we, codes, best[1])
        best[2] = np.where(wb, byte, best[2])
        best[3] = np.where(we, deq, best[3])
        best[4] = np.where(win, m, best[4])
    return best[1], best[2], best[3], best[4]


# ----------------------------------------------------------------------------
# Comparison helpers
# ----------------------------------------------------------------------------

def same_f32(a, b):
    """Bitwise equality, any NaN equal to any NaN."""
    a = np.asarray(a, F32)
    b = np.asarray(b, F32)
    nan = np.isnan(a) & np.isnan(b)
    eq = (a.view(np.uint32) == b.view(np.uint32)) | nan
    return eq


def assert_codes(ours_packed, want, valid):
    ours = ref.unpack_codes(ours_packed)
    bad = (ours != want) & valid
    assert not bad.any(), (
        f"{bad.sum()} code mismatches, first at {np.argwhere(bad)[0]}: "
        f"ours {ours[bad][:8]} oracle {want[bad][:8]}")


def assert_values(ours, want):
    eq = same_f32(ours, want)
    assert eq.all(), (
        f"{(~eq).sum()} value mismatches: ours {ours[~eq][:8]} "
        f"oracle {want[~eq][:8]}")


def rng_for(name):
    """A fixed generator per test (independent of PYTHONHASHSEED)."""
    return np.random.default_rng(sum(map(ord, name)) * 7919)


# ----------------------------------------------------------------------------
# Scalar rules against ml_dtypes
# ----------------------------------------------------------------------------

def scalar_values(rng, n):
    k = rng.integers(0, 6, n)
    v = rng.standard_normal(n) * np.exp2(rng.integers(-8, 4, n))
    ties = rng.choice(np.concatenate([GRID, MIDS]), n)
    v = np.where(k == 0, ties, v)
    near = np.nextafter(ties.astype(F32), np.where(k % 2 == 0, F32(10),
                                                   F32(-10)))
    v = np.where(k == 1, near, v)
    v = v * rng.choice([-1, 1], n)
    bits = rng.integers(0, 0x7F800000, n, dtype=np.int64).astype(np.uint32)
    v = np.where(k == 2, bits.view(F32).astype(np.float64), v)
    v = v.astype(F32)
    v[:4] = [0.0, -0.0, np.inf, -np.inf]
    return v


def test_e2m1_elements_vs_ml_dtypes():
    rng = rng_for("e2m1")
    v = scalar_values(rng, N_VALUES)
    ours = ref.e2m1_encode(v)
    assert np.array_equal(ours, e2m1_codes(v))
    away = ref.e2m1_encode(v, "half_away")
    assert np.array_equal(away, half_away_codes(v))
    codes = np.arange(16, dtype=np.uint8)
    assert np.array_equal(ref.e2m1_decode(codes).view(np.uint32),
                          e2m1_value(codes).view(np.uint32))


def test_e8m0_decode_vs_ml_dtypes():
    b = np.arange(256, dtype=np.uint8)
    want = b.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    assert same_f32(ref.e8m0_decode(b), want).all()


def test_e4m3_vs_ml_dtypes():
    rng = rng_for("e4m3")
    v = (np.exp2(rng.uniform(-14, np.log2(448), N_VALUES))).astype(F32)
    grid = np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    grid = grid.astype(np.float64)
    mids = ((grid[:-1] + grid[1:]) / 2).astype(F32)  # all exact ties
    v[: mids.size] = mids
    v[-3:] = [0.0, 448.0, 2.0**-10]
    byte, _ = e4m3(v)
    assert np.array_equal(ref.e4m3_encode(v), byte)
    b = np.arange(256, dtype=np.uint8)
    assert same_f32(ref.e4m3_decode(b),
                    b.view(ml_dtypes.float8_e4m3fn).astype(np.float32)).all()


def test_bf16_vs_ml_dtypes():
    rng = rng_for("bf16")
    bits = rng.integers(0, 2**32, N_VALUES, dtype=np.uint64).astype(np.uint32)
    bits[:1000] = (bits[:1000] & 0xFFFF0000) | 0x8000  # exact ties
    v = bits.view(F32)
    assert same_f32(ref.round_to_bf16(v), bf16(v)).all()


@pytest.mark.parametrize("rule", ["floor", "ceil", "even", "rceil"])
def test_mx_scale_byte_vs_numpy_rules(rule):
    rng = rng_for("scale" + rule)
    bits = rng.integers(1, 0x7F800000, N_VALUES, dtype=np.int64)
    a = bits.astype(np.uint32).view(F32).copy()
    # Exact powers of two and the even / rceil boundaries with neighbours.
    k = rng.integers(-149, 128, 4096).astype(np.float64)
    special = np.concatenate([np.exp2(k), 1.75 * np.exp2(k[k < 127]),
                              1.5 * np.exp2(k[k < 127])]).astype(F32)
    special = special[np.isfinite(special) & (special > 0)]
    a[: special.size] = special
    a[special.size: 2 * special.size] = np.nextafter(special, F32(np.inf))
    a[2 * special.size: 3 * special.size] = np.nextafter(special, F32(0))
    a = a[a > 0]
    want = mx_exponent(a, rule) + 127
    assert np.array_equal(ref.mx_scale_byte(a, rule), want.astype(np.uint8))
    sp = np.array([0, -0.0, np.inf, np.nan], dtype=F32)
    assert list(ref.mx_scale_byte(sp, rule)) == [0, 0, 255, 255]


# ----------------------------------------------------------------------------
# Block quantizers
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("rule,rounding", [
    ("floor", "nearest_even"), ("ceil", "nearest_even"),
    ("even", "nearest_even"), ("rceil", "nearest_even"),
    ("floor", "half_away")])
def test_mxfp4_vs_oracle(rule, rounding):
    rng = rng_for("mx" + rule + rounding)
    x = make_blocks(rng, N_VALUES // 32, 32).reshape(-1, 256)
    q = ref.quantize(x, "mxfp4", scale_rounding=rule, rounding=rounding)
    codes, byte, deq = mx_oracle(x, 32, rule, rounding)
    assert np.array_equal(q.scales, byte)
    valid = np.repeat(byte != 255, 32, axis=1)
    assert_codes(q.codes, codes, valid)
    assert_values(ref.dequantize(q), deq)


@pytest.mark.parametrize("four_over_six", [False, True])
def test_nvfp4_vs_oracle(four_over_six):
    rng = rng_for("nv" + str(four_over_six))
    n_tensors = 16
    per = N_VALUES // n_tensors
    for t in range(n_tensors):
        x = make_blocks(rng, per // 16, 16, specials=(t % 4 == 3))
        x = x.reshape(-1, 512)
        if t % 4 == 0:
            # g_enc = 1 with power-of-two block scales: midpoints are ties.
            x = (rng.choice(np.concatenate([GRID, MIDS]), x.shape)
                 * np.exp2(rng.integers(-6, 6, (x.shape[0], 1)))
                 * rng.choice([-1, 1], x.shape)).astype(F32)
            x[:, ::16] = 6 * np.exp2(rng.integers(-6, 6, (x.shape[0], 32)))
            x[0, 0] = 256 * 6 if four_over_six else 448 * 6
            # Block max 6 * (E4M3 midpoint): s = M * f32(6 * f32(1/6)) = M
            # exactly, an E4M3 tie.
            rows = np.arange(0, x.shape[0], 2)
            x[rows, 16] = (6 * rng.choice(E4M3_MIDS[E4M3_MIDS < 256],
                                          rows.size)).astype(F32)
        elif t % 4 == 1:
            # Narrow dynamic range: scales land inside E4M3's normal range.
            x = (rng.standard_normal(x.shape) *
                 np.exp2(rng.integers(-3, 3, (x.shape[0], 1)))).astype(F32)
        elif t % 4 == 2:
            # Arbitrary g_enc for which f32(g_enc / 6) != g_enc * f32(1/6),
            # block maxima within a few ulps of amax * k = E4M3 midpoint.
            top = F32(256 * 6) if four_over_six else F32(448 * 6)
            while True:
                tamax = F32(rng.uniform(4, 40))
                g = F32(top / tamax)
                k = F32(g / F32(6))
                if k != F32(g * F32(1 / 6)):
                    break
            x = (rng.standard_normal(x.shape)).astype(F32)
            mids = rng.choice(E4M3_MIDS[E4M3_MIDS < 250], x.size // 16)
            bm = np.minimum((mids.astype(F32) / k).astype(F32), tamax)
            bm = (bm.view(np.int32) + rng.integers(-2, 3, bm.size).astype(
                np.int32)).view(F32)
            xb = x.reshape(-1, 16)
            xb[:] = np.clip(xb, -bm[:, None] * F32(0.99),
                            bm[:, None] * F32(0.99))
            xb[:, 5] = np.minimum(bm, tamax)
            xb[0, 0] = tamax
        if t % 8 == 7:
            # Tiny tensor: 2688 / tensor_amax overflows, g_enc = FLT_MAX.
            x = (rng.standard_normal(x.shape) * 2.0**-130).astype(F32)
            x[:, 1::16] = 0.0  # 0 * enc: enc must be clamped, not Inf
            x[3, 7] = np.nan
        q = ref.quantize(x, "nvfp4", four_over_six=four_over_six)
        codes, byte, g_dec, deq = nvfp4_oracle(x, four_over_six)
        assert q.tensor_scale.view(np.uint32) == F32(g_dec).view(np.uint32)
        assert np.array_equal(q.scales, byte), t
        valid = np.repeat(byte != 0x7F, 16, axis=1)
        assert_codes(q.codes, codes, valid)
        assert_values(ref.dequantize(q), deq)


def test_hif4_vs_oracle():
    rng = rng_for("hif4")
    x = make_blocks(rng, N_VALUES // 64, 64).reshape(-1, 512)
    n = x.shape[0] // 4
    x[:n] = hif4_tie_groups(rng, n * 8).reshape(n, 512)
    # Groups whose m64 * bf16(1/7) is an exact bf16 tie (sf rounding).
    x[n:n + 8] = hif4_bf16_tie_groups(rng, 64).reshape(8, 512)
    q = ref.quantize(x, "hif4")
    codes, meta, deq = hif4_oracle(x)
    assert np.array_equal(q.scales, meta)
    valid = np.repeat((meta & 0xFF) != 0xFF, 64, axis=1)
    assert_codes(q.codes, codes, valid)
    assert_values(ref.dequantize(q), deq)


def hif4_tie_groups(rng, n_groups):
    """Groups with m64 = 7 * 2^j (so sf = 2^j, rec = 2^-j) and a known level
    structure, holding exact half-up ties t = k + 0.5 and their lower
    neighbours (where f32 t + 0.5 would round up)."""
    g = np.empty((n_groups, 8, 2, 4))
    kind = rng.integers(0, 3, (n_groups, 8))
    k = rng.integers(0, 8, g.shape)
    tie = (k + 0.5) / 4  # t = 4|x| / ls = k + 0.5
    a = tie[:, :, :, :]
    # kind 0: l2 = l3 = 1 -> ls = 1, values < 2.
    # kind 1: l2 = 1; half 0 has l3 = 2 (ls = 2, max 3.75), half 1 ls = 1.
    # kind 2: l2 = 2; half 0 l3 = 2 (ls = 4, max 7), half 1 ls = 2.
    ls = np.ones(g.shape)
    ls[kind == 1, 0] = 2
    ls[kind == 2, 0] = 4
    ls[kind == 2, 1] = 2
    g = a * ls
    g[kind == 2, 0, 0] = 7.0
    g[kind == 1, 0, 0] = 3.75
    g[kind == 2, 0, 1:] = np.minimum(g[kind == 2, 0, 1:], 6.5)
    g[:, 0, 0, 0] = 7.0  # m64 = 7 in every group
    g = g * rng.choice([-1, 1], g.shape)
    g = g.reshape(n_groups, 64).astype(F32)
    down = rng.random(g.shape) < 0.3
    g = np.where(down, np.nextafter(g, F32(0)), g)
    g[:, 0] = 7.0
    j = rng.integers(-40, 10, (n_groups, 1))
    return (g * np.exp2(j)).astype(F32)


def hif4_bf16_tie_groups(rng, n_groups):
    """Groups whose max m satisfies f32(m * bf16(1/7)) = a bf16 midpoint."""
    c = F32(0.142578125)
    out = []
    while len(out) < n_groups:
        p = (rng.integers(0x3C000000, 0x44000000) & ~0xFFFF) | 0x8000
        p = np.array([p], np.uint32).view(F32)[0]
        m = F32(p / c)
        for d in range(-8, 9):
            cand = np.array([m], F32).view(np.int32) + d
            cand = cand.view(F32)[0]
            if F32(cand * c) == p:
                grp = (rng.standard_normal(64) * cand / 4).astype(F32)
                grp = np.clip(grp, -cand, cand)
                grp[rng.integers(0, 64)] = cand
                out.append(grp)
                break
    return np.array(out, dtype=F32)


def macro_special_rows(rng, rows, n):
    """Rows whose macro-blocks have subnormal amax/6, or amax/6 equal to a
    bf16 midpoint pattern (exact: 6 * P has <= 20 significant bits)."""
    x = rng.standard_normal((rows, n)).astype(np.float64)
    x *= np.exp2(rng.integers(-150, -128, (rows, 1)))
    x = x.astype(F32)
    half = rows // 2
    p = ((rng.integers(0x30000000, 0x48000000, (half, n // 256))
          & ~0xFFFF) | 0x8000).astype(np.uint32).view(F32)
    amax = (6 * p.astype(np.float64)).astype(F32)
    y = rng.uniform(-1, 1, (half, n // 256, 256)) * amax[..., None] * 0.9
    y[:, :, 7] = amax
    x[:half] = y.reshape(half, n).astype(F32)
    return x


@pytest.mark.parametrize("search", [0, 8])
def test_macro_vs_oracle(search):
    rng = rng_for("macro" + str(search))
    x = make_blocks(rng, N_VALUES // 32, 32)
    # Mix blocks of different binades inside macro-blocks.
    x = x.reshape(-1, 1024)
    x[:64] = macro_special_rows(rng, 64, 1024)
    if search:
        x = x[: x.shape[0] // 2]  # the search oracle is 8x the work
        x = np.concatenate([x, x[:, ::-1]])
    q = ref.quantize(x, "macro", macro_block=256, search=search)
    codes, byte, deq, m = macro_oracle(x, 256, "floor", search)
    assert np.array_equal(q.aux, m.view(np.uint32) >> 16)
    assert np.array_equal(q.scales, byte)
    valid = np.repeat(byte != 255, 32, axis=1)
    assert_codes(q.codes, codes, valid)
    assert_values(ref.dequantize(q), deq)


def test_macro_whole_row_and_rceil():
    rng = rng_for("macro-row")
    x = make_blocks(rng, N_VALUES // 32, 32).reshape(-1, 512)
    q = ref.quantize(x, "macro", macro_block=0, scale_rounding="rceil")
    codes, byte, deq, m = macro_oracle(x, 512, "rceil", 0)
    assert np.array_equal(q.aux, m.view(np.uint32) >> 16)
    assert np.array_equal(q.scales, byte)
    assert_codes(q.codes, codes, np.repeat(byte != 255, 32, axis=1))
    assert_values(ref.dequantize(q), deq)


# ----------------------------------------------------------------------------
# Stochastic rounding and the C API contract
# ----------------------------------------------------------------------------

def documented_hash(seed, index):
    def mix(x):
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        return x ^ (x >> np.uint32(16))
    idx = np.asarray(index, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = mix(np.full(idx.shape, np.uint32(seed) ^ np.uint32(0x9E3779B9)))
        h = mix(h ^ (idx & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        return mix(h ^ (idx >> np.uint64(32)).astype(np.uint32)
                   ^ np.uint32(0x85EBCA6B))


def test_counter_random_is_the_documented_hash():
    first = (1 << 32) - 1000
    assert np.array_equal(ref.counter_random(77, first, 100000),
                          documented_hash(77, np.arange(first, first + 100000)))


def test_stochastic_rounding_vs_oracle():
    rng = rng_for("sr")
    x = (rng.standard_normal((512, 2048)) * 0.7).astype(F32)
    seed = 1234
    q = ref.quantize(x, "mxfp4", rounding="stochastic", seed=seed)
    xb = x.reshape(512, 64, 32).astype(np.float64)
    e = mx_exponent(np.abs(xb).max(axis=2), "floor")
    v = np.abs(xb * np.exp2(-e)[..., None]).reshape(512, 2048)
    lo_i = np.searchsorted(GRID, v, side="right") - 1
    hi_i = np.minimum(lo_i + 1, 7)
    step = np.where(lo_i == 7, 1, GRID[hi_i] - GRID[lo_i])
    p = np.where(lo_i == 7, 0, (v - GRID[lo_i]) / step)
    r = (documented_hash(seed, np.arange(x.size)).reshape(x.shape)
         >> np.uint32(8)) * 2.0**-24
    mag = np.where(r < p, hi_i, lo_i)
    want = mag.astype(np.uint8) | (np.signbit(x).astype(np.uint8) << 3)
    assert_codes(q.codes, want, np.ones(x.shape, bool))
    # Unbiased: mean dequantized error is ~0 relative to RNE's rounding.
    err = ref.dequantize(q).astype(np.float64) - x
    assert abs(err.mean()) < 5 * err.std() / np.sqrt(err.size)


def test_capi_rejects_bad_arguments():
    x = np.zeros((2, 48), F32)
    with pytest.raises(ValueError):
        ref.quantize(x, "mxfp4")  # 48 not a multiple of 32
    with pytest.raises(ValueError):
        ref.quantize(x, "hif4")
    with pytest.raises(ValueError):
        ref.quantize(np.zeros((2, 64), F32), "macro", macro_block=96)
    with pytest.raises(ValueError):
        ref.quantize(np.zeros((8, 32), F32), "nvfp4", tile2d=True)
    with pytest.raises(ValueError):
        ref.quantize(np.zeros((2, 64), F32), "mxfp4", block_size=3)


def test_nvfp4_tile2d_rowwise_equals_columnwise():
    rng = rng_for("tile2d")
    w = rng.standard_normal((64, 96)).astype(F32)
    for fos in (False, True):
        q = ref.quantize(w, "nvfp4", tile2d=True, four_over_six=fos)
        qt = ref.quantize(w.T.copy(), "nvfp4", tile2d=True, four_over_six=fos)
        assert np.array_equal(ref.dequantize(q), ref.dequantize(qt).T)
        assert np.array_equal(ref.unpack_codes(q.codes),
                              ref.unpack_codes(qt.codes).T)
