"""fp4-quant as a tool: the files it writes (names, sizes, contents), its
summary line, its input types, and that bad invocations are clean errors.

Bit-exactness of the numbers against the C++ reference over all schemes is
test_jit_matches_reference.py; here the reference only checks that the files
hold what their names say.

Binaries come from $FP4_BUILD_DIR (default /work/main/build).
"""

import ctypes
import glob
import os
import re
import subprocess
import sys

import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import _lib  # noqa: E402
from fp4 import reference as ref  # noqa: E402

FP4_QUANT = os.path.join(BUILD_DIR, "bin", "fp4-quant")
FP4_OPT = os.path.join(BUILD_DIR, "bin", "fp4-opt")

SUMMARY_RE = re.compile(
    r"^fp4-quant: (?P<scheme>.+) (?P<rows>\d+)x(?P<cols>\d+) (?P<type>\w+) -> "
    r"(?P<prefix>.+)\.\*\.bin: (?P<files>\d+) files, (?P<bytes>\d+) bytes "
    r"\(build [\d.]+ s, compile [\d.]+ s, run [\d.]+ s, total [\d.]+ s\)$")


def fp4_quant(*args):
    assert os.path.exists(FP4_QUANT), f"{FP4_QUANT} not built"
    return subprocess.run([FP4_QUANT, *map(str, args)], capture_output=True,
                          text=True)


def ok(*args):
    proc = fp4_quant(*args)
    assert proc.returncode == 0, proc.stderr
    return proc


def summary(proc):
    m = SUMMARY_RE.match(proc.stdout.strip().splitlines()[-1])
    assert m, f"no summary line in:\n{proc.stdout}"
    return m


def reference_sizes(scheme, rows, cols, **options):
    """(codes, scales, aux) byte counts from fp4ReferenceComponentSizes."""
    params = ref.make_params(scheme, **options)
    sizes = [ctypes.c_int64() for _ in range(3)]
    assert _lib.load().fp4ReferenceComponentSizes(
        ctypes.byref(params), rows, cols, *map(ctypes.byref, sizes)) == 0
    return [s.value for s in sizes]


def write(path, array):
    np.ascontiguousarray(array).tofile(path)
    return str(path)


# (--scheme, reference scheme and options, component names) for every
# scheme family.
SCHEMES = [
    ("mxfp4", "mxfp4", {}, ["codes", "scales"]),
    ("mxfp4<block_size = 16>", "mxfp4", dict(block_size=16),
     ["codes", "scales"]),
    ("nvfp4", "nvfp4", {}, ["codes", "scales", "tensor_scale"]),
    ("nvfp4<tile2d = true>", "nvfp4", dict(tile2d=True),
     ["codes", "scales", "tensor_scale"]),
    ("hif4", "hif4", {}, ["codes", "metadata"]),
    ("mxfp4_macro", "macro", {}, ["codes", "scales", "factors"]),
    ("mxfp4_macro<macro_block = 0>", "macro", dict(macro_block=0),
     ["codes", "scales", "factors"]),
]


@pytest.mark.parametrize("scheme,ref_scheme,options,names", SCHEMES,
                         ids=[s[0] for s in SCHEMES])
