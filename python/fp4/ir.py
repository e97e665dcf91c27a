"""MLIR for fp4 from Python: contexts, modules, pass pipelines and a JIT.

Debian packages no MLIR Python bindings, so this module drives the MLIR C API
embedded in libFP4CAPI.so (include/fp4-c, plus the upstream mlir-c entry
points) through ctypes.

    from fp4 import ir
    ctx = ir.Context()
    module = ctx.parse_module(text)            # raises ir.MLIRError on bad IR
    ir.PassManager.parse("fp4-pipeline-cpu", ctx).run(module)
    engine = ir.ExecutionEngine(module, opt_level=2)
    engine.invoke("main", x, y, out)           # numpy arrays as memrefs

Every failure reported by MLIR (parse errors, verifier errors, pass
failures, bad pipelines, LLVM translation errors) raises MLIRError whose text
contains the MLIR diagnostics, which are not printed. (Symbol resolution
errors of LLVM's JIT linker bypass MLIR's diagnostics: LLVM prints them as
"JIT session error" on stderr, and the lookup then raises MLIRError.)

Object lifetimes: modules, types, attributes, pass managers and engines keep
their Context alive; closing a Context explicitly invalidates them.
"""

import ctypes
import os
import threading

from ._lib import load as load_library
from ._lib import cpu_runtime_libraries  # noqa: F401 (public)
from . import signature as _signature
from .memref import CallFrame, MemRef, memref_descriptor_type

__all__ = [
    "MLIRError", "Diagnostic", "Context", "Module", "Type", "Attribute",
    "QuantScheme", "MXFP4Attr", "NVFP4Attr", "HiF4Attr", "MXFP4MacroAttr",
    "QuantizedTensorType", "S1P2Type", "PassManager", "ExecutionEngine",
    "MemRef", "memref_descriptor_type", "run_pipeline",
]

# ---------------------------------------------------------------------------
# C declarations
# ---------------------------------------------------------------------------


def _handle(name):
    """An MLIR C API handle: a struct holding one pointer."""
    return type(name, (ctypes.Structure,), {"_fields_": [("ptr", ctypes.c_void_p)]})


MlirContext = _handle("MlirContext")
MlirDialectRegistry = _handle("MlirDialectRegistry")
MlirModule = _handle("MlirModule")
MlirOperation = _handle("MlirOperation")
MlirType = _handle("MlirType")
MlirAttribute = _handle("MlirAttribute")
MlirLocation = _handle("MlirLocation")
MlirDiagnostic = _handle("MlirDiagnostic")
MlirPassManager = _handle("MlirPassManager")
MlirOpPassManager = _handle("MlirOpPassManager")
MlirOpPrintingFlags = _handle("MlirOpPrintingFlags")
MlirExecutionEngine = _handle("MlirExecutionEngine")
MlirBlock = _handle("MlirBlock")
MlirIdentifier = _handle("MlirIdentifier")


class MlirStringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    @classmethod
    def of(cls, text):
        data = text.encode() if isinstance(text, str) else bytes(text)
        return cls(data, len(data))

    def str(self):
        if not self.data:
            return ""
        return ctypes.string_at(self.data, self.length).decode(errors="replace")


class MlirLogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


# The diagnostic handler receives MlirDiagnostic (a struct of one pointer) as
# a plain pointer: both are passed alike, and ctypes handles plain pointer
# arguments in callbacks more portably than structs by value.
_StringCallback = ctypes.CFUNCTYPE(None, MlirStringRef, ctypes.c_void_p)
# MlirLogicalResult (a struct of one int8) is returned like an int8.
_DiagnosticHandler = ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p,
                                      ctypes.c_void_p)

_c_bool = ctypes.c_bool
_i32, _u32, _i64 = ctypes.c_int32, ctypes.c_uint32, ctypes.c_int64
_intptr = ctypes.c_ssize_t
_vp = ctypes.c_void_p

