"""ExecutionEngine.invoke checks every call against the function's
signature (read before lowering) and raises a TypeError / ValueError naming
the argument, what it expects and what it got, instead of passing a bad
pointer to compiled code; one test per kind of bad argument. Also: scheme
names are the CLI's everywhere, and a bad one is a ValueError listing the
valid names."""

import os
import subprocess
import sys

import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
from fp4 import ir  # noqa: E402
from fp4 import reference as ref  # noqa: E402

SCALE = """
func.func @scale(%x: memref<4x8xf32>, %s: f32, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}
func.func @rows(%x: memref<?x8xf32>) -> index {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  return %n : index
}
"""
PIPELINE = "func.func(llvm-request-c-wrappers),fp4-pipeline-cpu"


@pytest.fixture(scope="module")
def scale_engine():
    ctx = ir.Context()
    module = ctx.parse_module(SCALE)
    ir.PassManager.parse(PIPELINE, ctx).run(module)
    return ir.ExecutionEngine(module)


@pytest.fixture(scope="module")
def linear_engine():
    ctx = ir.Context()
    module = ctx.parse_file(os.path.join(ROOT, "examples", "quickstart.mlir"))
    ir.PassManager.parse("fp4-quantize,fp4-fold-constants," + PIPELINE,
                         ctx).run(module)
    return ir.ExecutionEngine(module)


def x48():
    return np.arange(32, dtype=np.float32).reshape(4, 8)


def test_signatures_are_read_before_lowering(scale_engine):
    sig = scale_engine.signatures["scale"]
    assert [p.text for p in sig.inputs] == ["memref<4x8xf32>", "f32",
                                            "memref<4x8xf32>"]
    assert sig.results == []


def test_good_call_and_python_float_for_f32(scale_engine):
    out = np.zeros((4, 8), np.float32)
    # A Python float is an f64; the engine converts it to the f32 the
    # function takes (unchecked, the callee would read half a double).
    scale_engine.invoke("scale", x48(), 2.5, out)
    np.testing.assert_array_equal(out, x48() * np.float32(2.5))


def test_float64_array_for_f32(scale_engine):
    with pytest.raises(TypeError, match=r"scale: argument 0 expects "
                       r"memref<4x8xf32> \(numpy float32\), got float64 "
                       r"array of shape \(4, 8\)"):
        scale_engine.invoke("scale", x48().astype(np.float64), 2.0,
                            np.zeros((4, 8), np.float32))


def test_wrong_shape(scale_engine):
    with pytest.raises(ValueError, match=r"scale: argument 2 expects "
                       r"memref<4x8xf32> \(shape 4x8\), got float32 array of "
                       r"shape \(3, 8\): dimension 0 is 3, not 4"):
        scale_engine.invoke("scale", x48(), 2.0, np.zeros((3, 8), np.float32))


def test_wrong_rank(scale_engine):
    with pytest.raises(ValueError, match=r"argument 0 expects memref<4x8xf32>"
                       r" \(rank 2\), got float32 array of shape \(32,\) "
                       r"\(rank 1\)"):
        scale_engine.invoke("scale", x48().ravel(), 2.0,
                            np.zeros((4, 8), np.float32))


def test_non_contiguous_view(scale_engine):
    wide = np.zeros((4, 16), np.float32)
    with pytest.raises(ValueError, match=r"argument 2 \(memref<4x8xf32>\) "
                       r"must be C-contiguous, got a strided view"):
        scale_engine.invoke("scale", x48(), 2.0, wide[:, ::2])


def test_wrong_argument_count(scale_engine):
    with pytest.raises(TypeError, match=r"scale takes 3 argument\(s\) "
                       r"\(memref<4x8xf32>, f32, memref<4x8xf32>\), got 2"):
        scale_engine.invoke("scale", x48(), 2.0)


def test_array_for_a_scalar(scale_engine):
    with pytest.raises(TypeError, match="argument 1 expects a scalar f32, got "
                                        "float32 array"):
        scale_engine.invoke("scale", x48(), np.ones(1, np.float32),
                            np.zeros((4, 8), np.float32))


def test_scalar_for_an_array(scale_engine):
    with pytest.raises(TypeError, match="argument 0 must be an array for "
                                        "memref<4x8xf32>, got float"):
        scale_engine.invoke("scale", 1.0, 2.0, np.zeros((4, 8), np.float32))


def test_string_for_a_scalar(scale_engine):
    with pytest.raises(TypeError, match="argument 1 expects f32, got str"):
        scale_engine.invoke("scale", x48(), "2", np.zeros((4, 8), np.float32))


