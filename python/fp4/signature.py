"""Function signatures for checked ExecutionEngine calls.

A call through `_mlir_ciface_<f>` passes raw pointers: a float64 array for
an f32 memref, a 3x64 array for a 4x64 memref, a Python float (f64) for an
f32 scalar or a missing result slot would be read as garbage or crash the
process. The LLVM dialect module the engine compiles no longer says what
the arguments were (pointers are opaque), so the signatures are read from
the module while it still has `func.func` ops: when it is parsed and before
and after every PassManager.run (the last one seen before lowering wins),
and ExecutionEngine.invoke checks every call against them.

A tensor argument is checked like the memref bufferization makes of it; an
`!fp4.tensor` argument stands for its component arrays (docs/ABI.md), as
convert-fp4-to-linalg expands it.
"""

import ctypes

__all__ = ["Signature", "Param", "read_signatures", "describe_array"]


class Param:
    """One C-interface parameter: a memref (dtype name, shape with None for
    a dynamic size) or a scalar (dtype name)."""

    def __init__(self, kind, element, shape, text):
        self.kind = kind  # "memref" or "scalar"
        self.element = element  # MLIR element type: "f32", "bf16", "i8", ...
        self.shape = shape  # tuple (None = dynamic) for memrefs
        self.text = text  # the MLIR type as printed

    @property
    def rank(self):
        return len(self.shape) if self.kind == "memref" else 0

    def __repr__(self):
        return self.text


class Signature:
    def __init__(self, name, inputs, results):
        self.name = name
        self.inputs = inputs
        self.results = results

    def __repr__(self):
        ins = ", ".join(map(repr, self.inputs))
        outs = ", ".join(map(repr, self.results))
        return f"@{self.name}({ins}) -> ({outs})"


# MLIR element type -> numpy dtype names an argument may have. Signless
# integers accept either signedness; bf16 and the 8-bit float formats also
# accept their raw bits (uint16 / uint8), since numpy has no such dtypes
# without ml_dtypes.
_ACCEPTED = {
    "f64": ("float64",), "f32": ("float32",), "f16": ("float16",),
    "bf16": ("bfloat16", "uint16"),
    "i64": ("int64", "uint64"), "index": ("int64",),
    "i32": ("int32", "uint32"), "i16": ("int16", "uint16"),
    "i8": ("int8", "uint8"), "i1": ("bool",),
    "f8E4M3FN": ("float8_e4m3fn", "uint8", "int8"),
    "f8E8M0FNU": ("float8_e8m0fnu", "uint8", "int8"),
    "f8E5M2": ("float8_e5m2", "uint8", "int8"),
    "f4E2M1FN": ("float4_e2m1fn", "uint8", "int8"),
}

_SCALAR_CTYPES = {
    "f64": ctypes.c_double, "f32": ctypes.c_float, "i64": ctypes.c_int64,
    "index": ctypes.c_int64, "i32": ctypes.c_int32, "i16": ctypes.c_int16,
    "i8": ctypes.c_int8, "i1": ctypes.c_bool,
}


def _type_params(ir, lib, ctx, c_type):
    """The C-interface parameters one MLIR type stands for."""
    text = ir._print_to_string(lib.mlirTypePrint, c_type)
    if lib.fp4TypeIsAQuantizedTensor(c_type):
        params = []
        for i in range(lib.fp4QuantizedTensorTypeGetNumComponents(c_type)):
            params += _type_params(
                ir, lib, ctx,
                lib.fp4QuantizedTensorTypeGetComponentType(c_type, i))
        return params
    if lib.mlirTypeIsAMemRef(c_type) or lib.mlirTypeIsARankedTensor(c_type):
        rank = lib.mlirShapedTypeGetRank(c_type)
        shape = tuple(None if lib.mlirShapedTypeIsDynamicDim(c_type, d)
                      else lib.mlirShapedTypeGetDimSize(c_type, d)
                      for d in range(rank))
        element = ir._print_to_string(
            lib.mlirTypePrint, lib.mlirShapedTypeGetElementType(c_type))
        return [Param("memref", element, shape, text)]
    return [Param("scalar", text, (), text)]


def read_signatures(module):
    """{name: Signature} of the module's top-level func.func ops ({} once
    the module is lowered to the LLVM dialect)."""
    from . import ir
    ctx = module.context
    lib = ctx._lib
    out = {}
    op = lib.mlirBlockGetFirstOperation(lib.mlirModuleGetBody(module._c))
    while op.ptr:
        name_id = lib.mlirOperationGetName(op)
        if lib.mlirIdentifierStr(name_id).str() == "func.func":
            sym = lib.mlirOperationGetAttributeByName(
                op, ir.MlirStringRef.of("sym_name"))
            fty = lib.mlirOperationGetAttributeByName(
                op, ir.MlirStringRef.of("function_type"))
            if sym.ptr and fty.ptr:
                ftype = lib.mlirTypeAttrGetValue(fty)
                inputs, results = [], []
                for i in range(lib.mlirFunctionTypeGetNumInputs(ftype)):
                    inputs += _type_params(
                        ir, lib, ctx, lib.mlirFunctionTypeGetInput(ftype, i))
                for i in range(lib.mlirFunctionTypeGetNumResults(ftype)):
                    results += _type_params(
                        ir, lib, ctx, lib.mlirFunctionTypeGetResult(ftype, i))
                name = lib.mlirStringAttrGetValue(sym).str()
                out[name] = Signature(name, inputs, results)
        op = lib.mlirOperationGetNextInBlock(op)
    return out


