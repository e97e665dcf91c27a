"""fp4.torch and torch-mlir IR through the CPU pipeline.

Without torch: the committed fixture (fixtures/tiny_bert.mlir, a 2-layer
BERT exported by fp4.torch.export, and tiny_bert.npz with its inputs and
torch eager's output; scripts/gen_torch_fixture.py regenerates both) has a
layer name on every contraction, lowers through fp4-pipeline-cpu (exact
GELU's math.erf, LayerNorm's rsqrt, softmax) and, JIT-compiled, matches torch
to 1e-5, with `fast` bit-identical to the default lowering.

With torch-mlir (the environment of scripts/install_torch_mlir.sh, or
$FP4_TORCH_MLIR_PYTHON): fp4.torch.export of a small module names each
Linear by its module path, and capture_calibration writes the documented
.npz keys. Skipped, with the reason, when that environment is missing.
"""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD_DIR = os.environ.get("FP4_BUILD_DIR", os.path.join(ROOT, "build"))
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from fp4 import ir  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "tiny_bert.mlir")
DATA = os.path.join(HERE, "fixtures", "tiny_bert.npz")
TORCH_PYTHON = os.environ.get(
    "FP4_TORCH_MLIR_PYTHON",
    os.path.expanduser("~/.cache/fp4-mlir/torch-mlir-venv/bin/python"))


def first_name(loc_id, locs, seen=()):
    """The first NameLoc of an alias `#locN` (depth-first through fused and
    callsite locations), from the printed alias table."""
    body = locs.get(loc_id)
    if body is None or loc_id in seen:
        return None
    m = re.match(r'"([^"]*)"\((#loc\d+)\)$', body)
    if m:
        return m.group(1)
    for ref in re.findall(r"#loc\d+", body):
        name = first_name(ref, locs, seen + (loc_id,))
        if name:
            return name
    return None


def fixture_contractions():
    text = open(FIXTURE).read()
    locs = dict(re.findall(r"^(#loc\d+) = loc\((.*)\)$", text, re.M))
    out = []
    for line in text.splitlines():
        m = re.search(r"= (linalg\.(?:batch_)?matmul) .* loc\((#loc\d+)\)$",
                      line)
        if m:
            out.append((m.group(1), first_name(m.group(2), locs)))
    return out


def test_fixture_contractions_have_layer_names():
    ops = fixture_contractions()
    # 2 layers x (q, k, v, attention out, intermediate, output) + 2 x (QK^T, PV)
    assert [op for op, _ in ops].count("linalg.matmul") == 12
    assert [op for op, _ in ops].count("linalg.batch_matmul") == 4
    names = {name for _, name in ops}
    for layer in (0, 1):
        for path in ("attention.self.query", "attention.self.key",
                     "attention.self.value", "attention.output.dense",
                     "intermediate.dense", "output.dense"):
            assert f"encoder.layer.{layer}.{path}" in names
        # Attention products sit in the self-attention module.
        assert f"encoder.layer.{layer}.attention.self" in names
    assert None not in names


RUN_FIXTURE = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from fp4 import ir
    fixture, data, pipeline, out = sys.argv[2:6]
    d = np.load(data)
    ctx = ir.Context()
    module = ctx.parse_module(open(fixture).read())
    ir.PassManager.parse(f"builtin.module({pipeline})", ctx).run(module)
    engine = ir.ExecutionEngine(module, opt_level=2,
                                shared_libs=ir.cpu_runtime_libraries())
    r = engine.invoke("main", d["input_ids"], d["attention_mask"],
                      results=(ir.MemRef(np.float32, 3),))
    np.save(out, np.array(r))
