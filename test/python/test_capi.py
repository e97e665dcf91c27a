"""The C API (libFP4CAPI.so) through the Python package fp4.ir: fp4 types and
attributes from C and from text, module parse/print round trips, textual
pass pipelines, MLIR errors as Python exceptions, and the JIT on numpy data.

The library comes from $FP4_LIB_DIR, else $FP4_BUILD_DIR/lib (default
/work/main/build/lib).
"""

import os
import sys

import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import ir  # noqa: E402
from fp4 import reference as ref  # noqa: E402


@pytest.fixture
def ctx():
    with ir.Context() as context:
        yield context


# ---------------------------------------------------------------------------
# Types and attributes
# ---------------------------------------------------------------------------

# (as written, as printed): defaults are elided, parameters reordered.
TYPE_ROUND_TRIPS = [
    ("!fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>",
     "!fp4.tensor<4096x4096xf4E2M1FN, #fp4.mxfp4, axis = 1>"),
    ("!fp4.tensor<?x256xf4E2M1FN, #fp4.mxfp4<block_size = 32, scale_rounding = floor, rounding = rne>, axis = 1>",
     "!fp4.tensor<?x256xf4E2M1FN, #fp4.mxfp4, axis = 1>"),
    ("!fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4<seed = 7, rounding = stochastic, scale_rounding = even, block_size = 16>, axis = 1>",
     "!fp4.tensor<2x64xf4E2M1FN, #fp4.mxfp4<block_size = 16, scale_rounding = even, rounding = stochastic, seed = 7>, axis = 1>"),
    ("!fp4.tensor<?x?x256xf4E2M1FN, #fp4.nvfp4<tile2d = false, four_over_six = true>, axis = 2>",
     "!fp4.tensor<?x?x256xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 2>"),
    ("!fp4.tensor<128x512x!fp4.s1p2, #fp4.hif4, axis = 0>",
     "!fp4.tensor<128x512x!fp4.s1p2, #fp4.hif4, axis = 0>"),
    ("!fp4.tensor<8x1024xf4E2M1FN, #fp4.mxfp4_macro<search = 8, macro_block = 128>, axis = 1>",
     "!fp4.tensor<8x1024xf4E2M1FN, #fp4.mxfp4_macro<macro_block = 128, search = 8>, axis = 1>"),
]


@pytest.mark.parametrize("text,printed", TYPE_ROUND_TRIPS)
def test_type_parse_print_round_trip(ctx, text, printed):
    ty = ctx.parse_type(text)
    assert isinstance(ty, ir.QuantizedTensorType)
    assert str(ty) == printed
    again = ctx.parse_type(str(ty))
    assert again == ty
    # Rebuilt from its parts through the C constructors: the same uniqued type.
    rebuilt = ir.QuantizedTensorType.get(ty.shape, ty.scheme, ty.axis)
    assert rebuilt == ty
    assert str(rebuilt) == printed


def test_type_accessors(ctx):
    ty = ctx.parse_type(
        "!fp4.tensor<?x256xf4E2M1FN, #fp4.nvfp4<four_over_six = true>, axis = 1>")
    assert ty.shape == [None, 256]
    assert ty.axis == 1
    assert str(ty.element_type) == "f4E2M1FN"
    scheme = ty.scheme
    assert isinstance(scheme, ir.NVFP4Attr)
    assert scheme.format_name == "nvfp4"
    assert scheme.four_over_six and not scheme.tile2d
    assert scheme.block_size == 16
    assert scheme.axis_multiple == 16
    assert scheme.bits_per_element == 4.5
    assert scheme.component_names == ["codes", "scales", "tensor_scale"]
    assert [str(t) for t in ty.component_types] == [
        "tensor<?x128xi8>", "tensor<?x16xi8>", "tensor<f32>"]

    hif4 = ctx.parse_type("!fp4.tensor<64x8x!fp4.s1p2, #fp4.hif4, axis = 0>")
    assert isinstance(hif4.element_type, ir.S1P2Type)
    assert hif4.element_type == ir.S1P2Type.get(ctx)
    assert isinstance(hif4.scheme, ir.HiF4Attr)
    assert hif4.scheme.component_names == ["codes", "metadata"]


