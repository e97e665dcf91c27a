"""NumPy front end of the C++ reference quantizers (numerics.md 1-5).

    q = quantize(x, "mxfp4", scale_rounding="even")
    y = dequantize(q)

`x` is any float array; the block axis is the last axis and rows are all
leading axes flattened. Component layouts are those of
include/fp4/Numerics/Reference.h: codes uint8 [rows, cols/2] (two codes per
byte, lower index in the low nibble); scales uint8 (MXFP4, NVFP4, macro) or
uint32 (HiF4 metadata); aux uint16 bf16 bits (macro factors); tensor_scale
the NVFP4 g_dec.

The functions call libFP4CAPI.so, or libFP4Reference.so (the same C entry
points without MLIR, for machines that have none; $FP4_REFERENCE_LIB picks
one explicitly): see fp4._lib.load_numerics.
"""

import ctypes
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import _lib

# Scheme names as the CLI tools spell them (fp4-quant --scheme,
# fp4-quantize{scheme=...}); "macro" is the older alias of "mxfp4_macro".
SCHEMES = {"mxfp4": 0, "nvfp4": 1, "hif4": 2, "mxfp4_macro": 3}
SCHEME_ALIASES = {"macro": "mxfp4_macro"}
SCALE_ROUNDING = {"floor": 0, "ceil": 1, "even": 2, "rceil": 3}
ELEMENT_ROUNDING = {"nearest_even": 0, "rne": 0, "half_away": 1,
                    "stochastic": 2}


def canonical_scheme(scheme):
    """The CLI name of `scheme` ("macro" -> "mxfp4_macro"); a ValueError
    listing the valid names for anything else."""
    if isinstance(scheme, str):
        name = SCHEME_ALIASES.get(scheme, scheme)
        if name in SCHEMES:
            return name
    raise ValueError(f"unknown scheme {scheme!r}; valid schemes: "
                     f"{', '.join(SCHEMES)} (alias: macro = mxfp4_macro)")


def _option(table, what, value):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError(f"unknown {what} {value!r}; valid values: "
                         f"{', '.join(table)}") from None


def axis_multiple(scheme, block_size=32, macro_block=256, **_options):
    """What the length of the quantized axis must be a multiple of."""
    scheme = canonical_scheme(scheme)
    return {"mxfp4": block_size, "nvfp4": 16, "hif4": 64,
            "mxfp4_macro": macro_block or 32}[scheme]


@dataclass
class Quantized:
    scheme: str
    shape: tuple
    codes: np.ndarray
    scales: np.ndarray
    aux: Optional[np.ndarray] = None
    tensor_scale: Optional[np.float32] = None
    options: dict = field(default_factory=dict)


def make_params(scheme, block_size=32, scale_rounding="floor",
                rounding="nearest_even", seed=0, four_over_six=False,
                tile2d=False, macro_block=256, search=0, index_base=0,
                index_strides=None):
    """Build the C parameter struct. index_strides=(row, col) sets the
    stochastic-rounding index of element (r, c) to
    index_base + r*row + c*col (default: the row-major index)."""
    scheme = canonical_scheme(scheme)
    scale_rounding = _option(SCALE_ROUNDING, "scale_rounding", scale_rounding)
    rounding = _option(ELEMENT_ROUNDING, "rounding", rounding)
    lib = _lib.load_numerics()
    p = _lib.SchemeParams()
    lib.fp4SchemeParamsInit(ctypes.byref(p), SCHEMES[scheme])
    p.blockSize = block_size
    p.scaleRounding = scale_rounding
    p.elementRounding = rounding
    p.seed = seed & 0xFFFFFFFF
    p.fourOverSix = int(bool(four_over_six))
    p.tile2d = int(bool(tile2d))
    p.macroBlock = macro_block
    p.search = search
    p.indexBase = index_base
    if index_strides is not None:
        p.indexRowStride, p.indexColStride = index_strides
    return p