def test_files_names_sizes_and_contents(tmp_path, scheme, ref_scheme, options,
                                        names):
    rows, cols = 32, 512
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(
        np.float32)
    prefix = tmp_path / "q"
    proc = ok(write(tmp_path / "x.f32", x), "--rows", rows, "--cols", cols,
              f"--scheme={scheme}", "-o", prefix, "--dequantize")

    expected = sorted([f"q.{n}.bin" for n in names] + ["q.dequantized.f32.bin"])
    assert sorted(os.path.basename(p) for p in glob.glob(f"{prefix}.*")) \
        == expected

    codes_bytes, scales_bytes, aux_bytes = reference_sizes(
        ref_scheme, rows, cols, **options)
    sizes = {n: os.path.getsize(f"{prefix}.{n}.bin") for n in names}
    assert sizes["codes"] == codes_bytes == rows * cols // 2
    assert sizes.get("scales", sizes.get("metadata")) == scales_bytes
    assert sizes.get("factors", 0) == aux_bytes
    assert sizes.get("tensor_scale", 4) == 4
    assert os.path.getsize(f"{prefix}.dequantized.f32.bin") == rows * cols * 4

    m = summary(proc)
    assert (m["rows"], m["cols"], m["type"]) == (str(rows), str(cols), "f32")
    assert m["prefix"] == str(prefix)
    assert int(m["files"]) == len(names) + 1
    assert int(m["bytes"]) == sum(sizes.values()) + rows * cols * 4
    # The summary names the canonical scheme attribute.
    assert m["scheme"].startswith("#fp4." + scheme.split("<")[0])

    q = ref.quantize(x, ref_scheme, **options)
    codes = np.fromfile(f"{prefix}.codes.bin", np.uint8).reshape(rows, -1)
    assert np.array_equal(codes, q.codes)
    deq = np.fromfile(f"{prefix}.dequantized.f32.bin", np.float32)
    assert np.array_equal(deq.reshape(rows, cols).view(np.uint32),
                          ref.dequantize(q).view(np.uint32))


def test_no_dequantized_file_unless_asked(tmp_path):
    x = np.ones((1, 32), np.float32)
    ok(write(tmp_path / "x.f32", x), "--rows", 1, "--cols", 32, "-o",
       tmp_path / "q")
    assert sorted(os.listdir(tmp_path)) == ["q.codes.bin", "q.scales.bin",
                                            "x.f32"]


def test_outputs_are_replaced(tmp_path):
    """A second run over the same prefix replaces every file (no stale bytes
    from a longer earlier output)."""
    prefix = tmp_path / "q"
    big = np.full((4, 64), 3.0, np.float32)
    ok(write(tmp_path / "big.f32", big), "--rows", 4, "--cols", 64, "-o",
       prefix)
    small = np.full((1, 32), -0.5, np.float32)
    ok(write(tmp_path / "small.f32", small), "--rows", 1, "--cols", 32, "-o",
       prefix)
    q = ref.quantize(small, "mxfp4")
    assert np.fromfile(f"{prefix}.codes.bin", np.uint8).tobytes() \
        == q.codes.tobytes()
    assert np.fromfile(f"{prefix}.scales.bin", np.uint8).tobytes() \
        == q.scales.tobytes()


@pytest.mark.parametrize("input_type", ["bf16", "f16"])
def test_half_inputs_match_f32(tmp_path, input_type):
    """bf16/f16 files quantize like the f32 file of the same values."""
    rows, cols = 8, 256
    rng = np.random.default_rng(2)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if input_type == "bf16":
        bits = (ref.round_to_bf16(x).view(np.uint32) >> 16).astype(np.uint16)
        x = (bits.astype(np.uint32) << 16).view(np.float32)
        half = bits
    else:
        half = x.astype(np.float16)
        x = half.astype(np.float32)
    for scheme in ("nvfp4", "hif4"):
        ok(write(tmp_path / "x.f32", x), "--rows", rows, "--cols", cols,
           f"--scheme={scheme}", "-o", tmp_path / "a", "--dequantize")
        proc = ok(write(tmp_path / "x.half", half), "--rows", rows, "--cols",
                  cols, f"--input-type={input_type}", f"--scheme={scheme}",
                  "-o", tmp_path / "b", "--dequantize")
        assert summary(proc)["type"] == input_type
        for a in sorted(glob.glob(str(tmp_path / "a.*.bin"))):
            b = a.replace(f"{tmp_path}/a.", f"{tmp_path}/b.")
            assert open(a, "rb").read() == open(b, "rb").read(), (scheme, a)


