"""A minimal CUDA driver API binding (ctypes over libcuda.so.1).

Enough to run the kernels fp4-opt generates from numpy, torch or cupy
without cupy or cuda-python: the primary context, modules from PTX text or
cubin bytes, launches, streams, events, device memory and copies.

    from fp4 import cuda
    cuda.init()                                  # device 0, primary context
    module = cuda.Module.from_file("kernels/fp4_kernels.ptx")
    kernel = module.function("matmul_0")
    x = cuda.to_device(np.ones(1024, np.float32))
    y = cuda.mem_alloc(4096)
    kernel.launch((4, 1, 1), (256, 1, 1), [x, y])   # device pointers
    cuda.synchronize()
    out = cuda.from_device(y, (1024,), np.float32)

Every driver call is checked; a failure raises CudaError naming the call
and the CUresult (cuGetErrorName), with the JIT error log for PTX that does
not compile. The driver is loaded on first use: importing this module needs
neither a GPU nor libcuda, nor libFP4CAPI.so / MLIR.

The context is the device's primary context, the one PyTorch, CuPy and the
CUDA runtime use, so pointers from those libraries are valid here.
"""

import ctypes
import threading

__all__ = [
    "CudaError", "DriverNotFound", "driver", "init", "device_count",
    "device_name", "compute_capability", "device_attribute", "Module",
    "Function", "Stream", "Event", "DeviceBuffer", "mem_alloc", "to_device",
    "from_device", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memset_d8",
    "memset_d32", "synchronize", "stream_handle", "pointer_of",
]

# Enum values from cuda.h (CUDA 13; stable since their introduction).
CU_STREAM_NON_BLOCKING = 0x1
CU_EVENT_DEFAULT = 0x0
CU_EVENT_DISABLE_TIMING = 0x2
CU_JIT_INFO_LOG_BUFFER = 3
CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97

_DEFAULT_SHARED_LIMIT = 48 * 1024

_c = ctypes
_vp, _u64, _int, _uint = _c.c_void_p, _c.c_uint64, _c.c_int, _c.c_uint
_p = _c.POINTER