def test_attribute_constructors_match_parser(ctx):
    cases = [
        (ir.MXFP4Attr.get(ctx), "#fp4.mxfp4"),
        (ir.MXFP4Attr.get(ctx, block_size=16, scale_rounding="rceil",
                          rounding="half_away"),
         "#fp4.mxfp4<block_size = 16, scale_rounding = rceil, rounding = half_away>"),
        (ir.MXFP4Attr.get(ctx, rounding="stochastic", seed=42),
         "#fp4.mxfp4<rounding = stochastic, seed = 42>"),
        (ir.NVFP4Attr.get(ctx, tile2d=True), "#fp4.nvfp4<tile2d = true>"),
        (ir.HiF4Attr.get(ctx), "#fp4.hif4"),
        (ir.MXFP4MacroAttr.get(ctx, macro_block=0, scale_rounding="even"),
         "#fp4.mxfp4_macro<macro_block = 0, scale_rounding = even>"),
    ]
    for attr, text in cases:
        assert str(attr) == text
        assert ctx.parse_attribute(text) == attr

    mx = ir.MXFP4Attr.get(ctx, block_size=64, scale_rounding="ceil",
                          rounding="stochastic", seed=3)
    assert (mx.block_size, mx.scale_rounding, mx.rounding, mx.seed) == (
        64, "ceil", "stochastic", 3)
    macro = ir.MXFP4MacroAttr.get(ctx, macro_block=512, search=4)
    assert (macro.macro_block, macro.search, macro.axis_multiple) == (512, 4, 512)
    assert macro.component_names == ["codes", "scales", "factors"]
    # Non-fp4 attributes are plain Attributes.
    plain = ctx.parse_attribute("42 : i32")
    assert type(plain) is ir.Attribute


def test_invalid_parameters_raise_with_diagnostic(ctx):
    with pytest.raises(ir.MLIRError, match="block_size must be an even number"):
        ir.MXFP4Attr.get(ctx, block_size=33)
    with pytest.raises(ir.MLIRError, match="invalid scale rounding 9"):
        ir.MXFP4Attr.get(ctx, scale_rounding=9)
    with pytest.raises(ir.MLIRError, match="invalid element rounding -1"):
        ir.NVFP4Attr.get(ctx, rounding=-1)
    with pytest.raises(ValueError, match="unknown scale rounding 'round'"):
        ir.MXFP4Attr.get(ctx, scale_rounding="round")
    mx = ir.MXFP4Attr.get(ctx)
    with pytest.raises(ir.MLIRError, match="not a multiple of 32"):
        ir.QuantizedTensorType.get([4, 100], mx, 1)
    with pytest.raises(ir.MLIRError, match="out of range"):
        ir.QuantizedTensorType.get([4, 64], mx, 2)
    with pytest.raises(ir.MLIRError, match="must have a static size"):
        ir.QuantizedTensorType.get([4, None], mx, 1)
    with pytest.raises(ir.MLIRError,
                       match="expected a quantization scheme attribute"):
        ir.QuantizedTensorType.get([4, 64], ctx.parse_attribute("42 : i32"), 1)
    with pytest.raises(ir.MLIRError, match="failed to parse type"):
        ctx.parse_type("!fp4.tensor<4x64xf32, #fp4.mxfp4, axis = 1>")
    # The context is still usable after errors.
    assert str(ir.QuantizedTensorType.get([4, 64], mx, 1)) == \
        "!fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>"


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------

FP4_MODULE = """
func.func @roundtrip(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  %c, %s = fp4.unpack %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1> -> tensor<4x32xi8>, tensor<4x2xi8>
  %p = fp4.pack %c, %s : tensor<4x32xi8>, tensor<4x2xi8> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>
  %d = fp4.dequantize %p : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1> -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}
"""


