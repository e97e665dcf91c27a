"""fp4-error-report and the decomposition behind it (numerics.md 9,
docs/ErrorReport.md), checked against an independent NumPy computation.

The oracle here takes only the quantized values and the codes/scales from
the reference quantizer (fp4.reference) and recomputes every figure from
the spec formulas: the ideal scale s* per block, Q(x/s*) as the nearest grid
point with the format's tie rule (argmin over the grid, not the threshold
comparisons of the C++ code), the three vector terms, their energies and
cross terms, the energy attribution, per-block figures, and the fractions
clipped (|x/X| beyond the grid with X decoded from the stored scales with
ml_dtypes) and zeroed. Then the pass itself (fp4-opt) is run on constants
and calibration data, and must report the same numbers; and the spec's
section-9 table is reproduced through the pass on 4,194,304 samples.

Binaries come from $FP4_BUILD_DIR (default /work/main/build).
"""

import json
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import reference as ref  # noqa: E402

FP4_OPT = os.path.join(BUILD_DIR, "bin", "fp4-opt")

E2M1_GRID = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
HIF4_GRID = np.arange(8, dtype=np.float64) / 4

# (scheme, options, MLIR scheme attribute)
SCHEMES = [
    ("mxfp4", {}, "#fp4.mxfp4"),
    ("mxfp4", {"scale_rounding": "ceil"}, "#fp4.mxfp4<scale_rounding = ceil>"),
    ("mxfp4", {"scale_rounding": "even"}, "#fp4.mxfp4<scale_rounding = even>"),
    ("mxfp4", {"scale_rounding": "rceil"},
     "#fp4.mxfp4<scale_rounding = rceil>"),
    ("nvfp4", {}, "#fp4.nvfp4"),
    ("nvfp4", {"four_over_six": True}, "#fp4.nvfp4<four_over_six = true>"),
    ("hif4", {}, "#fp4.hif4"),
    ("macro", {}, "#fp4.mxfp4_macro"),
    ("macro", {"search": 8, "macro_block": 64},
     "#fp4.mxfp4_macro<macro_block = 64, search = 8>"),
]


# ---------------------------------------------------------------------------
# The independent oracle
# ---------------------------------------------------------------------------

def ideal_scale(amax, gmax):
    """amax / gmax rounded to 24 significant bits (docs/ErrorReport.md)."""
    s = amax / gmax
    m, e = np.frexp(s)
    return np.ldexp(np.rint(np.ldexp(m, 24)), e - 24)


def ideal_quantize(absx, s, grid, ties_up):
    """s * Q(absx / s): the nearest of the points s * g (exact products),
    ties to the even code (E2M1) or up (HiF4). absx, s: float64 arrays of
    one shape."""
    cand = s[..., None] * grid  # exact: <= 27 significant bits
    dist = np.abs(absx[..., None] - cand)
    best = dist.min(axis=-1, keepdims=True)
    tied = dist == best
    if ties_up:
        idx = tied.shape[-1] - 1 - np.argmax(tied[..., ::-1], axis=-1)
    else:
        # Among tied codes take the even one (two neighbours are never both
        # even), else the only one.
        even = tied & (np.arange(grid.size) % 2 == 0)
        idx = np.where(even.any(-1), np.argmax(even, -1), np.argmax(tied, -1))
    return np.where(s > 0, s * grid[idx], 0.0)


