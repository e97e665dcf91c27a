"""Our compressed-tensors checkpoints, loaded by compressed-tensors itself:
its config parser accepts our quantization_config as its MXFP4A16 / NVFP4A16
presets, its registry picks the mxfp4 / nvfp4 pack-quantized decompressor,
and the weights it decompresses equal ours (fp4.reference.dequantize,
rounded to the bf16 compressed-tensors returns) bit for bit.

compressed-tensors needs torch, so it lives in its own cached environment
(scripts/install_compressed_tensors.sh); the decompression runs there
(ct_decompress.py). Without that environment the test skips, unless
FP4_REQUIRE_COMPRESSED_TENSORS=1 (CI), where its absence fails.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("safetensors")

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
import checkpoint_util as cu  # noqa: E402

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from fp4 import checkpoint  # noqa: E402
from fp4 import reference as ref  # noqa: E402

FP4_QUANT = os.path.join(BUILD_DIR, "bin", "fp4-quant")
DEFAULT_VENV = os.path.expanduser(
    "~/.cache/fp4-mlir/compressed-tensors-venv/bin/python")
CT_PYTHON = os.environ.get("FP4_CT_PYTHON", DEFAULT_VENV)


def ct_python():
    if os.path.exists(CT_PYTHON):
        return CT_PYTHON
    if os.environ.get("FP4_REQUIRE_COMPRESSED_TENSORS") == "1":
        pytest.fail(f"{CT_PYTHON} missing: run "
                    "scripts/install_compressed_tensors.sh")
    pytest.skip("no compressed-tensors environment "
                "(scripts/install_compressed_tensors.sh)")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    rng = np.random.default_rng(5)
    tensors, values = cu.llama_like(rng, hidden=128, inter=256)
    # Values that exercise the edges: a row of zeros (E8M0 byte 0 / zero
    # NVFP4 scales), negative values that round to -0, exact ties, and a
    # tensor-wide outlier.
    name = "model.layers.0.mlp.up_proj.weight"
    v = values[name].copy()
    v[0] = 0.0
    v[1, :32] = -1e-9
    v[2, :8] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.5]
    v[3, 5] = 40.0
    tensors[name] = ("BF16", cu.bf16_bits(v))
    values[name] = cu.bf16_to_f32(tensors[name][1])
    folder = tmp_path_factory.mktemp("model")
    cu.write_folder(folder, tensors, shards=2)
    return folder, values


CASES = [(tool, scheme) for tool in ("fp4-quant", "python")
         for scheme in ("mxfp4", "nvfp4")]


@pytest.fixture(scope="module")
def decompressed(model, tmp_path_factory):
    """{(tool, scheme): (npz data, report)}: every checkpoint written by
    fp4-quant and by fp4.checkpoint, decompressed in one compressed-tensors
    process."""
    python = ct_python()
    folder, _ = model
    root = tmp_path_factory.mktemp("ct")
    args = []
    for tool, scheme in CASES:
        out = root / f"{tool}-{scheme}"
        if tool == "fp4-quant":
            proc = subprocess.run([FP4_QUANT, str(folder), "-o", str(out),
                                   f"--scheme={scheme}"],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
        else:
            checkpoint.quantize_checkpoint(folder, out, scheme=scheme)
        args += [str(out), str(root / f"{tool}-{scheme}.npz")]
    proc = subprocess.run([python, os.path.join(HERE, "ct_decompress.py"),
                           *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = {}
    for tool, scheme in CASES:
        data = np.load(root / f"{tool}-{scheme}.npz")
        result[(tool, scheme)] = (data, json.loads(str(data["report"])))
    return result


@pytest.mark.parametrize("tool,scheme", CASES)
def test_compressed_tensors_decompresses_to_our_values(model, decompressed,
                                                       tool, scheme):
    _, values = model
    data, report = decompressed[(tool, scheme)]
    fmt = f"{scheme}-pack-quantized"
    assert report["format"] == fmt
    assert report["weights_match_preset"], report
    assert report["input_activations"]
    assert report["targets"] == ["Linear"]
    assert report["ignore"] == ["lm_head"]
    assert report["status_compressed"]
    modules = sorted(k[2:] for k in data.files if k.startswith("w:"))
    assert len(modules) == 14
    for module in modules:
        q = ref.quantize(values[module + ".weight"], scheme)
        ours = ref.dequantize(q)
        got = data["w:" + module]
        assert str(data["dtype:" + module]) == "torch.bfloat16"
        assert str(data["scale_dtype:" + module]) == (
            "torch.float8_e4m3fn" if scheme == "nvfp4" else "torch.uint8")
        # compressed-tensors returns bf16: compare with ours rounded to
        # bf16, bit for bit (sign of zero included).
        want = cu.bf16_to_f32(cu.bf16_bits(ours))
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint32),
                                      want.view(np.uint32), err_msg=module)
