"""Compile fp4 IR to GPU kernels (here) and launch them (on the GPU machine).

    from fp4 import gpu
    out = gpu.compile(mlir_text, chip="sm_90")    # needs fp4-opt (MLIR)
    ...copy `out` to the GPU machine...
    kernels = gpu.load(out)                       # needs only libcuda
    mm = kernels["fp4_matmul_0"]
    mm(x, w_codes, w_scales, y)                   # torch tensors / cupy arrays

compile() runs `fp4-opt -fp4-pipeline-nvvm="chip=... export-dir=OUT"`, which
writes OUT/kernels.json and one image per gpu.module (PTX, or cubin with
format=bin). The manifest lists every kernel with its fixed launch
configuration and its arguments, all device pointers to dense row-major
buffers in the order of docs/ABI.md (operands in op order, each quantized
operand expanded to its components, then the results):

    {"chip": "sm_90", "kernels": [{"name": ..., "module": ..., "image": ...,
      "op": "fp4.matmul", "variant": ..., "grid": [x, y, z],
      "block": [x, y, z], "shared_bytes": N,
      "args": [{"name": "lhs", "dtype": "bfloat16", "shape": [16, 4096]},
               ...]}]}

(with "dependent": true on kernels of fp4-gpu-dependent-launch, launched as
programmatic dependent launches).

A Kernel checks its arguments against the manifest before launching (count,
dtype, shape, contiguity, device memory) and raises ValueError naming the
kernel and the argument. Arguments may be torch tensors, objects with
__cuda_array_interface__ (cupy), fp4.cuda.DeviceBuffer, or raw device
addresses (int; not checked). Byte buffers ("uint8") also accept the other
one-byte dtypes (int8, float4_e2m1fn_x2, float8_e8m0fnu, float8_e4m3fn), and
because cupy has no bfloat16, "bfloat16" also accepts 2-byte integer
__cuda_array_interface__ arrays holding the bits.

This module imports neither libFP4CAPI.so nor MLIR; the driver (libcuda)
is loaded at the first launch.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

__all__ = ["CompileError", "compile", "find_fp4_opt", "load", "KernelSet",
           "Kernel", "CudaLauncher", "MANIFEST", "DTYPE_SIZES"]

MANIFEST = "kernels.json"
DTYPE_SIZES = {"bfloat16": 2, "float16": 2, "float32": 4, "uint8": 1,
               "int32": 4}
# Other dtypes an argument of the manifest dtype may have (same bytes).
_ALIASES = {"uint8": {"int8", "float4_e2m1fn_x2", "float8_e8m0fnu",
                      "float8_e4m3fn"}}
# __cuda_array_interface__ has no bfloat16: its bits travel as 2-byte ints.
_CAI_ALIASES = {"bfloat16": {"uint16", "int16"}}
_TYPESTR = {"f2": "float16", "f4": "float32", "f8": "float64", "u1": "uint8",
            "i1": "int8", "u2": "uint16", "i2": "int16", "i4": "int32",
            "u4": "uint32", "i8": "int64", "u8": "uint64", "V2": "bfloat16"}


class CompileError(RuntimeError):
    """fp4-opt failed; the message holds the command and its stderr."""


# ---------------------------------------------------------------------------
# Compilation (needs fp4-opt)
# ---------------------------------------------------------------------------


def find_fp4_opt(explicit=None):
    """fp4-opt: `explicit`, $FP4_OPT, $FP4_BUILD_DIR/bin, the package's own
    bin/ (`pip install .`), PATH, then the repository's build/bin. Raises
    FileNotFoundError."""
    if explicit:
        path = shutil.which(explicit) if os.sep not in explicit else explicit
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise FileNotFoundError(f"fp4-opt not found at {explicit}")
    candidates = [os.environ.get("FP4_OPT")]
    build = os.environ.get("FP4_BUILD_DIR")
    if build:
        candidates.append(os.path.join(build, "bin", "fp4-opt"))
    candidates.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   "bin", "fp4-opt"))
    candidates.append(shutil.which("fp4-opt"))
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    candidates.append(os.path.join(root, "build", "bin", "fp4-opt"))
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        "fp4-opt not found: set FP4_OPT or FP4_BUILD_DIR, or put it on PATH")


def _is_path(source):
    if isinstance(source, os.PathLike):
        return True
    return (isinstance(source, str) and "\n" not in source
            and "{" not in source and os.path.isfile(source))


def _option_value(text):
    """Quotes a pass option value that contains spaces."""
    return f'"{text}"' if any(c.isspace() for c in text) else text


def compile(mlir_text_or_path, chip="sm_90", out_dir=None, fp4_opt=None,
            options=""):
    """Runs fp4-pipeline-nvvm on the module and returns the export
    directory (kernels.json and the kernel images). `options` are further
    pipeline options ("format=bin decode-rows-per-warp=2 ..."). Raises
    CompileError with fp4-opt's diagnostics on failure."""
    tool = find_fp4_opt(fp4_opt)
    out_dir = os.path.abspath(out_dir or tempfile.mkdtemp(prefix="fp4-gpu-"))
    os.makedirs(out_dir, exist_ok=True)
    if _is_path(mlir_text_or_path):
        source = os.fspath(mlir_text_or_path)
    else:
        source = os.path.join(out_dir, "input.mlir")
        with open(source, "w") as f:
            f.write(mlir_text_or_path)
    pipeline = f"chip={chip} export-dir={_option_value(out_dir)}"
    if options.strip():
        pipeline += " " + options.strip()
    command = [tool, source, f"-fp4-pipeline-nvvm={pipeline}", "-o", os.devnull]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(
            f"fp4-opt failed (exit {proc.returncode}): {' '.join(command)}\n"
            f"{proc.stderr.strip()}")
    if not os.path.isfile(os.path.join(out_dir, MANIFEST)):
        raise CompileError(f"fp4-opt wrote no {MANIFEST} to {out_dir}: "
                           f"{' '.join(command)}\n{proc.stderr.strip()}")
    return out_dir


