"""Memref descriptors and calls through MLIR's C interface, with ctypes only.

A function marked `llvm.emit_c_interface` gets a wrapper `_mlir_ciface_<name>`
that takes every memref argument as a pointer to a ranked descriptor
(CRunnerUtils.h StridedMemRefType: allocated, aligned, offset, sizes[rank],
strides[rank]) and returns memref results through a pointer passed first.
This module builds those descriptors from numpy arrays and decodes returned
ones; fp4.ir's ExecutionEngine (the JIT, packed calls) and fp4-run (a
compiled .so, direct calls) share it. It needs neither libFP4CAPI.so nor
MLIR, so it works on a machine that only runs compiled code.

    frame = CallFrame([x, out], results=[MemRef(np.float32, rank=2)])
    fn = ctypes.CFUNCTYPE(frame.restype, *frame.argtypes)(address)
    frame.finish(fn(*frame.arguments))   # -> numpy copy of the result
"""

import ctypes

__all__ = ["memref_descriptor_type", "descriptor_for", "MemRef",
           "take_memref", "scalar_ctype", "scalar_storage", "CallFrame"]

_i64 = ctypes.c_int64
_vp = ctypes.c_void_p


def _numpy():
    import numpy
    return numpy


_descriptor_types = {}


def memref_descriptor_type(rank):
    """The ctypes struct of a ranked strided memref descriptor (CRunnerUtils.h
    StridedMemRefType): allocated, aligned, offset, sizes[rank], strides[rank]."""
    if rank not in _descriptor_types:
        fields = [("allocated", _vp), ("aligned", _vp), ("offset", _i64)]
        if rank > 0:
            fields += [("sizes", _i64 * rank), ("strides", _i64 * rank)]
        _descriptor_types[rank] = type(f"MemRefDescriptor{rank}D",
                                       (ctypes.Structure,), {"_fields_": fields})
    return _descriptor_types[rank]


def descriptor_for(array, pointer=None):
    """Describes a C-contiguous numpy array as a memref (no copy). With
    `pointer`, the descriptor has the array's shape but points at that
    address instead (a device copy of the array, for example)."""
    if not array.flags["C_CONTIGUOUS"]:
        raise ValueError(
            "numpy arguments must be C-contiguous: the compiled code assumes "
            "the identity layout of its memref types (use np.ascontiguousarray)")
    desc = memref_descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = (array.ctypes.data if pointer is None
                                     else int(pointer))
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = list(array.shape)
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


def _read_host(address, nbytes):
    return (ctypes.c_char * nbytes).from_address(address)


class MemRef:
    """A memref result of a function (the C interface returns it through a
    pointer): engine.invoke("f", x, results=[MemRef(np.float32, rank=2)])
    returns a numpy copy.

    The buffer stays allocated unless `owned=True`: only the caller knows
    whether the function returned a fresh allocation (memref.alloc, which
    the compiled code got from malloc; then `owned=True` frees it) or memory
    it must not free (a constant global, an argument, a view of either).
    Destination-passing style (outputs as numpy arguments) avoids the
    question."""

    def __init__(self, dtype, rank, owned=False):
        self.dtype = _numpy().dtype(dtype)
        self.rank = rank
        self.owned = owned

    def ctype(self):
        return memref_descriptor_type(self.rank)

    def to_numpy(self, desc, read=_read_host):
        """A numpy copy of the memref `desc` describes. `read(address,
        nbytes)` returns the bytes at an address (a buffer object); the
        default reads host memory, fp4-run passes a device-to-host copy."""
        np = _numpy()
        itemsize = self.dtype.itemsize
        shape = tuple(desc.sizes) if self.rank else ()
        strides = tuple(s * itemsize for s in desc.strides) if self.rank else ()
        if any(d == 0 for d in shape):
            return np.zeros(shape, self.dtype)
        # Byte span from the lowest to the highest addressed element.
        lo = sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
        hi = sum(max(0, (d - 1) * s) for d, s in zip(shape, strides))
        base = desc.aligned + desc.offset * itemsize
        raw = read(base + lo, hi - lo + itemsize)
        view = np.ndarray(shape, self.dtype, buffer=raw, offset=-lo,
                          strides=strides)
        return view.copy()


_libc = None


def take_memref(spec, desc, read=_read_host):
    """Copies a returned memref into numpy; frees it if the caller said so."""
    global _libc
    array = spec.to_numpy(desc, read)
    if spec.owned and desc.allocated:
        if _libc is None:
            _libc = ctypes.CDLL(None)
            _libc.free.argtypes = [ctypes.c_void_p]
            _libc.free.restype = None
        _libc.free(desc.allocated)
    return array


def scalar_ctype(spec):
    """The ctypes type of a scalar result given as a numpy dtype or a ctypes
    type."""
    np = _numpy()
    if isinstance(spec, type) and issubclass(spec, ctypes._SimpleCData):
        return spec
    return np.ctypeslib.as_ctypes_type(np.dtype(spec))


