"""The main job (examples/mlp/run_mlp.py) runs and its errors are the right ones.

For N(0,1) activations and Gaussian weights, the quantization errors of the two
operands are nearly independent, so the relative error of a W4A4 product is
predicted by the element-level relative MSE e of the format (numerics.md
section 12): rel_err ~= sqrt(e_x + e_w) = sqrt(2 e). The gate and up
projections must land within 10% of that prediction; the unquantized run must
reproduce the f32 computation to f32 rounding.
"""
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# numerics.md section 12, N(0,1), d = 1.
SECTION12 = {
    "MXFP4 floor": 0.01323, "MXFP4 ceil": 0.02080, "MXFP4 even": 0.01252,
    "MXFP4 rceil": 0.01331, "NVFP4": 0.00906, "NVFP4 4/6": 0.00756, "HiF4": 0.00688,
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("mlp") / "results.json"
    # The accuracy table run_mlp.py also prints is tested in test_accuracy_report.py.
    subprocess.run([sys.executable, str(ROOT / "examples/mlp/run_mlp.py"), "--no-accuracy",
                    "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL, env=dict(os.environ))
    return {r["recipe"]: r for r in json.loads(out.read_text())}


def test_unquantized_pipeline_matches_f32(results):
    r = results["f32 (no fp4)"]
    for m in ("gate", "up", "down"):
        assert r["e2e"][m] < 1e-5, (m, r["e2e"][m])


@pytest.mark.parametrize("recipe", sorted(SECTION12))
def test_w4a4_error_matches_format_mse(results, recipe):
    predicted = math.sqrt(2 * SECTION12[recipe])
    for m in ("gate", "up"):
        got = results[recipe]["own"][m]
        assert abs(got / predicted - 1) < 0.10, (recipe, m, got, predicted)


def test_every_recipe_ran_and_is_quantized(results):
    for name, r in results.items():
        if r["scheme"] is None:
            continue
        for m in ("gate", "up", "down"):
            assert 0.05 < r["own"][m] < 0.5, (name, m, r["own"][m])


def test_macro_search_beats_plain_mxfp4(results):
    # Searching the macro-block factor minimizes squared error per macro block.
    for m in ("gate", "up", "down"):
        assert results["MXFP4 macro search=8"]["own"][m] < results["MXFP4 floor"]["own"][m]
