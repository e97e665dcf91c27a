"""Locate and load libFP4CAPI.so and declare the C signatures (ctypes).

Search order: $FP4_LIB_DIR, $FP4_BUILD_DIR/lib, lib/ inside this package
(the wheel, `pip install .`), ../../lib relative to this package (the
`cmake --install` layout), then ../../build/lib, then every ../../build*/lib
directory (newest library first).

The reference quantizers (fp4.reference) only need the numerics entry
points, which libFP4Reference.so also exports without MLIR: load_numerics()
takes $FP4_REFERENCE_LIB when set, else libFP4CAPI.so, else
libFP4Reference.so from the same directories (a machine without MLIR).
"""

import ctypes
import glob
import os

_LIB_NAME = "libFP4CAPI.so"
_REFERENCE_LIB_NAME = "libFP4Reference.so"
_lib = None
_numerics = None


class SchemeParams(ctypes.Structure):
    """Mirror of Fp4SchemeParams in include/fp4-c/Numerics.h."""

    _fields_ = [
        ("scheme", ctypes.c_int32),
        ("blockSize", ctypes.c_int32),
        ("scaleRounding", ctypes.c_int32),
        ("elementRounding", ctypes.c_int32),
        ("seed", ctypes.c_uint32),
        ("fourOverSix", ctypes.c_int32),
        ("tile2d", ctypes.c_int32),
        ("search", ctypes.c_int32),
        ("macroBlock", ctypes.c_int64),
        ("indexBase", ctypes.c_int64),
        ("indexRowStride", ctypes.c_int64),
        ("indexColStride", ctypes.c_int64),
    ]


def _candidates(name=_LIB_NAME):
    env = os.environ.get("FP4_LIB_DIR")
    if env:
        yield os.path.join(env, name)
    build = os.environ.get("FP4_BUILD_DIR")
    if build:
        yield os.path.join(build, "lib", name)
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "lib", name)
    root = os.path.abspath(os.path.join(here, "..", ".."))
    # Installed layout: <prefix>/python/fp4 next to <prefix>/lib.
    yield os.path.join(root, "lib", name)
    yield os.path.join(root, "build", "lib", name)
    found = glob.glob(os.path.join(root, "build*", "lib", name))
    for path in sorted(found, key=os.path.getmtime, reverse=True):
        yield path