# Python name -> (exported symbols to try, argtypes). Versioned names are
# what cuda.h maps the plain names to.
_SIGNATURES = {
    "cuGetErrorName": (["cuGetErrorName"], [_int, _p(_c.c_char_p)]),
    "cuGetErrorString": (["cuGetErrorString"], [_int, _p(_c.c_char_p)]),
    "cuInit": (["cuInit"], [_uint]),
    "cuDriverGetVersion": (["cuDriverGetVersion"], [_p(_int)]),
    "cuDeviceGetCount": (["cuDeviceGetCount"], [_p(_int)]),
    "cuDeviceGet": (["cuDeviceGet"], [_p(_int), _int]),
    "cuDeviceGetName": (["cuDeviceGetName"], [_c.c_char_p, _int, _int]),
    "cuDeviceGetAttribute": (["cuDeviceGetAttribute"], [_p(_int), _int, _int]),
    "cuDevicePrimaryCtxRetain": (["cuDevicePrimaryCtxRetain"], [_p(_vp), _int]),
    "cuCtxSetCurrent": (["cuCtxSetCurrent"], [_vp]),
    "cuCtxGetCurrent": (["cuCtxGetCurrent"], [_p(_vp)]),
    "cuCtxSynchronize": (["cuCtxSynchronize"], []),
    "cuModuleLoadDataEx": (["cuModuleLoadDataEx"],
                           [_p(_vp), _vp, _uint, _p(_int), _p(_vp)]),
    "cuModuleUnload": (["cuModuleUnload"], [_vp]),
    "cuModuleGetFunction": (["cuModuleGetFunction"], [_p(_vp), _vp, _c.c_char_p]),
    "cuFuncSetAttribute": (["cuFuncSetAttribute"], [_vp, _int, _int]),
    "cuFuncGetAttribute": (["cuFuncGetAttribute"], [_p(_int), _int, _vp]),
    "cuLaunchKernel": (["cuLaunchKernel"],
                       [_vp, _uint, _uint, _uint, _uint, _uint, _uint, _uint,
                        _vp, _p(_vp), _p(_vp)]),
    "cuLaunchKernelEx": (["cuLaunchKernelEx"],
                         [_vp, _vp, _p(_vp), _p(_vp)]),
    "cuStreamCreate": (["cuStreamCreate"], [_p(_vp), _uint]),
    "cuStreamDestroy": (["cuStreamDestroy_v2", "cuStreamDestroy"], [_vp]),
    "cuStreamSynchronize": (["cuStreamSynchronize"], [_vp]),
    "cuEventCreate": (["cuEventCreate"], [_p(_vp), _uint]),
    "cuEventDestroy": (["cuEventDestroy_v2", "cuEventDestroy"], [_vp]),
    "cuEventRecord": (["cuEventRecord"], [_vp, _vp]),
    "cuEventSynchronize": (["cuEventSynchronize"], [_vp]),
    "cuEventElapsedTime": (["cuEventElapsedTime_v2", "cuEventElapsedTime"],
                           [_p(_c.c_float), _vp, _vp]),
    "cuMemAlloc": (["cuMemAlloc_v2"], [_p(_u64), _c.c_size_t]),
    "cuMemFree": (["cuMemFree_v2"], [_u64]),
    "cuMemcpyHtoD": (["cuMemcpyHtoD_v2"], [_u64, _vp, _c.c_size_t]),
    "cuMemcpyDtoH": (["cuMemcpyDtoH_v2"], [_vp, _u64, _c.c_size_t]),
    "cuMemcpyDtoD": (["cuMemcpyDtoD_v2"], [_u64, _u64, _c.c_size_t]),
    "cuMemsetD8": (["cuMemsetD8_v2"], [_u64, _c.c_ubyte, _c.c_size_t]),
    "cuMemsetD32": (["cuMemsetD32_v2"], [_u64, _uint, _c.c_size_t]),
}


# cuLaunchKernelEx's config (cuda.h, CUDA 12+): a programmatic dependent
# launch sets one attribute, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
# SERIALIZATION, whose value (an int) is the first member of a 64-byte,
# 8-byte-aligned union after the 4-byte id and its padding.
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6


class _LaunchAttribute(_c.Structure):
    _fields_ = [("id", _c.c_int), ("pad", _c.c_char * 4),
                ("value", _c.c_int), ("value_pad", _c.c_char * 60)]


class _LaunchConfig(_c.Structure):
    _fields_ = [("gridDimX", _uint), ("gridDimY", _uint), ("gridDimZ", _uint),
                ("blockDimX", _uint), ("blockDimY", _uint),
                ("blockDimZ", _uint), ("sharedMemBytes", _uint),
                ("hStream", _vp), ("attrs", _p(_LaunchAttribute)),
                ("numAttrs", _uint)]


assert _c.sizeof(_LaunchAttribute) == 72 and _c.sizeof(_LaunchConfig) == 56


class CudaError(RuntimeError):
    """A failed driver call: `call` (the function and what it was doing),
    `code` (the CUresult, None if the driver could not be loaded), `name`
    (cuGetErrorName) and `log` (the JIT error log, for module loads)."""

    def __init__(self, call, code, name, description="", log=""):
        self.call, self.code, self.name = call, code, name
        self.description, self.log = description, log
        text = f"{call} failed: {name}"
        if description:
            text += f" ({description})"
        if log:
            text += "\n" + log.rstrip()
        super().__init__(text)


class DriverNotFound(CudaError):
    """libcuda.so.1 could not be loaded (no NVIDIA driver on this machine)."""


