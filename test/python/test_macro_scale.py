"""fp4-macro-scale drives the scale-bias term of the error decomposition
towards zero (numerics.md 5 and 9).

The same N(0,1) activations (calibration data, 1,048,576 samples, K = 1024)
are quantized by one fp4.quantize to MXFP4 (floor), which fp4-macro-scale
turns into macro-block-scaled MXFP4 with various options; fp4-error-report
then decomposes the error of each variant. The ideal scale s* and the grid
are the same for all variants (blocks of 32), so E_dead and E_grid must not
move at all and every change of E_total is a change of E_scale.

Binaries come from $FP4_BUILD_DIR (default /work/main/build).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import reference as ref  # noqa: E402

FP4_OPT = os.path.join(BUILD_DIR, "bin", "fp4-opt")

PROGRAM = """
func.func @act(%x: tensor<8x1024xf32>, %w: tensor<16x1024xf32>) -> tensor<8x16xf32> {
  %q = fp4.quantize %x : tensor<8x1024xf32>
      -> !fp4.tensor<8x1024xf4E2M1FN, #fp4.mxfp4, axis = 1>
  %y = fp4.matmul %q, %w : !fp4.tensor<8x1024xf4E2M1FN, #fp4.mxfp4, axis = 1>,
      tensor<16x1024xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
"""


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    root = tmp_path_factory.mktemp("macro")
    rng = np.random.default_rng(2024)
    data = {"normal": rng.standard_normal((1024, 1024)).astype(np.float32),
            "laplace": rng.laplace(size=(1024, 1024)).astype(np.float32)}
    (root / "in.mlir").write_text(PROGRAM)
    return root, data


def report(root, data, kind, macro_options):
    """Figures of the activation quantize after fp4-macro-scale with
    `macro_options` (None: without the pass)."""
    np.savez(root / "cal.npz", **{"@act/arg0": data[kind]})
    passes = []
    if macro_options is not None:
        passes.append(f"-fp4-macro-scale={macro_options}")
    out = root / "report.json"
    passes.append(f"-fp4-error-report=calibration={root / 'cal.npz'} "
                  f"output={out}")
    assert os.path.exists(FP4_OPT), f"{FP4_OPT} not built"
    proc = subprocess.run([FP4_OPT, str(root / "in.mlir"), "-o", os.devnull,
                           *passes], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    ops = json.loads(out.read_text())["ops"]
    assert len(ops) == 1
    expected = "mxfp4" if macro_options is None else "mxfp4_macro"
    assert ops[0]["format"] == expected
    return ops[0]["relative"]


@pytest.mark.parametrize("kind", ["normal", "laplace"])
def test_macro_scaling_reduces_the_scale_term(calibration, kind):
    root, data = calibration
    floor = report(root, data, kind, None)
    default = report(root, data, kind, "")
    search = report(root, data, kind, "search=8")
    per_block = report(root, data, kind, "macro-block=32")
    # Same ideal scale and grid: the other two terms do not move.
    for r in (default, search, per_block):
        assert r["dead"] == floor["dead"]
        assert r["grid"] == floor["grid"]
    # The default factor (m from the macro-block maximum) only fixes the
    # block holding that maximum: a modest reduction. Searching 8 factors
    # per 256 elements removes most of the scale bias, and a factor per
    # 32-block (macro-block = 32: X = s* for every block, up to the bf16
    # rounding of m) all of it.
    assert default["scale"] < 0.95 * floor["scale"]
    assert search["scale"] < 0.5 * floor["scale"]
    assert abs(per_block["scale"]) < 0.05 * floor["scale"]
    assert search["total"] < default["total"] < floor["total"]
    print(f"{kind}: E_scale floor {floor['scale']:.5f}, macro "
          f"{default['scale']:.5f}, search=8 {search['scale']:.5f}, "
          f"macro-block=32 {per_block['scale']:.6f}")


def test_pass_matches_reference_quantizer(calibration):
    """The rewritten quantize is the reference macro quantizer: the pass's
    figures equal the C API's on the same data."""
    root, data = calibration
    via_pass = report(root, data, "normal", "macro-block=128 search=4")
    direct = ref.error_report(data["normal"], "macro", macro_block=128,
                              search=4)["relative"]
    for key in ("total", "scale", "dead", "grid"):
        assert via_pass[key] == pytest.approx(direct[key], rel=1e-12)