def _declare(lib):
    c = ctypes
    p_f32, p_u8 = c.POINTER(c.c_float), c.POINTER(c.c_uint8)
    p_i64, p_u32 = c.POINTER(c.c_int64), c.POINTER(c.c_uint32)
    p_params = c.POINTER(SchemeParams)
    sigs = {
        "fp4SchemeParamsInit": (None, [p_params, c.c_int32]),
        "fp4ReferenceQuantize": (
            c.c_int,
            [p_params, p_f32, c.c_int64, c.c_int64, p_u8, c.c_void_p,
             c.c_void_p, p_f32],
        ),
        "fp4ReferenceDequantize": (
            c.c_int,
            [p_params, p_u8, c.c_void_p, c.c_void_p, p_f32, c.c_int64,
             c.c_int64, p_f32],
        ),
        "fp4ReferenceComponentSizes": (
            c.c_int, [p_params, c.c_int64, c.c_int64, p_i64, p_i64, p_i64]),
        "fp4E2M1EncodeArray": (
            None, [p_f32, c.c_int64, c.c_int32, c.c_uint32, p_u8]),
        "fp4E2M1DecodeArray": (None, [p_u8, c.c_int64, p_f32]),
        "fp4MXScaleByteArray": (None, [p_f32, c.c_int64, c.c_int32, p_u8]),
        "fp4E8M0DecodeArray": (None, [p_u8, c.c_int64, p_f32]),
        "fp4E4M3EncodeArray": (None, [p_f32, c.c_int64, p_u8]),
        "fp4E4M3DecodeArray": (None, [p_u8, c.c_int64, p_f32]),
        "fp4RoundToBF16Array": (None, [p_f32, c.c_int64, p_f32]),
        "fp4CounterRandomArray": (
            None, [c.c_uint32, c.c_int64, c.c_int64, p_u32]),
        "fp4HadamardRotate": (
            c.c_int, [p_f32, c.c_int64, c.c_int64, c.c_int64, c.c_int64,
                      c.c_int32, c.c_uint32, c.c_int32, p_f32]),
        "fp4HadamardSigns": (c.c_int, [c.c_uint32, c.c_int64, p_u8]),
        "fp4SplitOutliers": (
            c.c_int, [p_f32, c.c_int64, c.c_int64, c.c_int64, c.c_int64,
                      p_f32, p_f32, p_u8]),
        "fp4SparseResidual": (
            c.c_int, [p_params, p_f32, c.c_int64, c.c_int64, c.c_int64,
                      c.c_int64, p_f32, p_u8]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def load():
    """Return the loaded library (cached); raise OSError if none is found."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        tried.append(path)
        if os.path.exists(path):
            lib = ctypes.CDLL(path)
            _declare(lib)
            _lib = lib
            return lib
    raise OSError(
        "libFP4CAPI.so not found; build target FP4CAPI or set FP4_LIB_DIR. "
        "Tried: " + ", ".join(tried))


def load_numerics():
    """The library behind fp4.reference (cached): $FP4_REFERENCE_LIB if set
    (libFP4Reference.so or libFP4CAPI.so), else libFP4CAPI.so as found by
    load(), else libFP4Reference.so (for example when libFP4CAPI.so cannot
    load because the machine has no libMLIR.so). Raises OSError if none."""
    global _numerics
    if _numerics is not None:
        return _numerics
    env = os.environ.get("FP4_REFERENCE_LIB")
    if env:
        if not os.path.exists(env):
            raise OSError(f"FP4_REFERENCE_LIB={env}: no such file")
        lib = ctypes.CDLL(env)
        _declare(lib)
        _numerics = lib
        return lib
    try:
        _numerics = load()
        return _numerics
    except OSError as error:
        capi_error = error
    tried = []
    for path in _candidates(_REFERENCE_LIB_NAME):
        tried.append(path)
        if os.path.exists(path):
            lib = ctypes.CDLL(path)
            _declare(lib)
            _numerics = lib
            return lib
    raise OSError(f"{capi_error}; {_REFERENCE_LIB_NAME} not found either "
                  "(build target FP4Reference or set FP4_REFERENCE_LIB). "
                  "Tried: " + ", ".join(tried))


_CPU_RUNTIME_NAME = "libfp4_cpu_runtime.so"
_ASYNC_RUNTIME_NAME = "libmlir_async_runtime.so"


def cpu_runtime_libraries():
    """The shared libraries code from fp4-pipeline-cpu{fast} calls into, in
    the order the ExecutionEngine (shared_libs=) or mlir-runner
    (--shared-libs) should load them: MLIR's async runtime (parallel loops;
    $FP4_ASYNC_RUNTIME overrides where it is looked for, else MLIR's library
    directory) and libfp4_cpu_runtime.so (the contraction kernel; found like
    libFP4CAPI.so). Raises OSError naming what is missing."""
    out = []
    async_env = os.environ.get("FP4_ASYNC_RUNTIME")
    async_dirs = ([async_env] if async_env else
                  [os.path.join(d, _ASYNC_RUNTIME_NAME)
                   for d in ("/usr/lib/llvm-22/lib", "/usr/local/lib")])
    found = [p for p in async_dirs if os.path.exists(p)]
    if not found:
        raise OSError(f"{_ASYNC_RUNTIME_NAME} not found (looked at "
                      f"{', '.join(async_dirs)}; set FP4_ASYNC_RUNTIME)")
    out.append(found[0])
    for path in _candidates(_CPU_RUNTIME_NAME):
        if os.path.exists(path):
            out.append(path)
            return out
    raise OSError(f"{_CPU_RUNTIME_NAME} not found; build target FP4CPURuntime "
                  "or set FP4_LIB_DIR")