class _Driver:
    def __init__(self, lib):
        self.lib = lib
        for name, (symbols, argtypes) in _SIGNATURES.items():
            fn = None
            for symbol in symbols:
                fn = getattr(lib, symbol, None)
                if fn is not None:
                    break
            if fn is None:
                raise CudaError(f"dlsym({symbols[0]})", None,
                                "symbol not found in libcuda.so.1")
            fn.restype = _int
            fn.argtypes = argtypes
            setattr(self, name, fn)

    def error_text(self, code):
        name, text = _c.c_char_p(), _c.c_char_p()
        if self.cuGetErrorName(code, _c.byref(name)) != 0 or not name.value:
            return f"CUresult {code}", ""
        self.cuGetErrorString(code, _c.byref(text))
        return name.value.decode(), (text.value or b"").decode()

    def check(self, result, call, log=""):
        if result != 0:
            name, description = self.error_text(result)
            raise CudaError(call, result, name, description, log)


_driver = None
_lock = threading.Lock()


def driver():
    """The loaded driver (cached); raises DriverNotFound without libcuda."""
    global _driver
    with _lock:
        if _driver is None:
            try:
                lib = ctypes.CDLL("libcuda.so.1")
            except OSError as error:
                raise DriverNotFound(
                    "dlopen(libcuda.so.1)", None,
                    "no NVIDIA driver on this machine", str(error)) from None
            _driver = _Driver(lib)
        return _driver


# ---------------------------------------------------------------------------
# Devices and the primary context
# ---------------------------------------------------------------------------

_initialized = False
_contexts = {}
_current_device = 0


def init(device=0):
    """Initializes the driver, retains `device`'s primary context and makes
    it current on this thread; later calls use that device. Returns the
    context handle (an int)."""
    global _initialized, _current_device
    drv = driver()
    if not _initialized:
        drv.check(drv.cuInit(0), "cuInit(0)")
        _initialized = True
    if device not in _contexts:
        count = _int()
        drv.check(drv.cuDeviceGetCount(_c.byref(count)), "cuDeviceGetCount")
        if not 0 <= device < count.value:
            raise CudaError(f"cuDeviceGet({device})", 101,
                            "CUDA_ERROR_INVALID_DEVICE",
                            f"the machine has {count.value} device(s)")
        handle = _int()
        drv.check(drv.cuDeviceGet(_c.byref(handle), device),
                  f"cuDeviceGet({device})")
        ctx = _vp()
        drv.check(drv.cuDevicePrimaryCtxRetain(_c.byref(ctx), handle),
                  f"cuDevicePrimaryCtxRetain(device {device})")
        _contexts[device] = ctx.value
    _current_device = device
    return _activate()


def _activate():
    """Makes the selected device's primary context current on this thread
    (a no-op when it already is) and returns it."""
    if _current_device not in _contexts:
        return init(_current_device)
    drv = driver()
    ctx = _contexts[_current_device]
    current = _vp()
    if drv.cuCtxGetCurrent(_c.byref(current)) != 0 or current.value != ctx:
        drv.check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def device_count():
    drv = driver()
    drv.check(drv.cuInit(0), "cuInit(0)")
    count = _int()
    drv.check(drv.cuDeviceGetCount(_c.byref(count)), "cuDeviceGetCount")
    return count.value


def device_attribute(attribute, device=None):
    _activate()
    drv = driver()
    value = _int()
    ordinal = _current_device if device is None else device
    drv.check(drv.cuDeviceGetAttribute(_c.byref(value), attribute, ordinal),
              f"cuDeviceGetAttribute({attribute})")
    return value.value


def device_name(device=None):
    _activate()
    drv = driver()
    buffer = _c.create_string_buffer(256)
    ordinal = _current_device if device is None else device
    drv.check(drv.cuDeviceGetName(buffer, 256, ordinal), "cuDeviceGetName")
    return buffer.value.decode()


def compute_capability(device=None):
    """(major, minor), e.g. (9, 0) on an H100/H200."""
    return (device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))


def synchronize():
    """Waits for all work on the current device's primary context."""
    _activate()
    driver().check(driver().cuCtxSynchronize(), "cuCtxSynchronize")


# ---------------------------------------------------------------------------
# Modules and functions
# ---------------------------------------------------------------------------

_ELF_MAGIC = b"\x7fELF"
_FATBIN_MAGIC = b"\x50\xed\x55\xba"