def describe_array(array):
    return f"{array.dtype.name} array of shape {tuple(array.shape)}"


def _shape_text(shape):
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"


def check_argument(fname, index, param, value, np):
    """Raises TypeError/ValueError when `value` does not fit `param`;
    returns the value to pass (a scalar converted to the parameter's C
    type)."""
    where = f"{fname}: argument {index}"
    if param.kind == "memref":
        if isinstance(value, ctypes.Structure):
            return value  # a descriptor the caller built: trusted
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{where} must be an array for {param.text}, got "
                            f"{type(value).__name__}")
        accepted = _ACCEPTED.get(param.element)
        if accepted is not None and value.dtype.name not in accepted:
            raise TypeError(f"{where} expects {param.text} (numpy "
                            f"{' or '.join(accepted)}), got "
                            f"{describe_array(value)}")
        if value.ndim != len(param.shape):
            raise ValueError(f"{where} expects {param.text} (rank "
                             f"{len(param.shape)}), got "
                             f"{describe_array(value)} (rank {value.ndim})")
        for dim, (want, got) in enumerate(zip(param.shape, value.shape)):
            if want is not None and want != got:
                raise ValueError(f"{where} expects {param.text} (shape "
                                 f"{_shape_text(param.shape)}), got "
                                 f"{describe_array(value)}: dimension {dim} "
                                 f"is {got}, not {want}")
        if not value.flags["C_CONTIGUOUS"]:
            raise ValueError(f"{where} ({param.text}) must be C-contiguous, "
                             f"got a strided view of shape "
                             f"{tuple(value.shape)} with strides "
                             f"{value.strides}: the compiled code assumes "
                             "the identity layout (use np.ascontiguousarray)")
        return value
    # Scalar parameter.
    if isinstance(value, np.ndarray):
        raise TypeError(f"{where} expects a scalar {param.text}, got "
                        f"{describe_array(value)}")
    ctype = _SCALAR_CTYPES.get(param.element)
    if ctype is None or isinstance(value, ctypes._SimpleCData):
        return value
    if param.element.startswith("f"):
        if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{where} expects {param.text}, got "
                            f"{type(value).__name__} {value!r}")
        return ctype(float(value))
    if isinstance(value, (float, np.floating)):
        raise TypeError(f"{where} expects the integer type {param.text}, got "
                        f"{type(value).__name__} {value!r}")
    if not isinstance(value, (int, np.integer, bool, np.bool_)):
        raise TypeError(f"{where} expects {param.text}, got "
                        f"{type(value).__name__} {value!r}")
    return ctype(int(value))


def check_results(fname, sig, results, memref_cls, np):
    """The result specs must match the function's results one to one."""
    want = ", ".join(p.text for p in sig.results) or "nothing"
    if len(results) != len(sig.results):
        hint = ""
        if not results:
            specs = ", ".join(
                f"ir.MemRef(np.{_ACCEPTED.get(p.element, ('uint8',))[0]}, "
                f"{p.rank})" if p.kind == "memref" else
                f"np.{_ACCEPTED.get(p.element, ('float32',))[0]}"
                for p in sig.results)
            hint = f": pass results=[{specs}]"
        raise TypeError(f"{fname} returns {len(sig.results)} result(s) "
                        f"({want}) but results= describes {len(results)}"
                        + hint)
    for i, (spec, param) in enumerate(zip(results, sig.results)):
        if param.kind == "memref":
            if not isinstance(spec, memref_cls):
                raise TypeError(f"{fname}: result {i} is {param.text}: "
                                f"describe it as ir.MemRef(dtype, "
                                f"{param.rank}), not {spec!r}")
            accepted = _ACCEPTED.get(param.element)
            if accepted is not None and spec.dtype.name not in accepted:
                raise TypeError(f"{fname}: result {i} is {param.text}, but "
                                f"results= says dtype {spec.dtype.name}")
            if spec.rank != param.rank:
                raise ValueError(f"{fname}: result {i} is {param.text} "
                                 f"(rank {param.rank}), but results= says "
                                 f"rank {spec.rank}")
        elif isinstance(spec, memref_cls):
            raise TypeError(f"{fname}: result {i} is the scalar "
                            f"{param.text}, not a memref")
