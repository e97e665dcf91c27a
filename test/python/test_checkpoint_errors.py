"""Corrupt or unusable checkpoints: fp4-quant prints exactly one line
`fp4-quant: error: <file>: <reason>`, exits 1, never crashes and writes
nothing; fp4.checkpoint raises CheckpointError (a ValueError) naming the
file. Each case is a file the safetensors package writes, then damaged."""

import json
import os
import struct
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


def good_file(path):
    cu.write(path, {"l.weight": ("F32", np.ones((2, 32), np.float32)),
                    "l.bias": ("F32", np.ones(2, np.float32))})
    return path


def header_of(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def with_header(path, header, body):
    text = json.dumps(header).encode()
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + body)


def damage_truncated_length(p):
    open(p, "wb").write(b"\x10\x00\x00")


def damage_truncated_header(p):
    data = open(p, "rb").read()
    open(p, "wb").write(data[:20])


def damage_bad_json(p):
    header, body = header_of(p)
    text = json.dumps(header).encode()[:-2] + b"  "
    open(p, "wb").write(struct.pack("<Q", len(text)) + text + body)


def damage_offsets(p):
    header, body = header_of(p)
    header["l.weight"]["data_offsets"][1] += 4096
    with_header(p, header, body)


def damage_dtype(p):
    header, body = header_of(p)
    header["l.bias"]["dtype"] = "F7"
    with_header(p, header, body)


def damage_size(p):
    header, body = header_of(p)
    header["l.weight"]["shape"] = [3, 32]
    with_header(p, header, body)


CASES = {
    "truncated-length": (damage_truncated_length,
                         "truncated header: the file has 3 bytes"),
    "truncated-header": (damage_truncated_header,
                         "truncated header: it claims"),
    "bad-json": (damage_bad_json, "bad JSON header"),
    "offsets": (damage_offsets, "tensor 'l.weight' data offsets \\[.*\\] are "
                                "out of range: the data section has"),
    "dtype": (damage_dtype, "tensor 'l.bias' has unsupported dtype 'F7'"),
    "size": (damage_size, "tensor 'l.weight' has 256 bytes of data but its "
                          "shape and dtype F32 need 384"),
}


def run(*args):
    return subprocess.run([FP4_QUANT, *map(str, args)], capture_output=True,
                          text=True)


def assert_one_error(proc, file, reason):
    import re
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert re.fullmatch(f"fp4-quant: error: {re.escape(str(file))}: {reason}.*",
                        lines[0]), lines[0]
    for crash in ("Stack dump", "Segmentation", "Traceback", "Assertion"):
        assert crash not in proc.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_corrupt_file(tmp_path, case):
    damage, reason = CASES[case]
    path = good_file(tmp_path / "model.safetensors")
    damage(path)
    out = tmp_path / "out"
    assert_one_error(run(path, "-o", out), path, reason)
    assert not out.exists() or not os.listdir(out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_corrupt_file_python(tmp_path, case):
    damage, _ = CASES[case]
    path = good_file(tmp_path / "model.safetensors")
    damage(path)
    with pytest.raises(checkpoint.CheckpointError) as info:
        checkpoint.quantize_checkpoint(path, tmp_path / "out")
    assert info.value.path == str(path)
    assert not (tmp_path / "out").exists()


def test_valid_file_is_accepted(tmp_path):
    """The undamaged file of every case above quantizes (the errors come
    from the damage, not the writer)."""
    path = good_file(tmp_path / "model.safetensors")
    assert run(path, "-o", tmp_path / "out").returncode == 0


def test_missing_source(tmp_path):
    missing = tmp_path / "none.safetensors"
    assert_one_error(run(missing, "-o", tmp_path / "out"), missing,
                     "no such file or folder")


def test_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    assert_one_error(run(tmp_path / "empty", "-o", tmp_path / "out"),
                     tmp_path / "empty", "no .safetensors file")


def test_index_names_a_missing_tensor(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    good_file(src / "a.safetensors")
    index = src / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"l.weight": "a.safetensors",
                                                "l.gone": "a.safetensors"}}))
    assert_one_error(run(src, "-o", tmp_path / "out"), index,
                     "tensor 'l.gone' is mapped to 'a.safetensors', which "
                     "does not contain it")


def test_index_bad_json(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    index = src / "model.safetensors.index.json"
    index.write_text("{")
    assert_one_error(run(src, "-o", tmp_path / "out"), index, "bad JSON")


def test_scheme_without_compressed_tensors_layout(tmp_path):
    path = good_file(tmp_path / "model.safetensors")
    assert_one_error(run(path, "-o", tmp_path / "out", "--scheme=hif4"), path,
                     "--layout=compressed-tensors holds #fp4.mxfp4 with "
                     "block_size = 32 .* not #fp4.hif4; use --layout=fp4")


def test_include_of_a_vector(tmp_path):
    path = good_file(tmp_path / "model.safetensors")
    assert_one_error(run(path, "-o", tmp_path / "out", "--include=l.*"), path,
                     "tensor 'l.bias' \\(F32 2\\) matches --include but only "
                     "2-D F32, BF16 or F16 tensors can be quantized")


def test_bad_regex(tmp_path):
    path = good_file(tmp_path / "model.safetensors")
    proc = run(path, "-o", tmp_path / "out", "--include=re:([")
    assert proc.returncode == 1
    assert "invalid pattern 're:(['" in proc.stderr


def test_raw_options_are_refused_for_a_checkpoint(tmp_path):
    path = good_file(tmp_path / "model.safetensors")
    proc = run(path, "-o", tmp_path / "out", "--rows", "2")
    assert proc.returncode == 1
    assert "apply to raw tensor files" in proc.stderr