def _image_bytes(image):
    """(bytes for cuModuleLoadDataEx, is_ptx). PTX must be NUL-terminated."""
    if isinstance(image, str):
        image = image.encode()
    image = bytes(image)
    if image.startswith(_ELF_MAGIC) or image.startswith(_FATBIN_MAGIC):
        return image, False
    if not image.endswith(b"\0"):
        image += b"\0"
    return image, True


class Module:
    """A loaded CUmodule. `image`: PTX text (str or bytes; JIT-compiled by
    the driver for the current device) or cubin/fatbin bytes."""

    def __init__(self, image, name="<module>"):
        _activate()
        drv = driver()
        data, is_ptx = _image_bytes(image)
        self.name = name
        self._functions = {}
        error_log = _c.create_string_buffer(1 << 16)
        info_log = _c.create_string_buffer(1 << 16)
        options = (_int * 4)(CU_JIT_ERROR_LOG_BUFFER,
                             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_INFO_LOG_BUFFER,
                             CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
        values = (_vp * 4)(_c.cast(error_log, _vp).value, len(error_log),
                           _c.cast(info_log, _vp).value, len(info_log))
        handle = _vp()
        self._data = _c.create_string_buffer(data, len(data))
        result = drv.cuModuleLoadDataEx(_c.byref(handle), self._data, 4,
                                        options, values)
        kind = "PTX" if is_ptx else "cubin"
        drv.check(result, f"cuModuleLoadDataEx({name}, {kind})",
                  error_log.value.decode(errors="replace"))
        self.handle = handle.value
        self.jit_log = info_log.value.decode(errors="replace")

    @classmethod
    def from_file(cls, path):
        """Loads a .ptx (text) or .cubin / .fatbin (binary) file."""
        with open(path, "rb") as f:
            return cls(f.read(), name=str(path))

    def function(self, name):
        """The kernel `name` (a Function, cached)."""
        if name not in self._functions:
            if self.handle is None:
                raise CudaError(f"cuModuleGetFunction({name})", 400,
                                "CUDA_ERROR_INVALID_HANDLE", "module unloaded")
            _activate()
            drv = driver()
            handle = _vp()
            drv.check(drv.cuModuleGetFunction(_c.byref(handle), self.handle,
                                              name.encode()),
                      f"cuModuleGetFunction({name}) in {self.name}")
            self._functions[name] = Function(handle.value, name, self)
        return self._functions[name]

    def unload(self):
        if self.handle is not None:
            _activate()
            driver().check(driver().cuModuleUnload(self.handle),
                           f"cuModuleUnload({self.name})")
            self.handle = None
            self._functions.clear()


def pointer_of(value):
    """The device address of a kernel pointer argument: an int, a
    DeviceBuffer, a torch tensor (data_ptr()) or an object with
    __cuda_array_interface__ (cupy)."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a device pointer")
    if isinstance(value, int):
        return value
    if isinstance(value, DeviceBuffer):
        return value.ptr
    if hasattr(value, "data_ptr"):
        return int(value.data_ptr())
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    raise TypeError(f"cannot pass {type(value).__name__} as a device pointer")


def _kernel_argument(value):
    """ctypes storage of one kernel parameter: ctypes scalars are passed as
    they are (c_int32(n) for an int32 parameter), everything else is a
    64-bit device pointer."""
    if isinstance(value, _c._SimpleCData):
        return value
    return _u64(pointer_of(value))


def stream_handle(stream):
    """The CUstream of `stream`: None or 0 (the legacy default stream), an
    int handle, a Stream, a torch.cuda.Stream (.cuda_stream) or a cupy
    stream (.ptr)."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    if isinstance(stream, Stream):
        return stream.handle
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"cannot use {type(stream).__name__} as a CUDA stream")