def actual_scales(scheme, options, q, shape):
    """X per element: the stored (rounded) scale, decoded with ml_dtypes /
    bit arithmetic from the components, and the grid maximum g; an element
    is clipped when |x| > g X (g X exact in f64 for every format here)."""
    rows, cols = shape
    if scheme == "mxfp4":
        b = options.get("block_size", 32)
        x = np.ldexp(1.0, q.scales.astype(np.int64) - 127)
        return np.repeat(x.reshape(rows, -1), b, axis=1), 6.0
    if scheme == "nvfp4":
        # The largest level as NVFP4 dequantizes it: f32(f32(6 s) g_dec);
        # that f32 rounding can make the block maximum exact (not clipped).
        s = q.scales.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
        top = (np.float32(6) * s) * np.float32(q.tensor_scale)
        x = top.astype(np.float64) / 6.0
        return np.repeat(x.reshape(rows, -1), 16, axis=1), 6.0
    if scheme == "macro":
        bm = options.get("macro_block", 256) or cols
        x = np.ldexp(1.0, q.scales.astype(np.int64) - 127).reshape(rows, -1)
        m = q.aux.view(ml_dtypes.bfloat16).astype(np.float64).reshape(rows, -1)
        return (np.repeat(x, 32, axis=1) *
                np.repeat(m, bm, axis=1)), 6.0
    assert scheme == "hif4"
    meta = q.scales.astype(np.int64).reshape(rows, -1)
    e6m2 = meta & 0xFF
    sf = np.ldexp(1.0 + (e6m2 & 3) / 4.0, (e6m2 >> 2) - 48)
    sf = np.repeat(sf, 64, axis=1)
    j = np.arange(cols) % 64
    l2 = np.where((np.repeat(meta, 64, axis=1) >> (8 + j // 8)) & 1, 2.0, 1.0)
    l3 = np.where((np.repeat(meta, 64, axis=1) >> (16 + j // 4)) & 1, 2.0, 1.0)
    return sf * l2 * l3, 1.75


def oracle(x, scheme, options):
    """Every figure of the decomposition of x [rows, cols], in NumPy."""
    q = ref.quantize(x, scheme, **options)
    xq = ref.dequantize(q).astype(np.float64)
    rows, cols = x.shape
    hif4 = scheme == "hif4"
    grid = HIF4_GRID if hif4 else E2M1_GRID
    block = {"nvfp4": 16, "hif4": 4}.get(scheme, options.get("block_size", 32))
    xd = x.astype(np.float64)
    xb = xd.reshape(rows, cols // block, block)
    finite = np.isfinite(xb).all(-1)
    amax = np.where(np.isfinite(xb), np.abs(xb), 0).max(-1)
    s = ideal_scale(amax, grid[-1])
    sb_ = np.broadcast_to(s[..., None], xb.shape)
    with np.errstate(invalid="ignore"):
        a = np.sign(xb) * ideal_quantize(np.abs(xb), sb_, grid, ties_up=hif4)
    a = a.reshape(rows, cols)
    dead = (a == 0)
    err = xd - xq
    sbias = a - xq
    dz = np.where(dead, xd - a, 0.0)
    gn = np.where(dead, 0.0, xd - a)
    keep = np.repeat(finite, block, axis=1)

    def blocksum(v):
        return np.where(finite, v.reshape(rows, cols // block, block).sum(-1),
                        np.nan)

    with np.errstate(invalid="ignore"):
        per_block = {
            "norm2": blocksum(xd * xd), "total": blocksum(err * err),
            "dead": blocksum(np.where(dead, xd * xd, 0)),
            "grid": blocksum(gn * gn)}
    per_block["scale"] = (per_block["total"] - per_block["dead"] -
                          per_block["grid"])

    def tsum(v):
        return v[keep].sum()

    np.seterr(invalid="ignore")  # NaN blocks are masked out by `keep`
    n2 = tsum(xd * xd)
    X, gmax = actual_scales(scheme, options, q, x.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        # A zero scale (an NVFP4 block scale that underflows) zeroes its
        # block: those elements count as zeroed, not clipped.
        clipped = (np.abs(xd) > gmax * X) & (X > 0) & keep
    zeroed = (xd != 0) & (xq == 0) & keep
    fig = {
        "norm2": n2, "total": tsum(err * err),
        "dead": tsum(np.where(dead, xd * xd, 0)), "grid": tsum(gn * gn),
        "scaleBias": tsum(sbias * sbias), "deadzone": tsum(dz * dz),
        "gridNoise": tsum(gn * gn),
        "crossScaleBiasDeadzone": tsum(2 * sbias * dz),
        "crossScaleBiasGridNoise": tsum(2 * sbias * gn),
        "crossDeadzoneGridNoise": tsum(2 * dz * gn),
        "clipped": int(clipped.sum()), "zeroed": int(zeroed.sum()),
        "elements": int(keep.sum()), "blocks": int(finite.size),
        "nonFiniteBlocks": int((~finite).sum()),
    }
    fig["scale"] = fig["total"] - fig["dead"] - fig["grid"]
    vectors = {"scale_bias": sbias, "deadzone": dz, "grid_noise": gn,
               "error": err, "keep": keep}
    return fig, per_block, vectors


def sample(kind, shape, seed):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "laplace":
        return rng.laplace(size=shape).astype(np.float32)
    # Hard cases: exact grid points and ties relative to block maxima, zeros,
    # an all-zero block, tiny and huge magnitudes, channel outliers.
    x = rng.standard_normal(shape).astype(np.float32)
    x[0, :64] = 0.0
    x[1, :32] = np.array([6, 5, 3.5, 2.5, 1.75, 1.25, 0.75, 0.25] * 4,
                         np.float32) * np.float32(0.375)
    x[2, :] *= np.float32(2.0 ** -100)
    x[3, :] *= np.float32(2.0 ** 100)
    x[4:, 7] *= 50
    x[5, 3] = -0.0
    return x


def scale_keys(fig):
    return [k for k in fig if k not in ("clipped", "zeroed", "elements",
                                         "blocks", "nonFiniteBlocks")]


# ---------------------------------------------------------------------------
# The C++ decomposition (through the C API) against the oracle
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["normal", "laplace", "hard"])
@pytest.mark.parametrize("scheme,options,attr", SCHEMES,
                         ids=[a for _, _, a in SCHEMES])
def test_decomposition_matches_numpy(kind, scheme, options, attr):
    x = sample(kind, (64, 256), seed=11)
    fig, per_block, vec = oracle(x, scheme, options)
    rep = ref.error_report(x, scheme, per_block=True, vectors=True, **options)
    # Sums in another order: equal to f64 rounding, relative to ||x||^2 for
    # the differences (E_scale, cross terms) that cancel.
    for key in scale_keys(fig):
        assert rep[key] == pytest.approx(
            fig[key], rel=1e-12, abs=1e-12 * fig["norm2"]), key
    for key in ("clipped", "zeroed", "elements", "blocks", "nonFiniteBlocks"):
        assert rep[key] == fig[key], key
    # The vector terms are exact: equal to the oracle's bit for bit, and
    # their sum is the error vector with no rounding at all.
    for key in ("scale_bias", "deadzone", "grid_noise"):
        np.testing.assert_array_equal(rep[key + "_vector"], vec[key])
    total = (rep["scale_bias_vector"] + rep["deadzone_vector"] +
             rep["grid_noise_vector"])
    np.testing.assert_array_equal(total, vec["error"])
    assert rep["maxAbsResidual"] == 0.0
    # Energies attribute exactly; the vector energies plus cross terms give
    # the total energy (up to f64 summation).
    assert (rep["scale"] + rep["dead"] + rep["grid"] ==
            pytest.approx(rep["total"], rel=1e-12))
    assert (rep["scaleBias"] + rep["deadzone"] + rep["gridNoise"] +
            rep["crossScaleBiasDeadzone"] + rep["crossScaleBiasGridNoise"] +
            rep["crossDeadzoneGridNoise"] ==
            pytest.approx(rep["total"], rel=1e-9))
    assert rep["crossDeadzoneGridNoise"] == 0.0
    pb = rep["per_block"]
    norm = per_block["norm2"].ravel()
    for i, key in enumerate(["norm2", "total", "scale", "dead", "grid"]):
        want = per_block[key].ravel()
        np.testing.assert_array_equal(np.isnan(pb[:, i]), np.isnan(want))
        ok = np.isnan(want) | (np.abs(pb[:, i] - want) <=
                               1e-12 * (np.abs(want) + norm))
        assert ok.all(), (key, np.argwhere(~ok)[:5])


def test_non_finite_blocks_are_skipped():
    x = sample("normal", (4, 64), seed=3)
    x[1, 40] = np.nan
    x[2, 3] = -np.inf
    fig, per_block, _ = oracle(x, "mxfp4", {})
    rep = ref.error_report(x, "mxfp4", per_block=True)
    assert rep["nonFiniteBlocks"] == fig["nonFiniteBlocks"] == 2
    assert rep["elements"] == fig["elements"] == 6 * 32
    assert rep["total"] == pytest.approx(fig["total"], rel=1e-12)
    assert np.isnan(rep["per_block"][3]).all()  # row 1, block 1
    assert np.isnan(rep["per_block"][4]).all()  # row 2, block 0


def test_spec_cross_term_statement():
    """numerics.md 9: on N(0,1) MXFP4 floor the scale-bias energy (0.023)
    exceeds the total (0.013), with a cross term of about -0.020."""
    x = sample("normal", (8192, 256), seed=0)
    rel = ref.error_report(x, "mxfp4")["relative"]
    assert rel["scaleBias"] == pytest.approx(0.023, abs=0.001)
    assert rel["total"] == pytest.approx(0.013, abs=0.001)
    assert rel["crossScaleBiasGridNoise"] == pytest.approx(-0.020, abs=0.001)


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------

def run_pass(mlir_text, tmp_path, options, *flags):
    src = tmp_path / "in.mlir"
    src.write_text(mlir_text)
    out = tmp_path / "report.json"
    assert os.path.exists(FP4_OPT), f"{FP4_OPT} not built"
    proc = subprocess.run(
        [FP4_OPT, str(src), "-o", os.devnull, *flags,
         f"-fp4-error-report=output={out} {options}"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())["ops"], proc.stderr


def blob(array):
    """A dense_resource blob literal: alignment 4, then the raw bytes."""
    return "0x04000000" + np.ascontiguousarray(array).tobytes().hex().upper()


def check_report(op, fig, per_block=None):
    rel = op["relative"]
    n2 = fig["norm2"]
    assert op["norm2"] == pytest.approx(n2, rel=1e-12)
    for key in ("total", "scale", "dead", "grid"):
        assert rel[key] == pytest.approx(fig[key] / n2, rel=1e-10,
                                         abs=1e-12), key
    vt = op["vector_terms"]
    for name, key in [("scale_bias", "scaleBias"), ("deadzone", "deadzone"),
                      ("grid_noise", "gridNoise"),
                      ("cross_scale_bias_deadzone", "crossScaleBiasDeadzone"),
                      ("cross_scale_bias_grid_noise",
                       "crossScaleBiasGridNoise"),
                      ("cross_deadzone_grid_noise", "crossDeadzoneGridNoise")]:
        assert vt[name] == pytest.approx(fig[key] / n2, rel=1e-10,
                                         abs=1e-12), name
    assert vt["max_abs_residual"] == 0.0
    assert op["fractions"]["clipped"] == fig["clipped"] / fig["elements"]
    assert op["fractions"]["zeroed"] == fig["zeroed"] / fig["elements"]
    assert op["elements"] == fig["elements"]
    assert op["non_finite_blocks"] == fig["nonFiniteBlocks"]
    if per_block is not None:
        pb = op["per_block"]
        norm = per_block["norm2"].ravel()
        np.testing.assert_allclose(pb["norm2"], norm, rtol=1e-12)
        for key in ("total", "scale", "dead", "grid"):
            expect = np.where(norm > 0, per_block[key].ravel() /
                              np.where(norm > 0, norm, 1), 0.0)
            np.testing.assert_allclose(pb[key], expect, rtol=1e-10,
                                       atol=1e-12)


@pytest.mark.parametrize("scheme,options,attr", SCHEMES,
                         ids=[a for _, _, a in SCHEMES])
def test_pass_on_constants(tmp_path, scheme, options, attr):
    """A bf16 constant stored transposed ([K, N]) behind linalg.transpose
    and arith.extf: the pass analyses exactly what fp4-fold-constants
    quantizes (the transposed, bf16-rounded values)."""
    x = sample("hard", (64, 256), seed=5)  # [N, K] as quantized
    w_bf16 = x.T.astype(ml_dtypes.bfloat16)  # stored [K, N]
    xq_in = w_bf16.T.astype(np.float32)
    text = f"""
func.func @w() -> !fp4.tensor<64x256xf4E2M1FN, {attr}, axis = 1> {{
  %c = arith.constant dense_resource<w0> : tensor<256x64xbf16>
  %e = tensor.empty() : tensor<64x256xbf16>
  %t = linalg.transpose ins(%c : tensor<256x64xbf16>)
      outs(%e : tensor<64x256xbf16>) permutation = [1, 0]
  %f = arith.extf %t : tensor<64x256xbf16> to tensor<64x256xf32> loc("wq")
  %q = fp4.quantize %f : tensor<64x256xf32>
      -> !fp4.tensor<64x256xf4E2M1FN, {attr}, axis = 1>
  return %q : !fp4.tensor<64x256xf4E2M1FN, {attr}, axis = 1>
}}
{{-#
  dialect_resources: {{ builtin: {{ w0: "{blob(w_bf16.view(np.uint16))}" }} }}
#-}}
""".replace("f4E2M1FN", "!fp4.s1p2" if scheme == "hif4" else "f4E2M1FN")
    ops, stderr = run_pass(text, tmp_path, "per-block=true")
    assert len(ops) == 1
    op = ops[0]
    assert op["source"] == "constant" and op["key"] == "wq"
    assert op["shape"] == [64, 256] and op["axis"] == 1
    assert op["format"] == ref_format(scheme)
    fig, per_block, _ = oracle(xq_in, scheme, options)
    check_report(op, fig, per_block)
    assert "remark: E_total" in stderr


def ref_format(scheme):
    return {"macro": "mxfp4_macro"}.get(scheme, scheme)


def test_pass_on_calibration_data(tmp_path):
    """Calibration samples of two function arguments and a named value,
    with leading sample dims and more rows than one chunk (NVFP4: the
    per-tensor scale is computed over all samples and shared by the
    chunks)."""
    a = sample("laplace", (4, 300, 256), seed=7)  # 1200 rows > 1 chunk
    b = sample("normal", (1024, 128), seed=8)
    c = sample("hard", (64, 64), seed=9)
    np.savez(tmp_path / "cal.npz", **{"@f/arg0": a, "@f/arg1": b, "act": c})
    text = """
func.func @f(%a: tensor<8x256xbf16>, %b: tensor<2x128xf32>,
             %c: tensor<3x64xf32>) {
  %ae = arith.extf %a : tensor<8x256xbf16> to tensor<8x256xf32>
  %qa = fp4.quantize %ae : tensor<8x256xf32>
      -> !fp4.tensor<8x256xf4E2M1FN, #fp4.nvfp4, axis = 1>
  %qb = fp4.quantize %b : tensor<2x128xf32>
      -> !fp4.tensor<2x128x!fp4.s1p2, #fp4.hif4, axis = 1>
  %n = arith.negf %c : tensor<3x64xf32> loc("act")
  %qc = fp4.quantize %n : tensor<3x64xf32>
      -> !fp4.tensor<3x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  %qd = fp4.quantize %c {fp4.calibration = "act"} : tensor<3x64xf32>
      -> !fp4.tensor<3x64xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 64>, axis = 1>
  %qe = fp4.quantize %c {fp4.calibration = "nope"} : tensor<3x64xf32>
      -> !fp4.tensor<3x64xf4E2M1FN, #fp4.mxfp4, axis = 1>
  return
}
"""
    ops, stderr = run_pass(text, tmp_path,
                           f"calibration={tmp_path / 'cal.npz'}")
    assert [op["key"] for op in ops] == ["@f/arg0", "@f/arg1", "act", "act"]
    assert all(op["source"] == "calibration" for op in ops)
    assert ops[0]["shape"] == [1200, 256]
    cases = [(a.reshape(-1, 256), "nvfp4", {}), (b, "hif4", {}),
             (c, "mxfp4", {"scale_rounding": "even"}),
             (c, "macro", {"macro_block": 64})]
    for op, (data, scheme, options) in zip(ops, cases):
        fig, _, _ = oracle(data, scheme, options)
        check_report(op, fig)
    assert "not analyzed: input is not a constant" in stderr
    assert "has no data for key 'nope'" in stderr
    # Chunks run in parallel; the sums are reduced in block order, so the
    # report is the same without threads, to the last bit.
    serial, _ = run_pass(text, tmp_path, f"calibration={tmp_path / 'cal.npz'}",
                         "--mlir-disable-threading")
    assert serial == ops


# numerics.md 9 reference values (relative to ||x||^2) and section 12
# fractions (clipped, zeroed) of MXFP4 without rotation.
SECTION9 = {
    ("normal", "floor"): (0.01323, 0.00301, 0.00027, 0.00995, 0.0233, 0.0877),
    ("normal", "even"): (0.01251, 0.00229, 0.00027, 0.00995, 0.0062, 0.0970),
    ("normal", "rceil"): (0.01332, 0.00310, 0.00027, 0.00995, 0.0, 0.1064),
    ("laplace", "floor"): (0.01605, 0.00552, 0.00089, 0.00964, 0.0209,
                           0.1640),
    ("laplace", "even"): (0.01534, 0.00482, 0.00089, 0.00964, 0.0092, 0.1859),
    ("laplace", "rceil"): (0.01744, 0.00691, 0.00089, 0.00964, 0.0, 0.2129),
}


def _section9_kwargs(rule):
    return {} if rule == "floor" else {"scale_rounding": rule}


def test_section9_table():
    """numerics.md 9 (blocks of 32), mean of four independent draws of
    4,194,304 samples (no seed is chosen to pass).

    E_total, E_dead and E_grid are precise (sampling noise <= 0.1% per draw)
    and must be within +-1% relative (E_dead: or half a unit of the table's
    last digit, it is printed with two significant digits). E_scale is the
    difference E_total - E_dead - E_grid: its sampling noise is about 0.8%
    per 4M draw (measured over 8 draws: N(0,1) floor 0.002989 +- 0.000023),
    so the spec's own single-draw value carries that noise too; it is held
    to the absolute uncertainty it inherits, 1% of E_total. The fractions
    (rarer events) within +-3%. test_section9_through_the_pass checks that
    the pass computes exactly these figures."""
    n = 4194304
    for (kind, rule), expect in SECTION9.items():
        reps = [ref.error_report(sample(kind, (n // 1024, 1024), seed=100 + d),
                                 "mxfp4", **_section9_kwargs(rule))
                for d in range(4)]
        mean = lambda f: float(np.mean([f(r) for r in reps]))
        got = [mean(lambda r, k=k: r["relative"][k])
               for k in ("total", "scale", "dead", "grid")]
        for name, g, e in zip(("total", "dead", "grid"),
                              (got[0], got[2], got[3]),
                              (expect[0], expect[2], expect[3])):
            assert g == pytest.approx(e, rel=0.01, abs=5e-6), (kind, rule, name, g)
        assert got[1] == pytest.approx(expect[1], abs=0.01 * expect[0]), (
            kind, rule, "scale", got[1])
        assert mean(lambda r: r["fractions"]["clipped"]) == pytest.approx(
            expect[4], rel=0.03, abs=1e-12)
        assert mean(lambda r: r["fractions"]["zeroed"]) == pytest.approx(
            expect[5], rel=0.03)


def test_section9_through_the_pass(tmp_path):
    """The pass on calibration data reproduces the C++ reference figures of
    test_section9_table on one 4,194,304-sample draw, exactly."""
    n = 4194304
    data = {"normal": sample("normal", (n // 1024, 1024), seed=100),
            "laplace": sample("laplace", (n // 1024, 1024), seed=100)}
    np.savez(tmp_path / "cal.npz", **data)
    quantizes = []
    for i, (kind, rule) in enumerate(SECTION9):
        attr = "#fp4.mxfp4" + ("" if rule == "floor" else
                               f"<scale_rounding = {rule}>")
        quantizes.append(
            f'  %q{i} = fp4.quantize %x {{fp4.calibration = "{kind}"}} : '
            f"tensor<1x1024xf32> -> "
            f"!fp4.tensor<1x1024xf4E2M1FN, {attr}, axis = 1>")
    text = ("func.func @f(%x: tensor<1x1024xf32>) {\n" +
            "\n".join(quantizes) + "\n  return\n}\n")
    ops, _ = run_pass(text, tmp_path, f"calibration={tmp_path / 'cal.npz'}")
    for op, (kind, rule) in zip(ops, SECTION9):
        rep = ref.error_report(data[kind], "mxfp4", **_section9_kwargs(rule))
        for k in ("total", "scale", "dead", "grid"):
            assert op["relative"][k] == pytest.approx(rep["relative"][k],
                                                      rel=1e-12), (kind, rule, k)
        for k in ("clipped", "zeroed"):
            assert op["fractions"][k] == pytest.approx(rep["fractions"][k],
                                                       rel=1e-12, abs=0)
        assert op["elements"] == n