def _ptr(a, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def _sizes(params, rows, cols):
    lib = _lib.load_numerics()
    c, s, a = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    if lib.fp4ReferenceComponentSizes(ctypes.byref(params), rows, cols,
                                      ctypes.byref(c), ctypes.byref(s),
                                      ctypes.byref(a)):
        raise ValueError(
            f"invalid shape/options for {rows}x{cols}: block sizes must "
            "divide the last axis")
    return c.value, s.value, a.value


def quantize(x, scheme="mxfp4", **options):
    """Quantize `x` along its last axis. Options: see make_params."""
    scheme = canonical_scheme(scheme)
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if x.ndim == 0:
        raise ValueError("quantize needs at least one axis")
    cols = x.shape[-1]
    rows = x.size // cols if cols else 0
    params = make_params(scheme, **options)
    cbytes, sbytes, abytes = _sizes(params, rows, cols)
    codes = np.zeros(cbytes, dtype=np.uint8)
    sdtype = np.uint32 if scheme == "hif4" else np.uint8
    scales = np.zeros(sbytes // np.dtype(sdtype).itemsize, dtype=sdtype)
    aux = np.zeros(abytes // 2, dtype=np.uint16) if abytes else None
    ts = np.zeros(1, dtype=np.float32)
    lib = _lib.load_numerics()
    rc = lib.fp4ReferenceQuantize(
        ctypes.byref(params), _ptr(x, ctypes.c_float), rows, cols,
        _ptr(codes, ctypes.c_uint8), scales.ctypes.data_as(ctypes.c_void_p),
        aux.ctypes.data_as(ctypes.c_void_p) if aux is not None else None,
        _ptr(ts, ctypes.c_float))
    if rc:
        raise ValueError("fp4ReferenceQuantize rejected the arguments")
    lead = x.shape[:-1]
    return Quantized(
        scheme=scheme, shape=x.shape,
        codes=codes.reshape(lead + (cols // 2,)),
        scales=scales.reshape(lead + (-1,)),
        aux=aux.reshape(lead + (-1,)) if aux is not None else None,
        tensor_scale=ts[0] if scheme == "nvfp4" else None,
        options=dict(options))


def dequantize(q):
    """Dequantize a Quantized back to float32 of q.shape."""
    params = make_params(q.scheme, **q.options)
    cols = q.shape[-1]
    rows = int(np.prod(q.shape[:-1], dtype=np.int64))
    codes = np.ascontiguousarray(q.codes, dtype=np.uint8)
    scales = np.ascontiguousarray(q.scales)
    aux = None if q.aux is None else np.ascontiguousarray(q.aux,
                                                          dtype=np.uint16)
    ts = np.array([q.tensor_scale if q.tensor_scale is not None else 1.0],
                  dtype=np.float32)
    out = np.empty(q.shape, dtype=np.float32)
    lib = _lib.load_numerics()
    rc = lib.fp4ReferenceDequantize(
        ctypes.byref(params), _ptr(codes, ctypes.c_uint8),
        scales.ctypes.data_as(ctypes.c_void_p),
        aux.ctypes.data_as(ctypes.c_void_p) if aux is not None else None,
        _ptr(ts, ctypes.c_float), rows, cols, _ptr(out, ctypes.c_float))
    if rc:
        raise ValueError("fp4ReferenceDequantize rejected the arguments")
    return out


def components(q):
    """The docs/ABI.md component arrays of `q` by name, in order, each as
    (safetensors TensorSpec dtype, numpy array): codes, scales (E8M0 /
    E4M3 bytes), tensor_scale (NVFP4's f32 decode scale, rank 0), metadata
    (HiF4), factors (macro-block bf16 bits)."""
    scheme = canonical_scheme(q.scheme)
    out = {"codes": ("uint8", q.codes)}
    if scheme == "hif4":
        out["metadata"] = ("uint32", q.scales)
        return out
    out["scales"] = ("float8_e4m3fn" if scheme == "nvfp4" else "uint8",
                     q.scales)
    if scheme == "nvfp4":
        out["tensor_scale"] = ("float32",
                               np.array(q.tensor_scale, dtype=np.float32))
    if scheme == "mxfp4_macro":
        out["factors"] = ("bfloat16", q.aux)
    return out


def unpack_codes(codes):
    """uint8 [..., n/2] packed nibbles -> uint8 [..., n] codes."""
    codes = np.asarray(codes, dtype=np.uint8)
    out = np.empty(codes.shape[:-1] + (codes.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = codes & 0xF
    out[..., 1::2] = codes >> 4
    return out


# Array versions of the scalar rules (the C++ ScalarOps instantiation).

def _f32(v):
    return np.ascontiguousarray(np.asarray(v, dtype=np.float32))


def _u8(v):
    return np.ascontiguousarray(np.asarray(v, dtype=np.uint8))


def e2m1_encode(v, rounding="nearest_even", seed=0):
    v = _f32(v)
    out = np.empty(v.shape, dtype=np.uint8)
    _lib.load_numerics().fp4E2M1EncodeArray(_ptr(v, ctypes.c_float), v.size,
                                   ELEMENT_ROUNDING[rounding], seed,
                                   _ptr(out, ctypes.c_uint8))
    return out


def e2m1_decode(codes):
    c = _u8(codes)
    out = np.empty(c.shape, dtype=np.float32)
    _lib.load_numerics().fp4E2M1DecodeArray(_ptr(c, ctypes.c_uint8), c.size,
                                   _ptr(out, ctypes.c_float))
    return out


def mx_scale_byte(amax, scale_rounding="floor"):
    a = _f32(amax)
    out = np.empty(a.shape, dtype=np.uint8)
    _lib.load_numerics().fp4MXScaleByteArray(_ptr(a, ctypes.c_float), a.size,
                                    SCALE_ROUNDING[scale_rounding],
                                    _ptr(out, ctypes.c_uint8))
    return out


def e8m0_decode(b):
    b = _u8(b)
    out = np.empty(b.shape, dtype=np.float32)
    _lib.load_numerics().fp4E8M0DecodeArray(_ptr(b, ctypes.c_uint8), b.size,
                                   _ptr(out, ctypes.c_float))
    return out


def e4m3_encode(v):
    """Non-negative values in [0, 448] only."""
    v = _f32(v)
    out = np.empty(v.shape, dtype=np.uint8)
    _lib.load_numerics().fp4E4M3EncodeArray(_ptr(v, ctypes.c_float), v.size,
                                   _ptr(out, ctypes.c_uint8))
    return out


def e4m3_decode(b):
    b = _u8(b)
    out = np.empty(b.shape, dtype=np.float32)
    _lib.load_numerics().fp4E4M3DecodeArray(_ptr(b, ctypes.c_uint8), b.size,
                                   _ptr(out, ctypes.c_float))
    return out


def round_to_bf16(v):
    v = _f32(v)
    out = np.empty(v.shape, dtype=np.float32)
    _lib.load_numerics().fp4RoundToBF16Array(_ptr(v, ctypes.c_float), v.size,
                                    _ptr(out, ctypes.c_float))
    return out


def counter_random(seed, first, n):
    out = np.empty(n, dtype=np.uint32)
    _lib.load_numerics().fp4CounterRandomArray(seed & 0xFFFFFFFF, first, n,
                                      _ptr(out, ctypes.c_uint32))
    return out


# Block Hadamard rotations (numerics.md 6; include/fp4/Numerics/Hadamard.h).

def hadamard_rotate(x, size, randomized=False, seed=0, inverse=False,
                    stride=1):
    """x R along the last axis, R = I (x) (D Hn_size) (x) I_stride (D: the
    seeded signs when `randomized`, else I); x R^T when `inverse`. Returns
    float32 of x's shape, computed by the C++ rotation the folder and the
    lowering use (same bits)."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if x.ndim == 0:
        raise ValueError("hadamard_rotate needs at least one axis")
    cols = x.shape[-1]
    rows = x.size // cols if cols else 0
    out = np.empty_like(x)
    if _lib.load_numerics().fp4HadamardRotate(
            _ptr(x, ctypes.c_float), rows, cols, size, stride,
            int(bool(randomized)), seed & 0xFFFFFFFF, int(bool(inverse)),
            _ptr(out, ctypes.c_float)):
        raise ValueError(
            f"invalid rotation: size {size} (a power of two) times stride "
            f"{stride} must divide the last axis ({cols})")
    return out


def hadamard_signs(seed, size):
    """The randomized rotation's signs (+1.0 / -1.0) of coordinates
    0 .. size-1 under `seed`."""
    neg = np.empty(size, dtype=np.uint8)
    if _lib.load_numerics().fp4HadamardSigns(seed & 0xFFFFFFFF, size,
                                    _ptr(neg, ctypes.c_uint8)):
        raise ValueError(f"invalid size {size}")
    return np.where(neg != 0, -1.0, 1.0).astype(np.float32)


# Three-way error decomposition (numerics.md 9;
# include/fp4/Numerics/ErrorDecomposition.h, docs/ErrorReport.md).

GRIDS = {"e2m1": 0, "hif4": 1}
# The finest scale block each scheme's decomposition uses.
DECOMPOSITION_BLOCK = {"mxfp4": None, "nvfp4": 16, "hif4": 4,
                       "mxfp4_macro": 32, "macro": 32}


class _ErrorStats(ctypes.Structure):
    """Mirror of Fp4ErrorStats in include/fp4-c/Numerics.h."""

    _fields_ = [(name, ctypes.c_double) for name in (
        "norm2", "total", "scale", "dead", "grid", "scaleBias", "deadzone",
        "gridNoise", "crossScaleBiasDeadzone", "crossScaleBiasGridNoise",
        "crossDeadzoneGridNoise", "maxAbsResidual")] + [
        (name, ctypes.c_int64) for name in (
            "elements", "clipped", "zeroed", "blocks", "nonFiniteBlocks")]


def decompose_error(x, xq, codes, block_size, grid="e2m1", per_block=False,
                    vectors=False):
    """Decompose the error of x (blocks of `block_size` along the last axis)
    quantized to packed `codes` and dequantized to `xq`, with the C++ code
    of fp4-error-report. Returns a dict: the absolute sums of Fp4ErrorStats
    (norm2, total, scale, dead, grid, scaleBias, ..., maxAbsResidual,
    elements, clipped, zeroed, blocks, nonFiniteBlocks), "relative" (the
    energies over norm2), "fractions" (clipped, zeroed over elements), and
    optionally "per_block" float64 [blocks, 5] (norm2, total, scale, dead,
    grid) and the vector terms "scale_bias_vector", "deadzone_vector",
    "grid_noise_vector" (float64 of x's shape)."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    xq = np.ascontiguousarray(np.asarray(xq, dtype=np.float32))
    codes = np.ascontiguousarray(np.asarray(codes, dtype=np.uint8))
    if x.ndim == 0 or x.shape != xq.shape:
        raise ValueError("x and xq must have the same shape (rank >= 1)")
    cols = x.shape[-1]
    rows = x.size // cols if cols else 0
    if codes.size * 2 != x.size:
        raise ValueError("codes must hold two codes per byte for every x")
    fn = _lib.load_numerics().fp4DecomposeError
    p_f64 = ctypes.POINTER(ctypes.c_double)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int32, ctypes.c_int64, ctypes.POINTER(
        ctypes.c_float), ctypes.POINTER(ctypes.c_float), ctypes.POINTER(
        ctypes.c_uint8), ctypes.c_int64, ctypes.c_int64,
        ctypes.POINTER(_ErrorStats), p_f64, p_f64, p_f64, p_f64]
    blocks = np.empty((rows * (cols // block_size) if block_size else 0, 5))
    vec = [np.empty(x.shape) for _ in range(3)] if vectors else [None] * 3
    stats = _ErrorStats()
    rc = fn(GRIDS[grid], block_size, _ptr(x, ctypes.c_float),
            _ptr(xq, ctypes.c_float), _ptr(codes, ctypes.c_uint8), rows, cols,
            ctypes.byref(stats),
            _ptr(blocks, ctypes.c_double) if per_block else None,
            *[_ptr(v, ctypes.c_double) if v is not None else None
              for v in vec])
    if rc:
        raise ValueError(f"fp4DecomposeError rejected block size {block_size}"
                         f" / grid {grid} for {rows}x{cols}")
    out = {name: getattr(stats, name) for name, _ in _ErrorStats._fields_}
    n2 = out["norm2"]
    out["relative"] = {k: (out[k] / n2 if n2 > 0 else 0.0) for k in (
        "total", "scale", "dead", "grid", "scaleBias", "deadzone",
        "gridNoise", "crossScaleBiasDeadzone", "crossScaleBiasGridNoise",
        "crossDeadzoneGridNoise")}
    n = max(out["elements"], 1)
    out["fractions"] = {"clipped": out["clipped"] / n,
                        "zeroed": out["zeroed"] / n}
    if per_block:
        out["per_block"] = blocks
    if vectors:
        (out["scale_bias_vector"], out["deadzone_vector"],
         out["grid_noise_vector"]) = vec
    return out


def error_report(x, scheme="mxfp4", per_block=False, vectors=False,
                 **options):
    """Quantize x with the reference quantizer of `scheme` (options as in
    quantize) and decompose the error as fp4-error-report does."""
    q = quantize(x, scheme, **options)
    xq = dequantize(q)
    block = DECOMPOSITION_BLOCK[scheme] or options.get("block_size", 32)
    grid = "hif4" if scheme == "hif4" else "e2m1"
    report = decompose_error(x, xq, q.codes, block, grid, per_block, vectors)
    report["dequantized"] = xq
    report["quantized"] = q
    return report


# Outlier fallback and residual correction (numerics.md 7, 8): block-sparse
# side tensors values/indices [..., cols/block_size, k], slot j of a block
# holding its element of rank j (larger |x| first, ties to the lower index).

def _sparse_rows(x):
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if x.ndim == 0:
        raise ValueError("needs at least one axis")
    cols = x.shape[-1]
    return x, (x.size // cols if cols else 0), cols


def split_outliers(x, block_size=32, k=1, bf16_values=True):
    """fp4.split_outliers along the last axis: (rest, values, indices).
    values are rounded to bf16 (as the IR stores them) unless
    bf16_values=False; indices are uint8 in-block positions."""
    x, rows, cols = _sparse_rows(x)
    if block_size <= 0 or cols % block_size:
        raise ValueError("block_size must divide the last axis")
    side = x.shape[:-1] + (cols // block_size, k)
    rest = np.empty_like(x)
    values = np.empty(side, dtype=np.float32)
    indices = np.empty(side, dtype=np.uint8)
    if _lib.load_numerics().fp4SplitOutliers(
            _ptr(x, ctypes.c_float), rows, cols, block_size, k,
            _ptr(rest, ctypes.c_float), _ptr(values, ctypes.c_float),
            _ptr(indices, ctypes.c_uint8)):
        raise ValueError("fp4SplitOutliers rejected the arguments "
                         "(1 <= k <= block_size <= 128)")
    return rest, round_to_bf16(values) if bf16_values else values, indices


def sparse_residual(x, scheme="mxfp4", block_size=4, k=2, bf16_values=True,
                    **options):
    """fp4.residual of x against its reference quantization with `scheme`
    (options: see make_params): (values, indices) of the block top-k of
    r = x - dequantize(quantize(x)). block_size=4, k=2 is 2:4."""
    x, rows, cols = _sparse_rows(x)
    if block_size <= 0 or cols % block_size:
        raise ValueError("block_size must divide the last axis")
    params = make_params(scheme, **options)
    side = x.shape[:-1] + (cols // block_size, k)
    values = np.empty(side, dtype=np.float32)
    indices = np.empty(side, dtype=np.uint8)
    if _lib.load_numerics().fp4SparseResidual(
            ctypes.byref(params), _ptr(x, ctypes.c_float), rows, cols,
            block_size, k, _ptr(values, ctypes.c_float),
            _ptr(indices, ctypes.c_uint8)):
        raise ValueError("fp4SparseResidual rejected the arguments")
    return (round_to_bf16(values) if bf16_values else values), indices


def scatter_sparse(values, indices, block_size):
    """The dense tensor [..., blocks * block_size] a (values, indices) pair
    stands for (numpy only)."""
    values = np.asarray(values, dtype=np.float32)
    indices = np.asarray(indices).astype(np.int64)
    *lead, blocks, k = values.shape
    dense = np.zeros(tuple(lead) + (blocks, block_size), dtype=np.float32)
    np.put_along_axis(dense, indices, values, axis=-1)
    return dense.reshape(tuple(lead) + (blocks * block_size,))