class Function:
    """A kernel of a Module."""

    def __init__(self, handle, name, module):
        self.handle, self.name, self.module = handle, name, module
        # Dynamic bytes a launch may use without raising the limit: the
        # 48 KiB default less the static bytes (None until the first launch
        # that needs to know).
        self._max_dynamic_shared = None

    def attribute(self, attribute):
        value = _int()
        driver().check(driver().cuFuncGetAttribute(_c.byref(value), attribute,
                                                   self.handle),
                       f"cuFuncGetAttribute({self.name}, {attribute})")
        return value.value

    def set_max_dynamic_shared_memory(self, nbytes):
        """Allows launches with up to `nbytes` of dynamic shared memory
        (needed above 48 KiB; the H200 allows 227 KiB)."""
        _activate()
        driver().check(driver().cuFuncSetAttribute(
            self.handle, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            int(nbytes)),
            f"cuFuncSetAttribute({self.name}, MAX_DYNAMIC_SHARED_SIZE_BYTES="
            f"{nbytes})")
        self._max_dynamic_shared = int(nbytes)

    def launch(self, grid, block, args=(), shared_bytes=0, stream=None,
               dependent=False):
        """Launches on `stream` (see stream_handle). args: device pointers
        (int, DeviceBuffer, torch tensor, cupy array) or ctypes scalars
        (ctypes.c_int32(n) for an int32 parameter). `dependent`: a
        programmatic dependent launch (cuLaunchKernelEx with programmatic
        stream serialization; sm_90+): the kernel may start before the
        previous launch of the stream has finished, so it must wait for it
        (griddepcontrol.wait) before reading what that launch writes, as
        fp4-gpu-dependent-launch's kernels do."""
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = tuple(block) + (1,) * (3 - len(block))
        # The 48 KiB default covers static and dynamic shared memory
        # together (LLVM's dynamic-shared-memory symbol counts 1 static
        # byte), so exactly 48 KiB dynamic needs the attribute raised too.
        if shared_bytes and self._max_dynamic_shared is None:
            self._max_dynamic_shared = _DEFAULT_SHARED_LIMIT - self.attribute(
                CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        if shared_bytes and shared_bytes > self._max_dynamic_shared:
            self.set_max_dynamic_shared_memory(shared_bytes)
        storage = [_kernel_argument(a) for a in args]
        params = (_vp * max(1, len(storage)))(
            *[_c.addressof(s) for s in storage])
        _activate()
        if dependent:
            attribute = _LaunchAttribute(
                id=CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                value=1)
            config = _LaunchConfig(*grid, *block, int(shared_bytes),
                                   stream_handle(stream),
                                   _c.pointer(attribute), 1)
            driver().check(driver().cuLaunchKernelEx(
                _c.byref(config), self.handle, params, None),
                f"cuLaunchKernelEx({self.name}, grid={grid}, block={block}, "
                f"shared={shared_bytes}, programmatic stream serialization)")
            return
        driver().check(driver().cuLaunchKernel(
            self.handle, *grid, *block, int(shared_bytes),
            stream_handle(stream), params, None),
            f"cuLaunchKernel({self.name}, grid={grid}, block={block}, "
            f"shared={shared_bytes})")


# ---------------------------------------------------------------------------
# Streams and events
# ---------------------------------------------------------------------------


class Stream:
    """A CUstream (non-blocking with respect to the legacy default stream)."""

    def __init__(self, flags=CU_STREAM_NON_BLOCKING):
        _activate()
        handle = _vp()
        driver().check(driver().cuStreamCreate(_c.byref(handle), flags),
                       "cuStreamCreate")
        self.handle = handle.value

    def synchronize(self):
        driver().check(driver().cuStreamSynchronize(self.handle),
                       "cuStreamSynchronize")

    def destroy(self):
        if self.handle:
            driver().check(driver().cuStreamDestroy(self.handle),
                           "cuStreamDestroy")
            self.handle = None


class Event:
    """A CUevent; timing events measure elapsed_ms between two records."""

    def __init__(self, timing=True):
        _activate()
        handle = _vp()
        flags = CU_EVENT_DEFAULT if timing else CU_EVENT_DISABLE_TIMING
        driver().check(driver().cuEventCreate(_c.byref(handle), flags),
                       "cuEventCreate")
        self.handle = handle.value

    def record(self, stream=None):
        driver().check(driver().cuEventRecord(self.handle,
                                              stream_handle(stream)),
                       "cuEventRecord")
        return self

    def synchronize(self):
        driver().check(driver().cuEventSynchronize(self.handle),
                       "cuEventSynchronize")

    def elapsed_ms(self, end):
        """Milliseconds from this event to `end` (both recorded)."""
        ms = _c.c_float()
        driver().check(driver().cuEventElapsedTime(_c.byref(ms), self.handle,
                                                   end.handle),
                       "cuEventElapsedTime")
        return ms.value

    def destroy(self):
        if self.handle:
            driver().check(driver().cuEventDestroy(self.handle),
                           "cuEventDestroy")
            self.handle = None


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


class DeviceBuffer:
    """Device memory from cuMemAlloc; `ptr` is its address (also int(buf)).
    Freed by free() or when garbage collected."""

    def __init__(self, nbytes):
        _activate()
        self.nbytes = int(nbytes)
        pointer = _u64()
        driver().check(driver().cuMemAlloc(_c.byref(pointer),
                                           max(1, self.nbytes)),
                       f"cuMemAlloc({self.nbytes})")
        self.ptr = pointer.value

    def __int__(self):
        return self.ptr

    def free(self):
        if self.ptr:
            _activate()
            driver().check(driver().cuMemFree(self.ptr), "cuMemFree")
            self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass


def mem_alloc(nbytes):
    return DeviceBuffer(nbytes)


def _host_array(array):
    import numpy as np
    array = np.asarray(array)
    if not array.flags["C_CONTIGUOUS"]:
        array = np.ascontiguousarray(array)
    return array


def memcpy_htod(dst, src):
    """Copies the numpy array `src` to device address `dst` (synchronous)."""
    src = _host_array(src)
    _activate()
    driver().check(driver().cuMemcpyHtoD(pointer_of(dst), src.ctypes.data,
                                         src.nbytes),
                   f"cuMemcpyHtoD({src.nbytes} bytes)")


def memcpy_dtoh(dst, src, nbytes=None):
    """Copies device address `src` into the writable C-contiguous numpy
    array `dst` (all of it unless `nbytes`)."""
    if not dst.flags["C_CONTIGUOUS"] or not dst.flags["WRITEABLE"]:
        raise ValueError("memcpy_dtoh needs a writable C-contiguous array")
    count = dst.nbytes if nbytes is None else int(nbytes)
    _activate()
    driver().check(driver().cuMemcpyDtoH(dst.ctypes.data, pointer_of(src),
                                         count),
                   f"cuMemcpyDtoH({count} bytes)")


def memcpy_dtod(dst, src, nbytes):
    _activate()
    driver().check(driver().cuMemcpyDtoD(pointer_of(dst), pointer_of(src),
                                         int(nbytes)),
                   f"cuMemcpyDtoD({nbytes} bytes)")


def memset_d8(dst, value, nbytes):
    _activate()
    driver().check(driver().cuMemsetD8(pointer_of(dst), value & 0xFF,
                                       int(nbytes)),
                   f"cuMemsetD8({nbytes} bytes)")


def memset_d32(dst, value, count):
    """Sets `count` 32-bit words (e.g. a NaN bit pattern to poison floats)."""
    _activate()
    driver().check(driver().cuMemsetD32(pointer_of(dst), value & 0xFFFFFFFF,
                                        int(count)),
                   f"cuMemsetD32({count} words)")


def to_device(array):
    """A DeviceBuffer holding a copy of the numpy array."""
    array = _host_array(array)
    buffer = DeviceBuffer(array.nbytes)
    if array.nbytes:
        memcpy_htod(buffer, array)
    return buffer


def from_device(src, shape, dtype):
    """A numpy array of `shape` and `dtype` copied from device address `src`
    (synchronous)."""
    import numpy as np
    out = np.empty(shape, dtype)
    if out.nbytes:
        memcpy_dtoh(out, src)
    return out
