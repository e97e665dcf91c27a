"""bench/eval_real_model_gpu.py without a GPU: the compare step's verdicts
on synthetic outputs (the same bits; different bits, as accurate; less
accurate) and the clear errors of build / run / compare on missing inputs.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
SCRIPT = os.path.join(ROOT, "bench", "eval_real_model_gpu.py")
BATCHES, BATCH, SEQ, HIDDEN = 4, 8, 8, 16  # 32 sentences: the 16 pairs


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args],
                          capture_output=True, text=True)


def make_out(tmp_path, gpu_of):
    """OUT/outputs (inputs, fp32, CPU rows), OUT/gpu/NAME/build.json and the
    GPU results R/NAME/b<i>/result0.npy = gpu_of[NAME](cpu outputs)."""
    rng = np.random.default_rng(3)
    out, results = tmp_path / "out", tmp_path / "results"
    (out / "outputs").mkdir(parents=True)
    mask = np.ones((BATCHES, BATCH, SEQ), np.int64)
    mask[:, :, SEQ - 2:] = 0  # padding tokens take no part
    np.savez(out / "outputs" / "inputs.npz",
             ids=np.zeros_like(mask), mask=mask)
    fp32 = rng.standard_normal((BATCHES, BATCH, SEQ, HIDDEN)).astype(np.float32)
    np.save(out / "outputs" / "fp32.npy", fp32)
    for name, make in gpu_of.items():
        cpu = (fp32 + 0.1 * rng.standard_normal(fp32.shape)).astype(np.float32)
        np.save(out / "outputs" / f"{name}.npy", cpu)
        (out / "gpu" / name).mkdir(parents=True)
        (out / "gpu" / name / "build.json").write_text(json.dumps(
            {"name": name, "kernels": 3, "host_fp4_ops": 0, "quantize_s": 1.0,
             "build_s": 2.0}))
        gpu = make(cpu, fp32)
        for i in range(BATCHES):
            d = results / name / f"b{i}"
            d.mkdir(parents=True)
            np.save(d / "result0.npy", gpu[i])
    return out, results


def compare(out, results, *names):
    return run("compare", "--out", str(out), "--results", str(results),
               "--only", *names)


def test_same_bits_pass(tmp_path):
    out, results = make_out(tmp_path, {"mxfp4-w4a16": lambda c, f: c.copy()})
    proc = compare(out, results, "mxfp4-w4a16")
    assert proc.returncode == 0, proc.stderr
    row = proc.stdout.splitlines()[-1]
    assert "| mxfp4-w4a16 | 3 | 0 | yes | 0 |" in row
    saved = json.loads((out / "real_model_gpu.json").read_text())["rows"][0]
    assert saved["differing_vs_cpu"] == 0 and saved["rel_vs_cpu"] == 0


def test_rounding_differences_of_equal_accuracy_pass(tmp_path):
    def jitter(cpu, fp32):
        # A relative change of 1e-6 per element: other bits, same accuracy.
        return (cpu * (1 + 1e-6 * np.sign(np.sin(np.arange(cpu.size))))
                .reshape(cpu.shape).astype(np.float32))
    out, results = make_out(tmp_path, {"nvfp4-w4a4": jitter})
    proc = compare(out, results, "nvfp4-w4a4")
    assert proc.returncode == 0, proc.stderr
    assert "| nvfp4-w4a4 | 3 | 0 | no (" in proc.stdout


def test_a_less_accurate_gpu_result_fails(tmp_path):
    def worse(cpu, fp32):
        return (cpu + 0.5 * (cpu - fp32)).astype(np.float32)
    out, results = make_out(tmp_path, {"nvfp4-w4a4": worse})
    proc = compare(out, results, "nvfp4-w4a4")
    assert proc.returncode == 1
    assert ("GPU results less accurate than the CPU pipeline's: nvfp4-w4a4"
            in proc.stderr)
    assert "Traceback" not in proc.stderr


def test_missing_pieces_are_clear_errors(tmp_path):
    out, results = make_out(tmp_path, {"mxfp4-w4a16": lambda c, f: c.copy()})
    (results / "mxfp4-w4a16" / "b1" / "result0.npy").unlink()
    proc = compare(out, results, "mxfp4-w4a16")
    assert proc.returncode == 1
    assert "batch 1 of mxfp4-w4a16 did not run" in proc.stderr
    np.save(results / "mxfp4-w4a16" / "b1" / "result0.npy",
            np.zeros((BATCH, SEQ, HIDDEN + 1), np.float32))
    proc = compare(out, results, "mxfp4-w4a16")
    assert proc.returncode == 1
    assert f"float32 [{BATCH}, {SEQ}, {HIDDEN + 1}], the CPU row has" in \
        proc.stderr
    proc = compare(out, results, "no-such-recipe")
    assert proc.returncode != 0 and "no recipe ['no-such-recipe']" in \
        proc.stderr
    proc = run("run", str(tmp_path / "nothing"), "--results",
               str(tmp_path / "r"))
    assert proc.returncode == 1
    assert "model.so not found" in proc.stderr
    proc = run("build", "--out", str(tmp_path / "empty"))
    assert proc.returncode == 1
    assert "not found" in proc.stderr and "Traceback" not in proc.stderr
