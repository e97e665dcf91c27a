"""Progress reporting of checkpoint quantization: one `[i/n] name RxC dtype
s GB/s` line per quantized tensor on stderr when stderr is a terminal (a
pty here), nothing when it is a pipe or file, nothing with --quiet; the
Python function prints the same lines when asked (progress=True)."""

import os
import pty
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("safetensors")

sys.path.insert(0, os.path.dirname(__file__))
import checkpoint_util as cu  # noqa: E402

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import checkpoint  # noqa: E402

FP4_QUANT = os.path.join(BUILD_DIR, "bin", "fp4-quant")
LINE = re.compile(r"^\[(\d+)/3\] (\S+) 32x64 BF16 \d+\.\d\d s \d+\.\d\d GB/s$")


@pytest.fixture
def src(tmp_path):
    rng = np.random.default_rng(1)
    tensors = {f"m.{n}.weight": ("BF16", cu.bf16_bits(
        rng.standard_normal((32, 64)).astype(np.float32)))
        for n in ("a", "b", "c")}
    tensors["m.norm.weight"] = ("BF16", cu.bf16_bits(np.ones(64, np.float32)))
    path = tmp_path / "model.safetensors"
    cu.write(path, tensors)
    return path


def run_with_pty_stderr(args):
    """Runs with stderr on a pseudo-terminal, stdout on a pipe."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    stdout = proc.stdout.read().decode()
    proc.wait()
    os.close(master)
    return proc.returncode, stdout, b"".join(chunks).decode()


def progress_lines(text):
    return [line.strip() for line in text.replace("\r", "").splitlines()
            if line.strip().startswith("[")]


def test_terminal_gets_one_line_per_tensor(src, tmp_path):
    rc, stdout, stderr = run_with_pty_stderr(
        [FP4_QUANT, str(src), "-o", str(tmp_path / "out")])
    assert rc == 0, stderr
    lines = progress_lines(stderr)
    assert len(lines) == 3, stderr
    names = []
    for i, line in enumerate(lines, 1):
        m = LINE.match(line)
        assert m, line
        assert int(m.group(1)) == i
        names.append(m.group(2))
    assert names == ["m.a.weight", "m.b.weight", "m.c.weight"]
    assert "quantized 3 tensors" in stdout


def test_pipe_gets_no_progress(src, tmp_path):
    proc = subprocess.run([FP4_QUANT, str(src), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert "quantized 3 tensors" in proc.stdout


def test_quiet_on_a_terminal_prints_nothing(src, tmp_path):
    rc, stdout, stderr = run_with_pty_stderr(
        [FP4_QUANT, str(src), "-o", str(tmp_path / "out"), "--quiet"])
    assert rc == 0
    assert stderr.strip() == ""
    assert stdout == ""


def test_python_progress_flag(src, tmp_path, capsys):
    checkpoint.quantize_checkpoint(src, tmp_path / "a", progress=True)
    lines = progress_lines(capsys.readouterr().err)
    assert [LINE.match(line).group(2) for line in lines] == \
        ["m.a.weight", "m.b.weight", "m.c.weight"]
    checkpoint.quantize_checkpoint(src, tmp_path / "b")
    assert capsys.readouterr().err == ""