# ---------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------


def _fail(where, message):
    raise ValueError(f"{where}: {message}")


def _check_dims(where, key, value, positive):
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(v, int) and not isinstance(v, bool)
                       and (v > 0 if positive else v >= 0) for v in value)):
        _fail(where, f"'{key}' must be a list of 3 positive integers, "
              f"got {value!r}")


def _check_kernel_entry(entry, index, directory):
    where = f"{MANIFEST} kernel #{index}"
    if not isinstance(entry, dict):
        _fail(where, "must be an object")
    for key in ("name", "module", "image", "grid", "block", "args"):
        if key not in entry:
            _fail(where, f"missing '{key}'")
    name = entry["name"]
    if not isinstance(name, str) or not name:
        _fail(where, "'name' must be a non-empty string")
    where = f"{MANIFEST} kernel '{name}'"
    _check_dims(where, "grid", entry["grid"], positive=True)
    _check_dims(where, "block", entry["block"], positive=True)
    shared = entry.get("shared_bytes", 0)
    if not isinstance(shared, int) or isinstance(shared, bool) or shared < 0:
        _fail(where, f"'shared_bytes' must be a non-negative integer, "
              f"got {shared!r}")
    if not isinstance(entry.get("dependent", False), bool):
        _fail(where, f"'dependent' must be true or false, "
              f"got {entry['dependent']!r}")
    image = entry["image"]
    if not isinstance(image, str) or os.path.basename(image) != image:
        _fail(where, f"'image' must be a file name in the directory, "
              f"got {image!r}")
    if not os.path.isfile(os.path.join(directory, image)):
        _fail(where, f"image '{image}' not found in {directory}")
    if not isinstance(entry["args"], list):
        _fail(where, "'args' must be a list")
    for i, arg in enumerate(entry["args"]):
        if not isinstance(arg, dict) or not {"name", "dtype", "shape"} <= set(arg):
            _fail(where, f"argument {i} must have 'name', 'dtype' and 'shape'")
        if arg["dtype"] not in DTYPE_SIZES:
            _fail(where, f"argument {i} '{arg['name']}': unknown dtype "
                  f"'{arg['dtype']}' (known: {', '.join(DTYPE_SIZES)})")
        shape = arg["shape"]
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0
                for d in shape):
            _fail(where, f"argument {i} '{arg['name']}': 'shape' must be a "
                  f"list of non-negative integers, got {shape!r}")