""")


_RUNS = {}


def run_fixture(pipeline, tmp_path):
    """Lowers the fixture with `pipeline`, JIT-runs it in a fresh process
    (MLIR's async runtime is process-global: each ExecutionEngine that
    loads it resets it when destroyed, so engines of `fast` code do not
    share a process), returns (output, torch's expected output). Each
    pipeline runs once per session (a JIT run of the fixture takes about a
    minute on 2 cores; several tests compare the same runs)."""
    if pipeline not in _RUNS:
        out = tmp_path / "out.npy"
        run = subprocess.run(
            [sys.executable, "-c", RUN_FIXTURE, os.path.join(ROOT, "python"),
             FIXTURE, DATA, pipeline, str(out)],
            capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-4000:]
        _RUNS[pipeline] = np.load(out)
    return _RUNS[pipeline].copy(), np.load(DATA)["expected"]


@pytest.mark.parametrize("options", ["c-wrappers=true",
                                     "c-wrappers=true fast=true",
                                     "c-wrappers=true fast=true "
                                     "parallel-loops=false"])
def test_fixture_fp32_matches_torch(options, tmp_path):
    out, expected = run_fixture(f"fp4-pipeline-cpu{{{options}}}", tmp_path)
    assert out.shape == expected.shape
    assert np.abs(out - expected).max() <= 1e-5


def test_fast_is_bit_identical(tmp_path):
    slow, _ = run_fixture("fp4-pipeline-cpu{c-wrappers=true}", tmp_path)
    for options in ("fast=true", "fast=true parallel-loops=false",
                    "fast=true microkernels=false"):
        fast, _ = run_fixture(
            f"fp4-pipeline-cpu{{c-wrappers=true {options}}}", tmp_path)
        assert np.array_equal(slow.view(np.uint32), fast.view(np.uint32)), \
            options


def test_fixture_quantized_runs(tmp_path):
    """W4A16 MXFP4 of every weight contraction, folded, lowered: close to
    fp32 but not equal to it (the quantization did happen)."""
    out, expected = run_fixture(
        "fp4-quantize{scheme=mxfp4 operands=weights},fp4-fold-constants,"
        "canonicalize,fp4-pipeline-cpu{c-wrappers=true fast=true}", tmp_path)
    cos = (out * expected).sum(-1) / (
        np.linalg.norm(out, axis=-1) * np.linalg.norm(expected, axis=-1))
    assert cos.min() > 0.9
    assert np.abs(out - expected).max() > 1e-3


def torch_python():
    if not os.path.exists(TORCH_PYTHON):
        pytest.skip(f"no torch-mlir environment at {TORCH_PYTHON} "
                    "(bash scripts/install_torch_mlir.sh makes it)")
    probe = subprocess.run(
        [TORCH_PYTHON, "-c", "import torch, torch_mlir.fx"],
        capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"{TORCH_PYTHON} cannot import torch-mlir: "
                    f"{probe.stderr.strip().splitlines()[-1:]}")
    return TORCH_PYTHON


SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import torch
    sys.path.insert(0, sys.argv[1])
    import fp4.torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.Linear(16, 32)
            self.down = torch.nn.Linear(32, 16)
        def forward(self, x):
            return self.down(torch.nn.functional.gelu(self.up(x)))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([Block(), Block()])
            self.norm = torch.nn.LayerNorm(16)
        def forward(self, x):
            for layer in self.layers:
                x = x + layer(x)
            return torch.softmax(self.norm(x), -1)

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(2, 4, 16)
    text = fp4.torch.export(net, (x,))
    plain = fp4.torch.export(net, (x,), names=False)
    cal = fp4.torch.capture_calibration(
        net, [(torch.randn(2, 4, 16),), (torch.randn(2, 4, 16),)],
        sys.argv[2], types=(torch.nn.Linear,))
    print(json.dumps({
        "names": sorted(set(__import__("re").findall(r'loc\\("([a-z][^"]*)"\\(', text))),
        "plain_names": __import__("re").findall(r'loc\\("layers', plain),
        "cal": {k: list(v.shape) for k, v in cal.items()},
        "expected": net(x).detach().numpy().tolist(),
        "x": x.numpy().tolist()}))
    open(sys.argv[3], "w").write(text)
""")


def test_export_names_and_calibration(tmp_path):
    py = torch_python()
    cal_path = tmp_path / "cal.npz"
    mlir_path = tmp_path / "net.mlir"
    run = subprocess.run(
        [py, "-c", SCRIPT, os.path.join(ROOT, "python"), str(cal_path),
         str(mlir_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    import json
    result = json.loads(run.stdout.strip().splitlines()[-1])
    for name in ("layers.0.up", "layers.0.down", "layers.1.up",
                 "layers.1.down", "norm"):
        assert name in result["names"]
    assert result["plain_names"] == []
    # Inputs of each Linear, rows of both batches, K last.
    assert result["cal"] == {"layers.0.up": [16, 16], "layers.0.down": [16, 32],
                             "layers.1.up": [16, 16], "layers.1.down": [16, 32]}
    with np.load(cal_path) as f:
        assert all(f[k].dtype == np.float32 for k in f.files)
    # The export runs in our CPU pipeline and matches torch.
    ctx = ir.Context()
    module = ctx.parse_module(mlir_path.read_text())
    ir.PassManager.parse(
        "builtin.module(fp4-pipeline-cpu{c-wrappers=true fast=true})",
        ctx).run(module)
    engine = ir.ExecutionEngine(module, shared_libs=ir.cpu_runtime_libraries())
    out = engine.invoke("main", np.array(result["x"], dtype=np.float32),
                        results=(ir.MemRef(np.float32, 3),))
    assert np.abs(np.array(out) - np.array(result["expected"])).max() <= 1e-5