_SIGNATURES = {
    # Context and registration (fp4-c/Registration.h, mlir-c/IR.h).
    "fp4ContextCreate": (MlirContext, [_c_bool]),
    "fp4RegisterAllPasses": (None, []),
    "mlirContextDestroy": (None, [MlirContext]),
    "mlirContextEnableMultithreading": (None, [MlirContext, _c_bool]),
    "mlirContextGetAllowUnregisteredDialects": (_c_bool, [MlirContext]),
    "mlirContextSetAllowUnregisteredDialects": (None, [MlirContext, _c_bool]),
    "mlirContextAttachDiagnosticHandler": (
        ctypes.c_uint64, [MlirContext, _DiagnosticHandler, _vp, _vp]),
    "mlirContextDetachDiagnosticHandler": (None, [MlirContext, ctypes.c_uint64]),
    # Diagnostics.
    "mlirDiagnosticPrint": (None, [MlirDiagnostic, _StringCallback, _vp]),
    "mlirDiagnosticGetLocation": (MlirLocation, [MlirDiagnostic]),
    "mlirDiagnosticGetSeverity": (ctypes.c_int, [MlirDiagnostic]),
    "mlirDiagnosticGetNumNotes": (_intptr, [MlirDiagnostic]),
    "mlirDiagnosticGetNote": (MlirDiagnostic, [MlirDiagnostic, _intptr]),
    "mlirLocationPrint": (None, [MlirLocation, _StringCallback, _vp]),
    "mlirLocationUnknownGet": (MlirLocation, [MlirContext]),
    # Modules and operations.
    "mlirModuleCreateParse": (MlirModule, [MlirContext, MlirStringRef]),
    "mlirModuleCreateParseFromFile": (MlirModule, [MlirContext, MlirStringRef]),
    "mlirModuleDestroy": (None, [MlirModule]),
    "mlirModuleGetOperation": (MlirOperation, [MlirModule]),
    "mlirModuleFromOperation": (MlirModule, [MlirOperation]),
    "mlirOperationClone": (MlirOperation, [MlirOperation]),
    "mlirOperationVerify": (_c_bool, [MlirOperation]),
    # Walking the top-level func.func ops for call signatures (signature.py).
    "mlirModuleGetBody": (MlirBlock, [MlirModule]),
    "mlirBlockGetFirstOperation": (MlirOperation, [MlirBlock]),
    "mlirOperationGetNextInBlock": (MlirOperation, [MlirOperation]),
    "mlirOperationGetName": (MlirIdentifier, [MlirOperation]),
    "mlirIdentifierStr": (MlirStringRef, [MlirIdentifier]),
    "mlirOperationGetAttributeByName": (
        MlirAttribute, [MlirOperation, MlirStringRef]),
    "mlirStringAttrGetValue": (MlirStringRef, [MlirAttribute]),
    "mlirTypeAttrGetValue": (MlirType, [MlirAttribute]),
    "mlirFunctionTypeGetNumInputs": (_intptr, [MlirType]),
    "mlirFunctionTypeGetInput": (MlirType, [MlirType, _intptr]),
    "mlirFunctionTypeGetNumResults": (_intptr, [MlirType]),
    "mlirFunctionTypeGetResult": (MlirType, [MlirType, _intptr]),
    "mlirTypeIsAMemRef": (_c_bool, [MlirType]),
    "mlirTypeIsARankedTensor": (_c_bool, [MlirType]),
    "mlirShapedTypeGetRank": (_i64, [MlirType]),
    "mlirShapedTypeIsDynamicDim": (_c_bool, [MlirType, _intptr]),
    "mlirShapedTypeGetDimSize": (_i64, [MlirType, _intptr]),
    "mlirShapedTypeGetElementType": (MlirType, [MlirType]),
    "mlirOperationPrintWithFlags": (
        None, [MlirOperation, MlirOpPrintingFlags, _StringCallback, _vp]),
    "mlirOpPrintingFlagsCreate": (MlirOpPrintingFlags, []),
    "mlirOpPrintingFlagsDestroy": (None, [MlirOpPrintingFlags]),
    "mlirOpPrintingFlagsPrintGenericOpForm": (None, [MlirOpPrintingFlags]),
    "mlirOpPrintingFlagsEnableDebugInfo": (
        None, [MlirOpPrintingFlags, _c_bool, _c_bool]),
    "mlirOpPrintingFlagsElideLargeElementsAttrs": (
        None, [MlirOpPrintingFlags, _intptr]),
    # Types and attributes.
    "mlirTypeParseGet": (MlirType, [MlirContext, MlirStringRef]),
    "mlirTypePrint": (None, [MlirType, _StringCallback, _vp]),
    "mlirTypeEqual": (_c_bool, [MlirType, MlirType]),
    "mlirAttributeParseGet": (MlirAttribute, [MlirContext, MlirStringRef]),
    "mlirAttributePrint": (None, [MlirAttribute, _StringCallback, _vp]),
    "mlirAttributeEqual": (_c_bool, [MlirAttribute, MlirAttribute]),
    "mlirShapedTypeGetDynamicSize": (_i64, []),
    # fp4 dialect (fp4-c/Dialects.h).
    "fp4AttributeIsAQuantScheme": (_c_bool, [MlirAttribute]),
    "fp4QuantSchemeGetFormatName": (MlirStringRef, [MlirAttribute]),
    "fp4QuantSchemeGetElementType": (MlirType, [MlirAttribute]),
    "fp4QuantSchemeGetBlockSize": (_i64, [MlirAttribute]),
    "fp4QuantSchemeGetAxisMultiple": (_i64, [MlirAttribute]),
    "fp4QuantSchemeGetBitsPerElement": (ctypes.c_double, [MlirAttribute]),
    "fp4QuantSchemeGetNumComponents": (_intptr, [MlirAttribute]),
    "fp4QuantSchemeGetComponentName": (MlirStringRef, [MlirAttribute, _intptr]),
    "fp4AttributeIsAMXFP4": (_c_bool, [MlirAttribute]),
    "fp4MXFP4AttrGet": (MlirAttribute, [MlirContext, _i64, _i32, _i32, _u32]),
    "fp4MXFP4AttrGetBlockSize": (_i64, [MlirAttribute]),
    "fp4MXFP4AttrGetScaleRounding": (_i32, [MlirAttribute]),
    "fp4MXFP4AttrGetRounding": (_i32, [MlirAttribute]),
    "fp4MXFP4AttrGetSeed": (_u32, [MlirAttribute]),
    "fp4AttributeIsANVFP4": (_c_bool, [MlirAttribute]),
    "fp4NVFP4AttrGet": (MlirAttribute, [MlirContext, _c_bool, _c_bool, _i32, _u32]),
    "fp4NVFP4AttrGetFourOverSix": (_c_bool, [MlirAttribute]),
    "fp4NVFP4AttrGetTile2d": (_c_bool, [MlirAttribute]),
    "fp4NVFP4AttrGetRounding": (_i32, [MlirAttribute]),
    "fp4NVFP4AttrGetSeed": (_u32, [MlirAttribute]),
    "fp4AttributeIsAHiF4": (_c_bool, [MlirAttribute]),
    "fp4HiF4AttrGet": (MlirAttribute, [MlirContext]),
    "fp4AttributeIsAMXFP4Macro": (_c_bool, [MlirAttribute]),
    "fp4MXFP4MacroAttrGet": (
        MlirAttribute, [MlirContext, _i64, _i64, _i32, _i32, _u32]),
    "fp4MXFP4MacroAttrGetMacroBlock": (_i64, [MlirAttribute]),
    "fp4MXFP4MacroAttrGetSearch": (_i64, [MlirAttribute]),
    "fp4MXFP4MacroAttrGetScaleRounding": (_i32, [MlirAttribute]),
    "fp4MXFP4MacroAttrGetRounding": (_i32, [MlirAttribute]),
    "fp4MXFP4MacroAttrGetSeed": (_u32, [MlirAttribute]),
    "fp4TypeIsAS1P2": (_c_bool, [MlirType]),
    "fp4S1P2TypeGet": (MlirType, [MlirContext]),
    "fp4TypeIsAQuantizedTensor": (_c_bool, [MlirType]),
    "fp4QuantizedTensorTypeGet": (
        MlirType, [_intptr, ctypes.POINTER(_i64), MlirAttribute, _i64]),
    "fp4QuantizedTensorTypeGetScheme": (MlirAttribute, [MlirType]),
    "fp4QuantizedTensorTypeGetAxis": (_i64, [MlirType]),
    "fp4QuantizedTensorTypeGetRank": (_intptr, [MlirType]),
    "fp4QuantizedTensorTypeGetDimSize": (_i64, [MlirType, _intptr]),
    "fp4QuantizedTensorTypeGetElementType": (MlirType, [MlirType]),
    "fp4QuantizedTensorTypeGetNumComponents": (_intptr, [MlirType]),
    "fp4QuantizedTensorTypeGetComponentType": (MlirType, [MlirType, _intptr]),
    # Pass manager (mlir-c/Pass.h).
    "mlirPassManagerCreate": (MlirPassManager, [MlirContext]),
    "mlirPassManagerDestroy": (None, [MlirPassManager]),
    "mlirPassManagerGetAsOpPassManager": (MlirOpPassManager, [MlirPassManager]),
    "mlirPassManagerRunOnOp": (MlirLogicalResult, [MlirPassManager, MlirOperation]),
    "mlirPassManagerEnableVerifier": (None, [MlirPassManager, _c_bool]),
    "mlirParsePassPipeline": (
        MlirLogicalResult, [MlirOpPassManager, MlirStringRef, _StringCallback, _vp]),
    "mlirPrintPassPipeline": (None, [MlirOpPassManager, _StringCallback, _vp]),
    # Execution engine (mlir-c/ExecutionEngine.h).
    "mlirExecutionEngineCreate": (
        MlirExecutionEngine,
        [MlirModule, ctypes.c_int, ctypes.c_int, ctypes.POINTER(MlirStringRef),
         _c_bool, _c_bool]),
    "mlirExecutionEngineInitialize": (None, [MlirExecutionEngine]),
    "mlirExecutionEngineDestroy": (None, [MlirExecutionEngine]),
    "mlirExecutionEngineLookupPacked": (_vp, [MlirExecutionEngine, MlirStringRef]),
    "mlirExecutionEngineLookup": (_vp, [MlirExecutionEngine, MlirStringRef]),
    "mlirExecutionEngineRegisterSymbol": (
        None, [MlirExecutionEngine, MlirStringRef, _vp]),
    "mlirExecutionEngineDumpToObjectFile": (
        None, [MlirExecutionEngine, MlirStringRef]),
}