def read_manifest(directory):
    """Parses and validates DIR/kernels.json; raises ValueError."""
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path} not found (run fp4.gpu.compile or fp4-opt "
                         "-fp4-pipeline-nvvm=\"export-dir=...\")") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: invalid JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
        raise ValueError(f"{path}: expected an object with a 'kernels' list")
    seen = set()
    for index, entry in enumerate(data["kernels"]):
        _check_kernel_entry(entry, index, directory)
        if entry["name"] in seen:
            raise ValueError(f"{path}: kernel '{entry['name']}' listed twice")
        seen.add(entry["name"])
    return data


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


class _Arg:
    """What a kernel argument is: its dtype name, shape, contiguity, whether
    it lives on the device, and its address."""

    def __init__(self, kind, pointer, dtype=None, shape=None,
                 contiguous=True, on_device=True, device=None, nbytes=None):
        self.kind, self.pointer = kind, pointer
        self.dtype, self.shape = dtype, shape
        self.contiguous, self.on_device = contiguous, on_device
        self.device, self.nbytes = device, nbytes


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _describe(value):
    from . import cuda
    if isinstance(value, bool):
        raise TypeError("a bool is not a kernel argument")
    if isinstance(value, int):
        return _Arg("pointer", value)
    if isinstance(value, cuda.DeviceBuffer):
        return _Arg("buffer", value.ptr, nbytes=value.nbytes)
    module = type(value).__module__ or ""
    if module.startswith("torch") and hasattr(value, "data_ptr"):
        device = getattr(value, "device", None)
        return _Arg("torch", int(value.data_ptr()),
                    dtype=str(value.dtype).rsplit(".", 1)[-1],
                    shape=tuple(value.shape),
                    contiguous=bool(value.is_contiguous()),
                    on_device=bool(getattr(value, "is_cuda", False)),
                    device=getattr(device, "index", None))
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        typestr = interface["typestr"]
        dtype = _TYPESTR.get(typestr[1:], typestr)
        shape = tuple(interface["shape"])
        strides = interface.get("strides")
        itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 0
        contiguous = strides is None or tuple(strides) == _c_strides(
            shape, itemsize)
        device = getattr(getattr(value, "device", None), "id", None)
        return _Arg("cai", int(interface["data"][0]), dtype=dtype,
                    shape=shape, contiguous=contiguous, device=device)
    if module.startswith("numpy"):
        return _Arg("numpy", 0, on_device=False)
    raise TypeError(f"unsupported argument type {type(value).__name__}")


