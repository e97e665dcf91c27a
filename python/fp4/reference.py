"""NumPy front end of the C++ reference quantizers (numerics.md 1-5).

    q = quantize(x, "mxfp4", scale_rounding="even")
    y = dequantize(q)

`x` is any float array; the block axis is the last axis and rows are all
leading axes flattened. Component layouts are those of
include/fp4/Numerics/Reference.h: codes uint8 [rows, cols/2] (two codes per
byte, lower index in the low nibble); scales uint8 (MXFP4, NVFP4, macro) or
uint32 (HiF4 metadata); aux uint16 bf16 bits (macro factors); tensor_scale
the NVFP4 g_dec.
"""

import ctypes
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import _lib

SCHEMES = {"mxfp4": 0, "nvfp4": 1, "hif4": 2, "macro": 3}
SCALE_ROUNDING = {"floor": 0, "ceil": 1, "even": 2, "rceil": 3}
ELEMENT_ROUNDING = {"nearest_even": 0, "rne": 0, "half_away": 1,
                    "stochastic": 2}


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
    lib = _lib.load()
    p = _lib.SchemeParams()
    lib.fp4SchemeParamsInit(ctypes.byref(p), SCHEMES[scheme])
    p.blockSize = block_size
    p.scaleRounding = SCALE_ROUNDING[scale_rounding]
    p.elementRounding = ELEMENT_ROUNDING[rounding]
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
    lib = _lib.load()
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
    lib = _lib.load()
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
    lib = _lib.load()
    rc = lib.fp4ReferenceDequantize(
        ctypes.byref(params), _ptr(codes, ctypes.c_uint8),
        scales.ctypes.data_as(ctypes.c_void_p),
        aux.ctypes.data_as(ctypes.c_void_p) if aux is not None else None,
        _ptr(ts, ctypes.c_float), rows, cols, _ptr(out, ctypes.c_float))
    if rc:
        raise ValueError("fp4ReferenceDequantize rejected the arguments")
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
    _lib.load().fp4E2M1EncodeArray(_ptr(v, ctypes.c_float), v.size,
                                   ELEMENT_ROUNDING[rounding], seed,
                                   _ptr(out, ctypes.c_uint8))
    return out


def e2m1_decode(codes):
    c = _u8(codes)
    out = np.empty(c.shape, dtype=np.float32)
    _lib.load().fp4E2M1DecodeArray(_ptr(c, ctypes.c_uint8), c.size,
                                   _ptr(out, ctypes.c_float))
    return out


def mx_scale_byte(amax, scale_rounding="floor"):
    a = _f32(amax)
    out = np.empty(a.shape, dtype=np.uint8)
    _lib.load().fp4MXScaleByteArray(_ptr(a, ctypes.c_float), a.size,
                                    SCALE_ROUNDING[scale_rounding],
                                    _ptr(out, ctypes.c_uint8))
    return out


def e8m0_decode(b):
    b = _u8(b)
    out = np.empty(b.shape, dtype=np.float32)
    _lib.load().fp4E8M0DecodeArray(_ptr(b, ctypes.c_uint8), b.size,
                                   _ptr(out, ctypes.c_float))
    return out


def e4m3_encode(v):
    """Non-negative values in [0, 448] only."""
    v = _f32(v)
    out = np.empty(v.shape, dtype=np.uint8)
    _lib.load().fp4E4M3EncodeArray(_ptr(v, ctypes.c_float), v.size,
                                   _ptr(out, ctypes.c_uint8))
    return out


def e4m3_decode(b):
    b = _u8(b)
    out = np.empty(b.shape, dtype=np.float32)
    _lib.load().fp4E4M3DecodeArray(_ptr(b, ctypes.c_uint8), b.size,
                                   _ptr(out, ctypes.c_float))
    return out


def round_to_bf16(v):
    v = _f32(v)
    out = np.empty(v.shape, dtype=np.float32)
    _lib.load().fp4RoundToBF16Array(_ptr(v, ctypes.c_float), v.size,
                                    _ptr(out, ctypes.c_float))
    return out


def counter_random(seed, first, n):
    out = np.empty(n, dtype=np.uint32)
    _lib.load().fp4CounterRandomArray(seed & 0xFFFFFFFF, first, n,
                                      _ptr(out, ctypes.c_uint32))
    return out