_lib = None
_lib_lock = threading.Lock()


def _capi():
    """The C API library with every signature declared, loaded once."""
    global _lib
    with _lib_lock:
        if _lib is None:
            lib = load_library()
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            # Passes live in a process-wide registry; registering them once
            # lets every context parse textual pipelines.
            lib.fp4RegisterAllPasses()
            _lib = lib
        return _lib


class _StringCollector:
    """A MlirStringCallback that appends the printed chunks."""

    def __init__(self):
        self.chunks = []
        self.callback = _StringCallback(self._append)

    def _append(self, ref, _user_data):
        if ref.length:
            self.chunks.append(ctypes.string_at(ref.data, ref.length))

    def text(self):
        return b"".join(self.chunks).decode(errors="replace")


def _print_to_string(fn, *args):
    collector = _StringCollector()
    fn(*args, collector.callback, None)
    return collector.text()


# ---------------------------------------------------------------------------
# Diagnostics
# ---------------------------------------------------------------------------

_SEVERITIES = ("error", "warning", "note", "remark")


class Diagnostic:
    """One MLIR diagnostic, copied out of the C++ object while it lived."""

    def __init__(self, severity, location, message, notes):
        self.severity = severity
        self.location = location
        self.message = message
        self.notes = notes

    def __str__(self):
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        lines += ["  " + str(note).replace("\n", "\n  ") for note in self.notes]
        return "\n".join(lines)

    __repr__ = __str__