def scalar_storage(value):
    """A ctypes value for a scalar argument (Python int is i64, float f64)."""
    np = _numpy()
    if isinstance(value, ctypes._SimpleCData):
        return value
    if isinstance(value, np.generic):
        return np.ctypeslib.as_ctypes_type(value.dtype)(value.item())
    if isinstance(value, bool):
        return ctypes.c_bool(value)
    if isinstance(value, int):
        return ctypes.c_int64(value)
    if isinstance(value, float):
        return ctypes.c_double(value)
    raise TypeError(f"unsupported argument {value!r}: pass numpy arrays, numpy "
                    "scalars (np.float32(1)), Python int/float or ctypes values")


class CallFrame:
    """Arguments and result storage of one call through `_mlir_ciface_<f>`.

    args: numpy arrays (passed as memref descriptors, without copy),
    ctypes.Structure descriptors built by the caller (memref_descriptor_type),
    numpy scalars, Python int (i64) / float (f64) / bool, or ctypes values.
    results: the function's result types in order: numpy dtypes or ctypes
    types for scalars, MemRef(dtype, rank) for memrefs.

    Memref results and multiple results come back through a pointer passed
    as the first argument; a single scalar result is the return value.
    Call with the direct convention (`argtypes`, `arguments`, `restype`) or
    with the packed one of MLIR's ExecutionEngine (`packed()`), then
    `finish()` converts the results."""

    def __init__(self, args, results=()):
        np = _numpy()
        self._keep = []  # storage the pointers below refer to
        self._specs = [spec if isinstance(spec, MemRef) else scalar_ctype(spec)
                       for spec in results]
        self.returns_via_pointer = len(self._specs) > 1 or (
            len(self._specs) == 1 and isinstance(self._specs[0], MemRef))
        self._result_storage = None
        self._arguments = []  # (ctypes object, by_pointer)
        if self.returns_via_pointer:
            if len(self._specs) == 1:
                self._result_storage = self._specs[0].ctype()()
            else:
                fields = [(f"r{i}", s.ctype() if isinstance(s, MemRef) else s)
                          for i, s in enumerate(self._specs)]
                self._result_storage = type("Results", (ctypes.Structure,),
                                            {"_fields_": fields})()
            self._arguments.append((self._result_storage, True))
        for value in args:
            if isinstance(value, np.ndarray):
                self._keep.append(value)
                self._arguments.append((descriptor_for(value), True))
            elif isinstance(value, ctypes.Structure):
                self._arguments.append((value, True))
            else:
                self._arguments.append((scalar_storage(value), False))

    # Direct calls ----------------------------------------------------------
    @property
    def argtypes(self):
        return [ctypes.c_void_p if by_pointer else type(obj)
                for obj, by_pointer in self._arguments]

    @property
    def arguments(self):
        return [ctypes.addressof(obj) if by_pointer else obj
                for obj, by_pointer in self._arguments]

    @property
    def restype(self):
        if self._specs and not self.returns_via_pointer:
            return self._specs[0]
        return None

    # Packed calls (ExecutionEngine: one array of pointers to the arguments,
    # then to the result slot of a scalar result) ---------------------------
    def packed(self):
        slots = []
        for obj, by_pointer in self._arguments:
            if by_pointer:
                pointer = ctypes.c_void_p(ctypes.addressof(obj))
                self._keep.append(pointer)
                slots.append(ctypes.addressof(pointer))
            else:
                slots.append(ctypes.addressof(obj))
        if self._specs and not self.returns_via_pointer:
            self._result_storage = self._specs[0]()
            slots.append(ctypes.addressof(self._result_storage))
        array = (ctypes.c_void_p * max(1, len(slots)))(*slots)
        self._keep.append(array)
        return array

    def finish(self, returned=None, read=_read_host):
        """None, the single result, or a tuple. `returned` is the return
        value of a direct call (a single scalar result); `read` as in
        MemRef.to_numpy."""
        if not self._specs:
            return None
        if not self.returns_via_pointer:
            if self._result_storage is not None:  # packed call
                return self._result_storage.value
            return returned
        if len(self._specs) == 1:
            return take_memref(self._specs[0], self._result_storage, read)
        values = []
        for i, spec in enumerate(self._specs):
            field = getattr(self._result_storage, f"r{i}")
            values.append(take_memref(spec, field, read)
                          if isinstance(spec, MemRef) else field)
        return tuple(values)

    def memref_results(self):
        """(spec, descriptor) of every memref result, in order."""
        if not self.returns_via_pointer:
            return []
        if len(self._specs) == 1:
            return [(self._specs[0], self._result_storage)]
        return [(spec, getattr(self._result_storage, f"r{i}"))
                for i, spec in enumerate(self._specs)
                if isinstance(spec, MemRef)]