def _shape_text(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------


class CudaLauncher:
    """Launches through fp4.cuda: one module per (device, image), loaded on
    first use; the dynamic shared memory limit is raised once per function
    (Function.launch does it when shared_bytes exceeds 48 KiB)."""

    def __init__(self):
        self._modules = {}

    def function(self, kernel, device=None):
        from . import cuda
        cuda.init(0 if device is None else device)
        key = (device, kernel.image_path)
        if key not in self._modules:
            self._modules[key] = cuda.Module.from_file(kernel.image_path)
        return self._modules[key].function(kernel.name)

    def launch(self, kernel, pointers, stream=None, device=None):
        function = self.function(kernel, device)
        function.launch(kernel.grid, kernel.block, pointers,
                        shared_bytes=kernel.shared_bytes, stream=stream,
                        dependent=kernel.dependent)


class Kernel:
    """One kernel of a KernelSet: `spec` is its manifest entry."""

    def __init__(self, spec, directory, launcher):
        self.spec = spec
        self.name = spec["name"]
        self.image_path = os.path.join(directory, spec["image"])
        self.grid = tuple(spec["grid"])
        self.block = tuple(spec["block"])
        self.shared_bytes = int(spec.get("shared_bytes", 0))
        # fp4-gpu-dependent-launch's kernels: launched with a programmatic
        # dependency on the previous launch of the stream.
        self.dependent = bool(spec.get("dependent", False))
        self._launcher = launcher

    @property
    def arg_names(self):
        return [a["name"] for a in self.spec["args"]]

    def __repr__(self):
        return (f"Kernel({self.name}: {self.spec.get('op', '?')} "
                f"{self.spec.get('variant', '')}, grid={list(self.grid)}, "
                f"block={list(self.block)}, shared={self.shared_bytes})")

    def _error(self, index, message):
        arg = self.spec["args"][index]
        return ValueError(f"kernel '{self.name}': argument {index} "
                          f"'{arg['name']}': {message}")

    def validate(self, *args):
        """Checks `args` against the manifest; returns (device pointers,
        CUDA device index or None, the kind of every argument)."""
        expected = self.spec["args"]
        if len(args) != len(expected):
            raise ValueError(
                f"kernel '{self.name}': expected {len(expected)} arguments "
                f"({', '.join(self.arg_names)}), got {len(args)}")
        pointers, kinds, devices = [], [], set()
        for index, (value, want) in enumerate(zip(args, expected)):
            try:
                arg = _describe(value)
            except TypeError as error:
                raise self._error(index, str(error)) from None
            want_shape = tuple(want["shape"])
            want_dtype = want["dtype"]
            if not arg.on_device:
                raise self._error(
                    index, "is a host array; pass device memory (a CUDA "
                    "torch tensor, a cupy array or fp4.cuda.to_device(a))")
            if arg.dtype is not None:
                allowed = {want_dtype} | _ALIASES.get(want_dtype, set())
                if arg.kind == "cai":
                    allowed |= _CAI_ALIASES.get(want_dtype, set())
                if arg.dtype not in allowed:
                    raise self._error(index, f"expected dtype {want_dtype}, "
                                      f"got {arg.dtype}")
            if arg.shape is not None:
                scalar_ok = want_shape == () and arg.shape in ((), (1,))
                if arg.shape != want_shape and not scalar_ok:
                    raise self._error(
                        index, f"expected shape {_shape_text(want_shape)}, "
                        f"got {_shape_text(arg.shape)}")
                if not arg.contiguous:
                    raise self._error(index, "is not contiguous (row-major "
                                      "dense buffers only; use .contiguous())")
            if arg.nbytes is not None:
                need = DTYPE_SIZES[want_dtype]
                for d in want_shape:
                    need *= d
                if arg.nbytes < need:
                    raise self._error(index, f"buffer of {arg.nbytes} bytes, "
                                      f"needs {need}")
            if arg.device is not None:
                devices.add(arg.device)
            pointers.append(arg.pointer)
            kinds.append(arg.kind)
        if len(devices) > 1:
            raise ValueError(f"kernel '{self.name}': arguments on several "
                             f"devices {sorted(devices)}")
        return pointers, (devices.pop() if devices else None), kinds

    def _default_stream(self, kinds, device):
        """The caller's current stream when the arguments come from torch or
        cupy (so the launch is ordered with their work), else the legacy
        default stream."""
        if "torch" in kinds and "torch" in sys.modules:
            return sys.modules["torch"].cuda.current_stream(device).cuda_stream
        if "cai" in kinds and "cupy" in sys.modules:
            return sys.modules["cupy"].cuda.get_current_stream().ptr
        return None

    def __call__(self, *args, stream=None):
        pointers, device, kinds = self.validate(*args)
        if stream is None:
            stream = self._default_stream(kinds, device)
        self._launcher.launch(self, pointers, stream=stream, device=device)


class KernelSet:
    """The kernels of one export directory, by name."""

    def __init__(self, directory, manifest, launcher=None):
        self.directory = directory
        self.manifest = manifest
        self.chip = manifest.get("chip")
        self._launcher = launcher or CudaLauncher()
        self._kernels = {entry["name"]: Kernel(entry, directory, self._launcher)
                         for entry in manifest["kernels"]}

    def names(self):
        return list(self._kernels)

    def __getitem__(self, name):
        try:
            return self._kernels[name]
        except KeyError:
            raise KeyError(f"no kernel '{name}' in {self.directory} "
                           f"(kernels: {', '.join(self._kernels) or 'none'})"
                           ) from None

    def __contains__(self, name):
        return name in self._kernels

    def __iter__(self):
        return iter(self._kernels.values())

    def __len__(self):
        return len(self._kernels)

    def find(self, op=None, variant=None):
        """Kernels whose manifest 'op' / 'variant' match (None: any)."""
        return [k for k in self if (op is None or k.spec.get("op") == op)
                and (variant is None or k.spec.get("variant") == variant)]


def load(directory, launcher=None):
    """Reads DIR/kernels.json (validated; ValueError on a malformed one) and
    returns its KernelSet. `launcher` replaces the CUDA launcher (an object
    with launch(kernel, pointers, stream=None, device=None)), e.g. in tests."""
    directory = os.path.abspath(os.fspath(directory))
    return KernelSet(directory, read_manifest(directory), launcher)