def _read_diagnostic(lib, diag):
    severity = lib.mlirDiagnosticGetSeverity(diag)
    location = _print_to_string(lib.mlirLocationPrint,
                                lib.mlirDiagnosticGetLocation(diag))
    message = _print_to_string(lib.mlirDiagnosticPrint, diag)
    notes = [_read_diagnostic(lib, lib.mlirDiagnosticGetNote(diag, i))
             for i in range(lib.mlirDiagnosticGetNumNotes(diag))]
    name = _SEVERITIES[severity] if 0 <= severity < len(_SEVERITIES) else "?"
    return Diagnostic(name, location, message, notes)


class MLIRError(Exception):
    """An MLIR operation failed; `diagnostics` holds what MLIR reported."""

    def __init__(self, message, diagnostics=()):
        self.diagnostics = list(diagnostics)
        details = "\n".join(str(d) for d in self.diagnostics)
        super().__init__(f"{message}\n{details}" if details else message)


# ---------------------------------------------------------------------------
# Context
# ---------------------------------------------------------------------------


class Context:
    """An MLIRContext with every fp4 and upstream dialect, extension and LLVM
    IR translation registered (fp4ContextCreate), and a diagnostic handler
    that records diagnostics for MLIRError instead of printing them."""

    def __init__(self, enable_threading=True, allow_unregistered_dialects=False):
        lib = _capi()
        self._lib = lib
        self._c = lib.fp4ContextCreate(bool(enable_threading))
        self._diagnostics = []
        # Pass pipelines may emit from worker threads.
        self._diag_lock = threading.Lock()
        self._handler = _DiagnosticHandler(self._on_diagnostic)
        self._handler_id = lib.mlirContextAttachDiagnosticHandler(
            self._c, self._handler, None, None)
        if allow_unregistered_dialects:
            lib.mlirContextSetAllowUnregisteredDialects(self._c, True)

    def _on_diagnostic(self, diag_ptr, _user_data):
        try:
            diag = _read_diagnostic(self._lib, MlirDiagnostic(diag_ptr))
            with self._diag_lock:
                self._diagnostics.append(diag)
        except Exception:  # never let a Python error unwind into C++
            pass
        return 1  # handled: do not fall through to the stderr printer

    def take_diagnostics(self):
        """Returns and clears the diagnostics recorded so far."""
        with self._diag_lock:
            diags, self._diagnostics = self._diagnostics, []
        return diags

    def _fail(self, message):
        raise MLIRError(message, self.take_diagnostics())

    def close(self):
        """Destroys the MLIRContext. Objects created in it become invalid."""
        if getattr(self, "_c", None) is not None and self._c.ptr:
            self._lib.mlirContextDetachDiagnosticHandler(self._c, self._handler_id)
            self._lib.mlirContextDestroy(self._c)
            self._c = MlirContext()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Parsing ---------------------------------------------------------------

    def parse_module(self, text):
        """Parses and verifies `text`; raises MLIRError with the diagnostics."""
        self.take_diagnostics()
        module = self._lib.mlirModuleCreateParse(self._c, MlirStringRef.of(text))
        if not module.ptr:
            self._fail("failed to parse the module")
        return Module(self, module)._record_signatures()

    def parse_file(self, path):
        """Parses and verifies the file at `path` (locations name the file)."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(path)
        self.take_diagnostics()
        module = self._lib.mlirModuleCreateParseFromFile(self._c,
                                                         MlirStringRef.of(path))
        if not module.ptr:
            self._fail(f"failed to parse {path}")
        return Module(self, module)._record_signatures()

    def parse_type(self, text):
        self.take_diagnostics()
        ty = self._lib.mlirTypeParseGet(self._c, MlirStringRef.of(text))
        if not ty.ptr:
            self._fail(f"failed to parse type '{text}'")
        return Type._wrap(self, ty)

    def parse_attribute(self, text):
        self.take_diagnostics()
        attr = self._lib.mlirAttributeParseGet(self._c, MlirStringRef.of(text))
        if not attr.ptr:
            self._fail(f"failed to parse attribute '{text}'")
        return Attribute._wrap(self, attr)


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------


class Module:
    """An owned builtin.module. Keeps its Context alive."""

    def __init__(self, context, c_module):
        self.context = context
        self._c = c_module
        # {name: signature.Signature}: what ExecutionEngine.invoke checks
        # calls against, taken while the module still has func.func ops.
        self.signatures = {}

    def _record_signatures(self):
        self.signatures.update(_signature.read_signatures(self))
        return self

    @property
    def _operation(self):
        return self.context._lib.mlirModuleGetOperation(self._c)

    def verify(self):
        """Runs the verifiers; raises MLIRError with their diagnostics."""
        ctx = self.context
        ctx.take_diagnostics()
        if not ctx._lib.mlirOperationVerify(self._operation):
            ctx._fail("module failed to verify")

    def clone(self):
        lib = self.context._lib
        op = lib.mlirOperationClone(self._operation)
        clone = Module(self.context, lib.mlirModuleFromOperation(op))
        clone.signatures = dict(self.signatures)
        return clone

    def to_string(self, generic=False, debug_info=False, large_elements_limit=None):
        lib = self.context._lib
        flags = lib.mlirOpPrintingFlagsCreate()
        try:
            if generic:
                lib.mlirOpPrintingFlagsPrintGenericOpForm(flags)
            if debug_info:
                lib.mlirOpPrintingFlagsEnableDebugInfo(flags, True, False)
            if large_elements_limit is not None:
                lib.mlirOpPrintingFlagsElideLargeElementsAttrs(
                    flags, large_elements_limit)
            return _print_to_string(lib.mlirOperationPrintWithFlags,
                                    self._operation, flags)
        finally:
            lib.mlirOpPrintingFlagsDestroy(flags)

    def __str__(self):
        return self.to_string()

    def __del__(self):
        try:
            if self._c.ptr and self.context._c.ptr:
                self.context._lib.mlirModuleDestroy(self._c)
            self._c = MlirModule()
        except Exception:
            pass


# ---------------------------------------------------------------------------
# Types and attributes
# ---------------------------------------------------------------------------


class Type:
    """A type owned by a Context (immutable, uniqued)."""

    def __init__(self, context, c_type):
        self.context = context
        self._c = c_type

    @staticmethod
    def _wrap(context, c_type):
        lib = context._lib
        if lib.fp4TypeIsAQuantizedTensor(c_type):
            return QuantizedTensorType(context, c_type)
        if lib.fp4TypeIsAS1P2(c_type):
            return S1P2Type(context, c_type)
        return Type(context, c_type)

    def __str__(self):
        return _print_to_string(self.context._lib.mlirTypePrint, self._c)

    def __repr__(self):
        return f"{type(self).__name__}({self})"

    def __eq__(self, other):
        return isinstance(other, Type) and bool(
            self.context._lib.mlirTypeEqual(self._c, other._c))

    def __hash__(self):
        return hash(self._c.ptr)


class Attribute:
    """An attribute owned by a Context (immutable, uniqued)."""

    def __init__(self, context, c_attr):
        self.context = context
        self._c = c_attr

    @staticmethod
    def _wrap(context, c_attr):
        lib = context._lib
        for cls in (MXFP4Attr, NVFP4Attr, HiF4Attr, MXFP4MacroAttr):
            if getattr(lib, cls._isa)(c_attr):
                return cls(context, c_attr)
        if lib.fp4AttributeIsAQuantScheme(c_attr):
            return QuantScheme(context, c_attr)
        return Attribute(context, c_attr)

    def __str__(self):
        return _print_to_string(self.context._lib.mlirAttributePrint, self._c)

    def __repr__(self):
        return f"{type(self).__name__}({self})"

    def __eq__(self, other):
        return isinstance(other, Attribute) and bool(
            self.context._lib.mlirAttributeEqual(self._c, other._c))

    def __hash__(self):
        return hash(self._c.ptr)


_SCALE_ROUNDING = {"floor": 0, "ceil": 1, "even": 2, "rceil": 3}
_ELEMENT_ROUNDING = {"rne": 0, "half_away": 1, "stochastic": 2}


def _enum_value(table, value, what):
    if isinstance(value, str):
        if value not in table:
            raise ValueError(f"unknown {what} '{value}' (expected one of "
                             f"{', '.join(table)})")
        return table[value]
    return int(value)


def _enum_name(table, value):
    for name, number in table.items():
        if number == value:
            return name
    return value


class QuantScheme(Attribute):
    """Any attribute implementing the fp4 QuantSchemeAttrInterface."""

    _isa = "fp4AttributeIsAQuantScheme"

    @property
    def format_name(self):
        return self.context._lib.fp4QuantSchemeGetFormatName(self._c).str()

    @property
    def element_type(self):
        return Type._wrap(self.context,
                          self.context._lib.fp4QuantSchemeGetElementType(self._c))

    @property
    def block_size(self):
        return self.context._lib.fp4QuantSchemeGetBlockSize(self._c)

    @property
    def axis_multiple(self):
        return self.context._lib.fp4QuantSchemeGetAxisMultiple(self._c)

    @property
    def bits_per_element(self):
        return self.context._lib.fp4QuantSchemeGetBitsPerElement(self._c)

    @property
    def component_names(self):
        lib = self.context._lib
        return [lib.fp4QuantSchemeGetComponentName(self._c, i).str()
                for i in range(lib.fp4QuantSchemeGetNumComponents(self._c))]

    @classmethod
    def _checked(cls, context, c_attr, what):
        if not c_attr.ptr:
            context._fail(f"invalid {what} parameters")
        return cls(context, c_attr)


class MXFP4Attr(QuantScheme):
    _isa = "fp4AttributeIsAMXFP4"

    @classmethod
    def get(cls, context, block_size=32, scale_rounding="floor", rounding="rne",
            seed=0):
        context.take_diagnostics()
        c_attr = context._lib.fp4MXFP4AttrGet(
            context._c, block_size,
            _enum_value(_SCALE_ROUNDING, scale_rounding, "scale rounding"),
            _enum_value(_ELEMENT_ROUNDING, rounding, "rounding"), seed)
        return cls._checked(context, c_attr, "#fp4.mxfp4")

    @property
    def scale_rounding(self):
        return _enum_name(_SCALE_ROUNDING,
                          self.context._lib.fp4MXFP4AttrGetScaleRounding(self._c))

    @property
    def rounding(self):
        return _enum_name(_ELEMENT_ROUNDING,
                          self.context._lib.fp4MXFP4AttrGetRounding(self._c))

    @property
    def seed(self):
        return self.context._lib.fp4MXFP4AttrGetSeed(self._c)


class NVFP4Attr(QuantScheme):
    _isa = "fp4AttributeIsANVFP4"

    @classmethod
    def get(cls, context, four_over_six=False, tile2d=False, rounding="rne",
            seed=0):
        context.take_diagnostics()
        c_attr = context._lib.fp4NVFP4AttrGet(
            context._c, bool(four_over_six), bool(tile2d),
            _enum_value(_ELEMENT_ROUNDING, rounding, "rounding"), seed)
        return cls._checked(context, c_attr, "#fp4.nvfp4")

    @property
    def four_over_six(self):
        return bool(self.context._lib.fp4NVFP4AttrGetFourOverSix(self._c))

    @property
    def tile2d(self):
        return bool(self.context._lib.fp4NVFP4AttrGetTile2d(self._c))

    @property
    def rounding(self):
        return _enum_name(_ELEMENT_ROUNDING,
                          self.context._lib.fp4NVFP4AttrGetRounding(self._c))

    @property
    def seed(self):
        return self.context._lib.fp4NVFP4AttrGetSeed(self._c)


class HiF4Attr(QuantScheme):
    _isa = "fp4AttributeIsAHiF4"

    @classmethod
    def get(cls, context):
        return cls(context, context._lib.fp4HiF4AttrGet(context._c))


class MXFP4MacroAttr(QuantScheme):
    _isa = "fp4AttributeIsAMXFP4Macro"

    @classmethod
    def get(cls, context, macro_block=256, search=0, scale_rounding="floor",
            rounding="rne", seed=0):
        context.take_diagnostics()
        c_attr = context._lib.fp4MXFP4MacroAttrGet(
            context._c, macro_block, search,
            _enum_value(_SCALE_ROUNDING, scale_rounding, "scale rounding"),
            _enum_value(_ELEMENT_ROUNDING, rounding, "rounding"), seed)
        return cls._checked(context, c_attr, "#fp4.mxfp4_macro")

    @property
    def macro_block(self):
        return self.context._lib.fp4MXFP4MacroAttrGetMacroBlock(self._c)

    @property
    def search(self):
        return self.context._lib.fp4MXFP4MacroAttrGetSearch(self._c)

    @property
    def scale_rounding(self):
        return _enum_name(
            _SCALE_ROUNDING,
            self.context._lib.fp4MXFP4MacroAttrGetScaleRounding(self._c))

    @property
    def rounding(self):
        return _enum_name(_ELEMENT_ROUNDING,
                          self.context._lib.fp4MXFP4MacroAttrGetRounding(self._c))

    @property
    def seed(self):
        return self.context._lib.fp4MXFP4MacroAttrGetSeed(self._c)


class S1P2Type(Type):
    """!fp4.s1p2, the HiF4 element type."""

    @classmethod
    def get(cls, context):
        return cls(context, context._lib.fp4S1P2TypeGet(context._c))


class QuantizedTensorType(Type):
    """!fp4.tensor<shape x element, scheme, axis = A>."""

    @classmethod
    def get(cls, shape, scheme, axis):
        """`shape` may contain None for dynamic dimensions."""
        if not isinstance(scheme, Attribute):
            raise TypeError("scheme must be an fp4.ir.Attribute")
        context = scheme.context
        lib = context._lib
        dynamic = lib.mlirShapedTypeGetDynamicSize()
        dims = (_i64 * len(shape))(*[dynamic if d is None else int(d)
                                     for d in shape])
        context.take_diagnostics()
        c_type = lib.fp4QuantizedTensorTypeGet(len(shape), dims, scheme._c, axis)
        if not c_type.ptr:
            context._fail("invalid !fp4.tensor parameters")
        return cls(context, c_type)

    @property
    def scheme(self):
        return Attribute._wrap(
            self.context, self.context._lib.fp4QuantizedTensorTypeGetScheme(self._c))

    @property
    def axis(self):
        return self.context._lib.fp4QuantizedTensorTypeGetAxis(self._c)

    @property
    def shape(self):
        """Dimensions, None for dynamic ones."""
        lib = self.context._lib
        dynamic = lib.mlirShapedTypeGetDynamicSize()
        dims = [lib.fp4QuantizedTensorTypeGetDimSize(self._c, i)
                for i in range(lib.fp4QuantizedTensorTypeGetRank(self._c))]
        return [None if d == dynamic else d for d in dims]

    @property
    def element_type(self):
        return Type._wrap(
            self.context,
            self.context._lib.fp4QuantizedTensorTypeGetElementType(self._c))

    @property
    def component_types(self):
        lib = self.context._lib
        return [Type._wrap(self.context,
                           lib.fp4QuantizedTensorTypeGetComponentType(self._c, i))
                for i in range(lib.fp4QuantizedTensorTypeGetNumComponents(self._c))]


# ---------------------------------------------------------------------------
# Pass pipelines
# ---------------------------------------------------------------------------


def _anchor(pipeline):
    """Textual pipelines given without an anchor run on the module."""
    text = pipeline.strip()
    if text.startswith("builtin.module(") or text.startswith("any("):
        return text
    return f"builtin.module({text})"


class PassManager:
    """A textual pass pipeline bound to a Context.

    `pipeline` is either anchored ("builtin.module(canonicalize,cse)") or a
    bare list of passes, which is anchored on the module
    ("fp4-pipeline-cpu", "func.func(canonicalize),convert-to-llvm")."""

    def __init__(self, context, pipeline, verify_each=True):
        lib = context._lib
        self.context = context
        self._c = lib.mlirPassManagerCreate(context._c)
        errors = _StringCollector()
        context.take_diagnostics()
        result = lib.mlirParsePassPipeline(
            lib.mlirPassManagerGetAsOpPassManager(self._c),
            MlirStringRef.of(_anchor(pipeline)), errors.callback, None)
        if not result.value:
            lib.mlirPassManagerDestroy(self._c)
            self._c = MlirPassManager()
            raise MLIRError(f"invalid pass pipeline '{pipeline}': "
                            f"{errors.text().strip()}",
                            context.take_diagnostics())
        lib.mlirPassManagerEnableVerifier(self._c, bool(verify_each))

    @classmethod
    def parse(cls, pipeline, context, verify_each=True):
        return cls(context, pipeline, verify_each)

    def __str__(self):
        lib = self.context._lib
        return _print_to_string(lib.mlirPrintPassPipeline,
                                lib.mlirPassManagerGetAsOpPassManager(self._c))

    def run(self, module):
        """Runs the pipeline on `module` in place; raises MLIRError."""
        if module.context is not self.context:
            raise ValueError("module and pass manager use different contexts")
        ctx = self.context
        # Signatures before and after: a pipeline that lowers to the LLVM
        # dialect in one go leaves the types of the input, one that stops
        # earlier those it bufferized to.
        module._record_signatures()
        ctx.take_diagnostics()
        result = ctx._lib.mlirPassManagerRunOnOp(self._c, module._operation)
        if not result.value:
            ctx._fail("pass pipeline failed")
        return module._record_signatures()

    def __del__(self):
        try:
            if self._c.ptr and self.context._c.ptr:
                self.context._lib.mlirPassManagerDestroy(self._c)
            self._c = MlirPassManager()
        except Exception:
            pass


def run_pipeline(module, pipeline, verify_each=True):
    """Runs a textual pipeline on `module` in place and returns it."""
    return PassManager(module.context, pipeline, verify_each).run(module)


# ---------------------------------------------------------------------------
# Execution engine
# ---------------------------------------------------------------------------


# Memref descriptors and C-interface calls live in fp4.memref (no MLIR
# needed); MemRef and memref_descriptor_type stay importable from here.


def _numpy():
    import numpy
    return numpy


def _from_torch(fname, index, value):
    """A CPU torch tensor as the numpy array sharing its memory (bf16 as
    its uint16 bits); other values unchanged. torch is only consulted when
    the value is a torch tensor, so it is never imported otherwise."""
    if type(value).__module__.split(".")[0] != "torch":
        return value
    import torch
    if not isinstance(value, torch.Tensor):
        return value
    if value.device.type != "cpu":
        raise TypeError(f"{fname}: argument {index} is a {value.device.type} "
                        "tensor; the ExecutionEngine runs on the CPU (pass "
                        ".cpu(), or use fp4.gpu for device code)")
    value = value.detach()
    if value.dtype == torch.bfloat16:
        return value.view(torch.int16).numpy().view("uint16")
    return value.numpy()


# Engines that loaded MLIR's async runtime, kept (with their contexts) until
# the process exits: see ExecutionEngine.__init__.
_KEPT_ENGINES = []


class ExecutionEngine:
    """JIT-compiles a module in the LLVM dialect and calls its functions.

    Functions are called through their C interface: lower with
    `func.func(llvm-request-c-wrappers)` (or put `llvm.emit_c_interface` on
    the functions) before converting to LLVM. fp4-pipeline-cpu keeps the
    attribute of functions that carry it."""

    def __init__(self, module, opt_level=2, shared_libs=(), enable_object_dump=False):
        ctx = module.context
        lib = ctx._lib
        self.context = ctx
        self._module = module
        self.signatures = dict(getattr(module, "signatures", {}))
        paths = [os.fspath(p) for p in shared_libs]
        for path in paths:
            if not os.path.exists(path):
                raise FileNotFoundError(f"shared library not found: {path}")
        c_paths = (MlirStringRef * max(1, len(paths)))(
            *[MlirStringRef.of(p) for p in paths])
        ctx.take_diagnostics()
        self._c = lib.mlirExecutionEngineCreate(
            module._c, int(opt_level), len(paths), c_paths,
            bool(enable_object_dump), False)
        if not self._c.ptr:
            ctx._fail("failed to create the execution engine (is the module "
                      "fully lowered to the LLVM dialect?)")
        lib.mlirExecutionEngineInitialize(self._c)
        # Unloading MLIR's async runtime (what destroying an engine that
        # loaded it does) runs its __mlir_execution_engine_destroy, which
        # resets the process-wide default runtime for good: the library
        # stays mapped, and the next engine's first parallel loop calls
        # through a null runtime and crashes. So such an engine is never
        # destroyed; __del__ parks its handle in _KEPT_ENGINES instead.
        self._keep = any(os.path.basename(p).startswith("libmlir_async_runtime")
                         for p in paths)

    def lookup(self, name):
        """Address of the packed wrapper `_mlir_<name>`, or None."""
        return self.context._lib.mlirExecutionEngineLookupPacked(
            self._c, MlirStringRef.of(name)) or None

    def raw_lookup(self, name):
        """Address of the symbol `name` itself, or None."""
        return self.context._lib.mlirExecutionEngineLookup(
            self._c, MlirStringRef.of(name)) or None

    def register_symbol(self, name, address):
        self.context._lib.mlirExecutionEngineRegisterSymbol(
            self._c, MlirStringRef.of(name), address)

    def dump_to_object_file(self, path):
        self.context._lib.mlirExecutionEngineDumpToObjectFile(
            self._c, MlirStringRef.of(os.fspath(path)))

    def invoke(self, name, *args, results=()):
        """Calls `_mlir_ciface_<name>`.

        args: numpy arrays (passed as memrefs, without copy: outputs written
        by the function land in the arrays), CPU torch tensors (through
        .numpy(), sharing memory), numpy scalars, Python int / float / bool,
        or ctypes values.
        results: the function's result types in order: numpy dtypes or
        ctypes types for scalars, MemRef(dtype, rank) for memrefs. Returns
        None, the single result, or a tuple.

        When the module's func.func signature was seen (it was parsed or
        run through a PassManager before it was lowered: Module.signatures),
        every argument is checked against it first: count (TypeError),
        dtype (TypeError), rank, static sizes and C-contiguity
        (ValueError), scalars are converted to the parameter's C type, and
        results= must describe every result (TypeError), so a bad call
        raises instead of reading garbage or crashing."""
        func = self.lookup("_mlir_ciface_" + name)
        if func is None:
            raise MLIRError(
                f"cannot find or link _mlir_ciface_{name} in the JIT: mark "
                f"'{name}' llvm.emit_c_interface (or run "
                "func.func(llvm-request-c-wrappers)) before lowering, and pass "
                "the libraries its callees live in as shared_libs")
        args = [_from_torch(name, i, a) for i, a in enumerate(args)]
        sig = self.signatures.get(name)
        if sig is not None:
            np = _numpy()
            if len(args) != len(sig.inputs):
                raise TypeError(
                    f"{name} takes {len(sig.inputs)} argument(s) "
                    f"({', '.join(p.text for p in sig.inputs) or 'none'}), "
                    f"got {len(args)}")
            args = [_signature.check_argument(name, i, p, a, np)
                    for i, (p, a) in enumerate(zip(sig.inputs, args))]
            _signature.check_results(name, sig, list(results), MemRef, np)
        else:
            # Unchecked (an LLVM-dialect module parsed as such): at least
            # arrays must be contiguous, which descriptor_for enforces.
            pass
        frame = CallFrame(args, results)
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(func)(frame.packed())
        return frame.finish()

    def __del__(self):
        try:
            if self._c.ptr:
                if getattr(self, "_keep", False):
                    _KEPT_ENGINES.append((self._c, self.context))
                else:
                    self.context._lib.mlirExecutionEngineDestroy(self._c)
            self._c = MlirExecutionEngine()
        except Exception:
            pass