def test_module_print_parse_round_trip(ctx):
    module = ctx.parse_module(FP4_MODULE)
    text = str(module)
    assert "fp4.quantize %arg0 : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4<scale_rounding = even>, axis = 1>" in text
    assert "fp4.unpack" in text and "fp4.pack" in text
    assert str(ctx.parse_module(text)) == text
    generic = module.to_string(generic=True)
    assert '"fp4.quantize"' in generic
    assert str(ctx.parse_module(generic)) == text
    module.verify()
    assert str(module.clone()) == text


def test_parse_file_reports_file_locations(ctx, tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(FP4_MODULE)
    assert "fp4.quantize" in str(ctx.parse_file(path))
    path.write_text(FP4_MODULE.replace("axis = 1>\n  %c", "axis = 3>\n  %c"))
    with pytest.raises(ir.MLIRError) as info:
        ctx.parse_file(path)
    assert str(path) in info.value.diagnostics[0].location
    assert "out of range" in str(info.value)


def test_parse_error_is_an_exception_with_location(ctx):
    with pytest.raises(ir.MLIRError) as info:
        ctx.parse_module("func.func @f() {\n  %0 = fp4.bogus\n  return\n}\n")
    err = info.value
    assert "custom op 'fp4.bogus' is unknown" in str(err)
    assert err.diagnostics[0].severity == "error"
    assert ":2:" in err.diagnostics[0].location


def test_verifier_error_is_an_exception(ctx):
    with pytest.raises(ir.MLIRError) as info:
        ctx.parse_module("""
          func.func @f(%q: !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1>) -> tensor<4x32xf32> {
            %d = fp4.dequantize %q : !fp4.tensor<4x64xf4E2M1FN, #fp4.mxfp4, axis = 1> -> tensor<4x32xf32>
            return %d : tensor<4x32xf32>
          }""")
    (diag,) = info.value.diagnostics
    assert diag.severity == "error"
    assert "'fp4.dequantize' op result shape [4, 32] does not match input " \
        "shape [4, 64]" in diag.message
    assert ":3:18" in diag.location


# ---------------------------------------------------------------------------
# Pass pipelines
# ---------------------------------------------------------------------------


def test_pass_pipeline_runs(ctx):
    module = ctx.parse_module("""
      func.func @f(%a: i32) -> i32 {
        %c0 = arith.constant 0 : i32
        %dead = arith.muli %a, %a : i32
        %r = arith.addi %a, %c0 : i32
        return %r : i32
      }""")
    ir.run_pipeline(module, "canonicalize,cse")
    text = str(module)
    assert "arith.muli" not in text and "arith.addi" not in text
    assert "return %arg0 : i32" in text
    # An anchored pipeline works the same way and prints back.
    pm = ir.PassManager.parse("builtin.module(func.func(canonicalize))", ctx)
    assert "func.func(canonicalize" in str(pm)
    pm.run(module)


def test_fp4_quantize_pass_through_c_api(ctx):
    module = ctx.parse_module("""
      func.func @mm(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>) -> tensor<8x16xf32> {
        %zero = arith.constant 0.0 : f32
        %e = tensor.empty() : tensor<8x16xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
        %r = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>)
                           outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
        return %r : tensor<8x16xf32>
      }""")
    ir.run_pipeline(module, "fp4-quantize{scheme=hif4},canonicalize")
    text = str(module)
    assert "fp4.matmul" in text
    assert "linalg.matmul" not in text
    assert "#fp4.hif4" in text


def test_bad_pipeline_raises(ctx):
    with pytest.raises(ir.MLIRError, match="'no-such-pass' does not refer to a "
                                           "registered pass"):
        ir.PassManager.parse("canonicalize,no-such-pass", ctx)
    with pytest.raises(ir.MLIRError, match="no-such-option"):
        ir.PassManager.parse("canonicalize{no-such-option=1}", ctx)
    with pytest.raises(ir.MLIRError, match="invalid pass pipeline"):
        ir.PassManager.parse("builtin.module(canonicalize", ctx)


def test_failing_pass_raises_with_diagnostic(ctx):
    module = ctx.parse_module("""
      func.func @f(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
        %c = arith.constant dense<1.0> : tensor<4x64xf32>
        %r = arith.addf %x, %c : tensor<4x64xf32>
        return %r : tensor<4x64xf32>
      }""")
    before = str(module)
    with pytest.raises(ir.MLIRError) as info:
        ir.run_pipeline(module, "fp4-quantize{scheme=#fp4.nosuchscheme}")
    assert "pass pipeline failed" in str(info.value)
    assert any(d.severity == "error" for d in info.value.diagnostics)
    assert "fp4-quantize" in str(info.value)
    assert str(module) == before


# ---------------------------------------------------------------------------
# JIT
# ---------------------------------------------------------------------------

UPSTREAM_TO_LLVM = ("func.func(llvm-request-c-wrappers),convert-linalg-to-loops,"
                    "expand-strided-metadata,finalize-memref-to-llvm,"
                    "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts")


def test_jit_numpy_memrefs(ctx):
    module = ctx.parse_module("""
      func.func @axpy(%a: f32, %x: memref<?x4xf32>, %y: memref<?x4xf32>) {
        linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                         affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
            ins(%x : memref<?x4xf32>) outs(%y : memref<?x4xf32>) {
        ^bb0(%xv: f32, %yv: f32):
          %m = arith.mulf %a, %xv : f32
          %s = arith.addf %m, %yv : f32
          linalg.yield %s : f32
        }
        return
      }
      func.func @dot(%x: memref<?xf64>, %y: memref<?xf64>) -> f64 {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %n = memref.dim %x, %c0 : memref<?xf64>
        %z = arith.constant 0.0 : f64
        %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> f64 {
          %a = memref.load %x[%i] : memref<?xf64>
          %b = memref.load %y[%i] : memref<?xf64>
          %p = arith.mulf %a, %b : f64
          %s = arith.addf %acc, %p : f64
          scf.yield %s : f64
        }
        return %r : f64
      }
      func.func @iota(%n: index) -> memref<?xi32> {
        %m = memref.alloc(%n) : memref<?xi32>
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        scf.for %i = %c0 to %n step %c1 {
          %v = arith.index_cast %i : index to i32
          memref.store %v, %m[%i] : memref<?xi32>
        }
        return %m : memref<?xi32>
      }""")
    ir.run_pipeline(module, UPSTREAM_TO_LLVM)
    engine = ir.ExecutionEngine(module, opt_level=2)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y = rng.standard_normal((5, 4)).astype(np.float32)
    expected = np.float32(0.5) * x + y
    engine.invoke("axpy", np.float32(0.5), x, y)
    np.testing.assert_array_equal(y, expected)

    a = rng.standard_normal(100)
    b = rng.standard_normal(100)
    got = engine.invoke("dot", a, b, results=[np.float64])
    assert got == pytest.approx(float(np.dot(a, b)), rel=1e-12)

    iota = engine.invoke("iota", 7, results=[ir.MemRef(np.int32, rank=1)])
    np.testing.assert_array_equal(iota, np.arange(7, dtype=np.int32))
    for _ in range(3):  # a fresh allocation each call, freed by owned=True
        iota = engine.invoke("iota", 1000,
                             results=[ir.MemRef(np.int32, rank=1, owned=True)])
        np.testing.assert_array_equal(iota, np.arange(1000, dtype=np.int32))

    with pytest.raises(ValueError, match="C-contiguous"):
        engine.invoke("axpy", np.float32(1), x.T.copy().T, y)
    with pytest.raises(ir.MLIRError, match="_mlir_ciface_missing"):
        engine.invoke("missing")


def test_jit_rejects_unlowered_module(ctx):
    module = ctx.parse_module("""
      func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
        return %x : tensor<4xf32>
      }""")
    with pytest.raises(ir.MLIRError) as info:
        ir.ExecutionEngine(module)
    assert "failed to create the execution engine" in str(info.value)
    (diag,) = info.value.diagnostics
    assert "cannot be converted to LLVM IR" in diag.message
    assert diag.location.endswith(':2:7)')


QDQ_MODULE = """
func.func @qdq(%x: tensor<4x64xf32>) -> tensor<4x64xf32> attributes {llvm.emit_c_interface} {
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, SCHEME, axis = 1>
  %d = fp4.dequantize %q : !fp4.tensor<4x64xf4E2M1FN, SCHEME, axis = 1> -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}

func.func @codes(%in: memref<4x64xf32>, %codes: memref<4x32xi8>, %scales: memref<4x2xi8>)
    attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %in restrict : memref<4x64xf32> to tensor<4x64xf32>
  %q = fp4.quantize %x : tensor<4x64xf32> -> !fp4.tensor<4x64xf4E2M1FN, SCHEME, axis = 1>
  %c, %s = fp4.unpack %q : !fp4.tensor<4x64xf4E2M1FN, SCHEME, axis = 1> -> tensor<4x32xi8>, tensor<4x2xi8>
  bufferization.materialize_in_destination %c in restrict writable %codes
      : (tensor<4x32xi8>, memref<4x32xi8>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %scales
      : (tensor<4x2xi8>, memref<4x2xi8>) -> ()
  return
}
"""


@pytest.mark.parametrize("scale_rounding", ["floor", "even"])
def test_jit_fp4_pipeline_cpu_matches_reference(ctx, scale_rounding):
    """fp4 IR -> fp4-pipeline-cpu -> JIT on numpy data, bit for bit the C++
    reference quantizer (codes, scales and dequantized values)."""
    scheme = str(ir.MXFP4Attr.get(ctx, scale_rounding=scale_rounding))
    module = ctx.parse_module(QDQ_MODULE.replace("SCHEME", scheme))
    ir.run_pipeline(module, "fp4-pipeline-cpu")
    engine = ir.ExecutionEngine(module, opt_level=2)

    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 64)) * np.exp2(rng.integers(-6, 6, (4, 1)))
         ).astype(np.float32)
    x[0, :8] = [0.25, -0.25, 0.75, -1.25, 2.5, -5.0, 0.0, -0.0]  # ties, signs
    x[3, 32:] = 0.0  # an all-zero block
    expected = ref.quantize(x, "mxfp4", scale_rounding=scale_rounding)

    codes = np.zeros((4, 32), np.int8)
    scales = np.zeros((4, 2), np.int8)
    engine.invoke("codes", x, codes, scales)
    np.testing.assert_array_equal(codes.view(np.uint8), expected.codes)
    np.testing.assert_array_equal(scales.view(np.uint8), expected.scales)

    got = engine.invoke("qdq", x, results=[ir.MemRef(np.float32, rank=2)])
    want = ref.dequantize(expected)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_jit_shared_libs(ctx, capfd):
    """shared_libs makes runtime libraries visible to the JIT (here the
    upstream runner utils' printF32)."""
    runner_utils = "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"
    module = ctx.parse_module("""
      func.func private @printF32(f32)
      func.func private @printNewline()
      func.func @show(%x: f32) attributes {llvm.emit_c_interface} {
        call @printF32(%x) : (f32) -> ()
        call @printNewline() : () -> ()
        return
      }""")
    ir.run_pipeline(module, "convert-to-llvm,reconcile-unrealized-casts")
    engine = ir.ExecutionEngine(module, opt_level=0, shared_libs=[runner_utils])
    engine.invoke("show", np.float32(1.5))
    import ctypes
    ctypes.CDLL(None).fflush(None)
    assert capfd.readouterr().out == "1.5\n"
    with pytest.raises(FileNotFoundError):
        ir.ExecutionEngine(module, shared_libs=["/nonexistent/libfoo.so"])
