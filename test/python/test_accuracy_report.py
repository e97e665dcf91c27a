"""The accuracy table of docs/Accuracy.md (examples/mlp/accuracy.py) holds.

Runs the script on a smaller MLP block (hidden 256, intermediate 512, 64
calibration samples) with the same kind of channel outliers and asserts the
qualitative claims the doc makes, so that it cannot silently go stale:

- fp4-macro-scale lowers the activations' E_scale;
- fp4-outlier-fallback (block top-2) lowers E_dead, the zeroed fraction and
  the total activation error;
- fp4-rotate (randomized Hadamard-32) lowers E_dead and the total
  activation error with channel outliers, at the price of more E_grid;
- fp4-residual (2:4 on the activations) leaves the quantizer alone but
  lowers the end-to-end error of every matmul;
- NVFP4's E4M3 block scales nearly remove E_scale.

It also checks the plumbing: the captured quantizer inputs are the values an
independent computation (fp4.reference: the C++ rotation / outlier split of
the numerics library, applied in NumPy to the calibration samples) gives,
every quantize was analysed, and the report's figures for the unrotated
activations are those of fp4.reference.error_report on the samples.
"""
import os
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = os.environ.get("FP4_BUILD_DIR", str(ROOT / "build"))
os.environ.setdefault("FP4_BUILD_DIR", BUILD_DIR)
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "examples" / "mlp"))
import accuracy  # noqa: E402
from fp4 import reference as ref  # noqa: E402

RECIPES = ["MXFP4 floor", "+ macro-scale", "+ rotate H32", "+ outlier top-2",
           "+ residual 2:4", "NVFP4"]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    work = tmp_path_factory.mktemp("accuracy")
    out = accuracy.run_all(tokens=16, hidden=256, intermediate=512, seed=7, outliers=4,
                           calibration_samples=64, recipes=RECIPES, workdir=work)
    out["by_name"] = {r["recipe"]: r for r in out["recipes"]}
    out["index"] = {r["recipe"]: i for i, r in enumerate(out["recipes"])}
    return out


def act(result, name):
    return result["by_name"][name]["summary"]["act"]


def captured(result, name):
    work = pathlib.Path(result["setup"]["workdir"])
    return np.load(work / f"recipe{result['index'][name]}.captured.npz")


def test_every_quantize_is_analysed_exactly(result):
    for r in result["recipes"]:
        assert sorted(r["ops"]) == sorted(f"{m}.{k}" for m in accuracy.MATMULS
                                          for k in ("act", "wgt")), r["recipe"]
        for key, op in r["ops"].items():
            assert op["vector_terms_max_abs_residual"] == 0, (r["recipe"], key)
            rel = op["relative"]
            assert rel["total"] == pytest.approx(rel["scale"] + rel["dead"] + rel["grid"],
                                                 rel=1e-9, abs=1e-15)


def test_channel_outliers_are_there(result):
    data = np.load(pathlib.Path(result["setup"]["workdir"]) / "mlp_outliers.cal.npz")
    x, h = data["@mlp/arg0"].astype(np.float64), data["h"].astype(np.float64)
    for v, channels in ((x, result["setup"]["x_outlier_channels"]),
                        (h, result["setup"]["h_outlier_channels"])):
        rms = np.sqrt(np.mean(v ** 2, axis=0))
        typical = np.median(rms)
        assert len(channels) == 4
        assert np.all(rms[channels] > 10 * typical)
        assert np.sum(rms > 10 * typical) == 4


def test_baseline_figures_match_reference(result):
    x = np.load(pathlib.Path(result["setup"]["workdir"]) / "mlp_outliers.cal.npz")["@mlp/arg0"]
    np.testing.assert_array_equal(captured(result, "MXFP4 floor")["gate.act"], x)
    expected = ref.error_report(x, "mxfp4")
    op = result["by_name"]["MXFP4 floor"]["ops"]["gate.act"]
    for c in accuracy.COMPONENTS:
        assert op["relative"][c] == pytest.approx(expected["relative"][c], rel=1e-6), c
    for f in ("clipped", "zeroed"):
        assert op["fractions"][f] == pytest.approx(expected["fractions"][f], rel=1e-12), f


def test_captured_inputs_are_the_transformed_values(result):
    work = pathlib.Path(result["setup"]["workdir"])
    x = np.load(work / "mlp_outliers.cal.npz")["@mlp/arg0"]
    w_gate = np.load(work / "mlp_outliers.npz")["w_gate"]
    rot = captured(result, "+ rotate H32")
    np.testing.assert_array_equal(rot["gate.act"],
                                  ref.hadamard_rotate(x, 32, randomized=True, seed=0))
    np.testing.assert_array_equal(rot["gate.wgt"],
                                  ref.hadamard_rotate(w_gate, 32, randomized=True, seed=0))
    split = captured(result, "+ outlier top-2")
    np.testing.assert_array_equal(split["gate.act"], ref.split_outliers(x, 32, 2)[0])
    np.testing.assert_array_equal(split["gate.wgt"], ref.split_outliers(w_gate, 32, 2)[0])


def test_macro_scale_removes_scale_term(result):
    base, macro = act(result, "MXFP4 floor"), act(result, "+ macro-scale")
    assert macro["scale"] < 0.5 * base["scale"]
    assert macro["total"] < base["total"]
    # The deadzone is a property of the ideal scale: barely touched.
    assert macro["dead"] == pytest.approx(base["dead"], rel=0.3)


def test_outlier_fallback_removes_deadzone(result):
    base, outl = act(result, "MXFP4 floor"), act(result, "+ outlier top-2")
    assert outl["dead"] < 0.1 * base["dead"]
    assert outl["zeroed"] < base["zeroed"]
    assert outl["total"] < 0.1 * base["total"]


def test_rotation_spreads_outliers(result):
    base, rot = act(result, "MXFP4 floor"), act(result, "+ rotate H32")
    assert rot["total"] < base["total"]
    assert rot["dead"] < 0.1 * base["dead"]
    assert rot["zeroed"] < 0.5 * base["zeroed"]
    assert rot["grid"] > base["grid"]


def test_residual_lowers_end_to_end_error(result):
    base = result["by_name"]["MXFP4 floor"]["e2e"]
    resid = result["by_name"]["+ residual 2:4"]["e2e"]
    for m in accuracy.MATMULS:
        assert resid[m] < 0.9 * base[m], m
    # The quantizer of x itself is unchanged.
    assert (result["by_name"]["+ residual 2:4"]["ops"]["gate.act"]["relative"]
            == result["by_name"]["MXFP4 floor"]["ops"]["gate.act"]["relative"])


def test_nvfp4_scales_nearly_remove_scale_term(result):
    assert act(result, "NVFP4")["scale"] < 0.2 * act(result, "MXFP4 floor")["scale"]


def test_table_lists_every_recipe(result):
    table = accuracy.format_table(result)
    for name in RECIPES:
        assert any(line.startswith(name) for line in table.splitlines()), name