def test_dynamic_size_accepts_any_length(scale_engine):
    assert scale_engine.invoke("rows", np.zeros((3, 8), np.float32),
                               results=[np.int64]) == 3
    with pytest.raises(ValueError, match="dimension 1 is 7, not 8"):
        scale_engine.invoke("rows", np.zeros((3, 7), np.float32),
                            results=[np.int64])


def test_missing_results_raises(linear_engine):
    with pytest.raises(TypeError, match=r"linear returns 1 result\(s\) "
                       r"\(tensor<4x8xf32>\) but results= describes 0: pass "
                       r"results=\[ir.MemRef\(np.float32, 2\)\]"):
        linear_engine.invoke("linear", np.ones((4, 64), np.float32))


def test_wrong_result_spec(linear_engine):
    with pytest.raises(TypeError, match="result 0 is tensor<4x8xf32>, but "
                                        "results= says dtype float64"):
        linear_engine.invoke("linear", np.ones((4, 64), np.float32),
                             results=[ir.MemRef(np.float64, 2)])
    with pytest.raises(ValueError, match=r"result 0 is tensor<4x8xf32> "
                                         r"\(rank 2\), but results= says "
                                         r"rank 1"):
        linear_engine.invoke("linear", np.ones((4, 64), np.float32),
                             results=[ir.MemRef(np.float32, 1)])


def test_linear_good_call(linear_engine):
    y = linear_engine.invoke("linear", np.ones((4, 64), np.float32),
                             results=[ir.MemRef(np.float32, 2)])
    assert y.shape == (4, 8) and np.isfinite(y).all()


def test_torch_cpu_tensor(scale_engine):
    torch = pytest.importorskip("torch")
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    out = torch.zeros(4, 8)
    scale_engine.invoke("scale", x, 3.0, out)
    assert torch.equal(out, x * 3.0)
    with pytest.raises(TypeError, match="argument 0 expects memref<4x8xf32>"):
        scale_engine.invoke("scale", x.double(), 3.0, out)


# Scheme names ------------------------------------------------------------

def test_cli_scheme_names_in_python():
    x = np.random.default_rng(0).standard_normal((2, 256)).astype(np.float32)
    a = ref.quantize(x, "mxfp4_macro")
    b = ref.quantize(x, "macro")  # the older alias still works
    assert a.scheme == b.scheme == "mxfp4_macro"
    np.testing.assert_array_equal(a.codes, b.codes)
    np.testing.assert_array_equal(ref.dequantize(a), ref.dequantize(b))


def test_every_python_scheme_name_is_a_cli_name(tmp_path):
    path = tmp_path / "x.f32"
    np.zeros((16, 256), np.float32).tofile(path)
    for name in ref.SCHEMES:
        proc = subprocess.run(
            [os.path.join(BUILD_DIR, "bin", "fp4-quant"), str(path), "--rows",
             "16", "--cols", "256", f"--scheme={name}", "-o",
             str(tmp_path / name)], capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)


def test_bad_scheme_name():
    with pytest.raises(ValueError, match="unknown scheme 'mxfp5'; valid "
                                         "schemes: mxfp4, nvfp4, hif4, "
                                         "mxfp4_macro"):
        ref.quantize(np.zeros((1, 32), np.float32), "mxfp5")


def test_bad_option_value():
    with pytest.raises(ValueError, match="unknown scale_rounding 'up'; valid "
                                         "values: floor, ceil, even, rceil"):
        ref.quantize(np.zeros((1, 32), np.float32), "mxfp4",
                     scale_rounding="up")


TORCH_SNIPPET = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np, torch
from fp4 import ir
ctx = ir.Context()
m = ctx.parse_module(sys.argv[2])
ir.PassManager.parse(sys.argv[3], ctx).run(m)
e = ir.ExecutionEngine(m)
x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
out = torch.zeros(4, 8)
e.invoke("scale", x, 3.0, out)
assert torch.equal(out, x * 3.0)
try:
    e.invoke("scale", x.double(), 3.0, out)
    raise SystemExit("a float64 tensor was accepted")
except TypeError as err:
    assert "argument 0 expects memref<4x8xf32>" in str(err), err
print("ok")
"""


def test_torch_cpu_tensor_in_the_compressed_tensors_environment():
    """The same torch checks where torch is installed (the environment of
    test_compressed_tensors.py), when the test process itself has none."""
    python = os.environ.get("FP4_CT_PYTHON", "")
    try:
        import torch  # noqa: F401
        pytest.skip("torch importable here: test_torch_cpu_tensor covers it")
    except ImportError:
        pass
    if not os.path.exists(python):
        pytest.skip("no FP4_CT_PYTHON environment")
    proc = subprocess.run([python, "-c", TORCH_SNIPPET,
                           os.path.join(ROOT, "python"), SCALE, PIPELINE],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