def test_print_ir_is_valid_fp4_ir(tmp_path):
    """--print-ir shows the module that is lowered; fp4-opt accepts it."""
    x = np.ones((2, 64), np.float32)
    proc = ok(write(tmp_path / "x.f32", x), "--rows", 2, "--cols", 64,
              "--scheme=#fp4.mxfp4_macro<macro_block = 64, search = 4>", "-o",
              tmp_path / "q", "--print-ir", "--dequantize")
    ir = "\n".join(proc.stdout.splitlines()[:-1])
    assert "fp4.quantize" in ir and "fp4.dequantize" in ir
    check = subprocess.run([FP4_OPT, "-"], input=ir, capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stderr
    assert "#fp4.mxfp4_macro<macro_block = 64, search = 4>" in check.stdout


BAD_INVOCATIONS = [
    # (arguments after the input path, expected stderr fragment)
    (["--rows", 2, "--cols", 32, "--scheme=#fp4.mxfp4<block_size = 3>"],
     "block_size must be an even number"),
    (["--rows", 2, "--cols", 32, "--scheme=#fp4.mxfp4_macro<search = 999>"],
     "search must be in [0, 256]"),
    (["--rows", 2, "--cols", 32, "--scheme=#fp4.nvfp4<"], "invalid --scheme"),
    (["--rows", 2, "--cols", 32, "--scheme="], "invalid --scheme"),
    (["--rows", 2, "--cols", 32, "--scheme=f32"], "invalid --scheme"),
    (["--rows", 2, "--cols", 32, "--scheme=#fp4.tensor"], "invalid --scheme"),
    (["--rows", 2, "--cols", 64], "has 256 bytes, but a 2x64 f32 tensor"),
    (["--rows", -1, "--cols", 32], "must be positive"),
    (["--rows", 1 << 40, "--cols", 1 << 40], "too large"),
    (["--rows", 2, "--cols", 32, "--input-type=f64"], "input-type"),
    (["--rows", "two", "--cols", 32], "rows"),
    (["--cols", 32], "rows"),
]


@pytest.mark.parametrize("args,message", BAD_INVOCATIONS,
                         ids=[str(i) for i in range(len(BAD_INVOCATIONS))])
def test_bad_invocations_fail_cleanly(tmp_path, args, message):
    path = write(tmp_path / "x.f32", np.zeros((2, 32), np.float32))
    proc = fp4_quant(path, *args, "-o", tmp_path / "q")
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert message in proc.stderr
    assert "Stack dump" not in proc.stderr
    assert not glob.glob(str(tmp_path / "q.*"))


def test_directory_and_empty_inputs(tmp_path):
    proc = fp4_quant(tmp_path, "--rows", 1, "--cols", 32, "-o", tmp_path / "q")
    assert proc.returncode == 1
    assert "is not a regular file" in proc.stderr
    empty = tmp_path / "empty.f32"
    empty.write_bytes(b"")
    proc = fp4_quant(empty, "--rows", 1, "--cols", 32, "-o", tmp_path / "q")
    assert proc.returncode == 1
    assert "has 0 bytes, but a 1x32 f32 tensor needs 128" in proc.stderr


def test_large_input_streams(tmp_path):
    """A 4096 x 4096 f32 tensor (64 MiB): memory-mapped in and out."""
    rows = cols = 4096
    x = np.random.default_rng(3).standard_normal((rows, cols),
                                                 dtype=np.float32)
    proc = ok(write(tmp_path / "x.f32", x), "--rows", rows, "--cols", cols,
              "--scheme=nvfp4", "-o", tmp_path / "q")
    q = ref.quantize(x, "nvfp4")
    assert np.fromfile(tmp_path / "q.codes.bin", np.uint8).tobytes() \
        == q.codes.tobytes()
    assert np.fromfile(tmp_path / "q.scales.bin", np.uint8).tobytes() \
        == q.scales.tobytes()
    assert int(summary(proc)["bytes"]) == rows * cols // 2 + rows * cols // 16 + 4
