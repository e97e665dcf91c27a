"""libFP4Reference.so: the reference quantizers without MLIR, for the GPU
machine's correctness checks. fp4.reference run through it (in a subprocess
with FP4_REFERENCE_LIB set, and through the fallback when libFP4CAPI.so is
absent) must produce the same bytes as through libFP4CAPI.so, and the
library must not depend on libMLIR / libLLVM.

Libraries come from $FP4_BUILD_DIR/lib (default /work/main/build/lib).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
LIB_DIR = os.path.join(BUILD_DIR, "lib")
REFERENCE_LIB = os.path.join(LIB_DIR, "libFP4Reference.so")
os.environ.setdefault("FP4_LIB_DIR", LIB_DIR)
sys.path.insert(0, os.path.join(ROOT, "python"))
from fp4 import reference as ref  # noqa: E402

# (scheme, options): every format and the rules with their own code paths.
CASES = [
    ("mxfp4", {}),
    ("mxfp4", {"scale_rounding": "even"}),
    ("mxfp4", {"scale_rounding": "rceil", "rounding": "stochastic", "seed": 7}),
    ("mxfp4", {"block_size": 16, "rounding": "half_away"}),
    ("nvfp4", {}),
    ("nvfp4", {"four_over_six": True, "tile2d": True}),
    ("hif4", {}),
    ("macro", {"macro_block": 256, "search": 4}),
]

# Runs the same quantizations in a fresh process and prints their bytes.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from fp4 import reference as ref, _lib
    x = np.load(sys.argv[2])
    out = {}
    for i, (scheme, options) in enumerate(json.loads(sys.argv[3])):
        q = ref.quantize(x, scheme, **options)
        parts = [q.codes.tobytes(), q.scales.tobytes(),
                 b"" if q.aux is None else q.aux.tobytes(),
                 np.float32(q.tensor_scale or 0).tobytes(),
                 ref.dequantize(q).tobytes()]
        out[str(i)] = [p.hex() for p in parts]
    maps = open("/proc/self/maps").read()
    out["loaded"] = [name for name in ("libFP4CAPI", "libFP4Reference",
                                       "libMLIR", "libLLVM") if name in maps]
    print(json.dumps(out))
    """)


def reference_bytes(x):
    out = {}
    for i, (scheme, options) in enumerate(CASES):
        q = ref.quantize(x, scheme, **options)
        parts = [q.codes.tobytes(), q.scales.tobytes(),
                 b"" if q.aux is None else q.aux.tobytes(),
                 np.float32(q.tensor_scale or 0).tobytes(),
                 ref.dequantize(q).tobytes()]
        out[str(i)] = [p.hex() for p in parts]
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(2024)
    x = rng.standard_normal((32, 512)).astype(np.float32)
    x[3, 17] = 40.0  # an outlier block
    x[5, :64] = 0.0  # an all-zero block
    path = tmp_path_factory.mktemp("ref") / "x.npy"
    np.save(path, x)
    return x, path


def run_child(python_dir, x_path, env):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, python_dir, str(x_path),
         json.dumps(CASES)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_reference_lib_matches_capi_byte_for_byte(data):
    x, x_path = data
    assert os.path.isfile(REFERENCE_LIB), f"{REFERENCE_LIB} not built"
    env = dict(os.environ, FP4_REFERENCE_LIB=REFERENCE_LIB)
    child = run_child(os.path.join(ROOT, "python"), x_path, env)
    assert child.pop("loaded") == ["libFP4Reference"]
    expected = reference_bytes(x)  # this process: libFP4CAPI.so
    for i, (scheme, options) in enumerate(CASES):
        assert child[str(i)] == expected[str(i)], (scheme, options)


def test_reference_lib_is_the_fallback_without_capi(data, tmp_path):
    """An install-like tree (python/fp4 next to lib/) that has only
    libFP4Reference.so: fp4.reference finds and uses it."""
    x, x_path = data
    shutil.copytree(os.path.join(ROOT, "python", "fp4"),
                    tmp_path / "python" / "fp4",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "lib").mkdir()
    shutil.copy(REFERENCE_LIB, tmp_path / "lib")
    env = {k: v for k, v in os.environ.items()
           if k not in ("FP4_LIB_DIR", "FP4_BUILD_DIR", "FP4_REFERENCE_LIB")}
    child = run_child(str(tmp_path / "python"), x_path, env)
    assert child.pop("loaded") == ["libFP4Reference"]
    assert child == reference_bytes(x)


def test_missing_reference_lib_is_a_clear_error(data, tmp_path):
    _, x_path = data
    env = dict(os.environ, FP4_REFERENCE_LIB=str(tmp_path / "nope.so"))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.join(ROOT, "python"),
         str(x_path), json.dumps(CASES[:1])], capture_output=True, text=True,
        env=env)
    assert proc.returncode != 0
    assert f"FP4_REFERENCE_LIB={tmp_path / 'nope.so'}: no such file" \
        in proc.stderr


def glibc_requirement(library):
    """The newest GLIBC_x.y symbol version `library` needs, as (x, y)."""
    readelf = shutil.which("readelf") or "/usr/lib/llvm-22/bin/llvm-readelf"
    text = subprocess.run([readelf, "--dyn-syms", "-W", library],
                          capture_output=True, text=True, check=True).stdout
    versions = [(int(a), int(b)) for a, b in
                re.findall(r"@+GLIBC_(\d+)\.(\d+)", text)]
    assert versions, text[:500]
    return max(versions)


def needed_libraries(library):
    readelf = shutil.which("readelf") or "/usr/lib/llvm-22/bin/llvm-readelf"
    dynamic = subprocess.run([readelf, "-d", library], capture_output=True,
                             text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in dynamic.splitlines()
            if "(NEEDED)" in line]


def test_reference_lib_has_no_mlir_or_llvm_dependency():
    needed = needed_libraries(REFERENCE_LIB)
    assert needed, REFERENCE_LIB
    readelf = shutil.which("readelf") or "/usr/lib/llvm-22/bin/llvm-readelf"
    dynamic = subprocess.run([readelf, "-d", REFERENCE_LIB], capture_output=True,
                             text=True, check=True).stdout
    assert "PATH)" not in dynamic, "no RPATH/RUNPATH: " + dynamic
    assert not [n for n in needed if "MLIR" in n or "LLVM" in n], needed
    if shutil.which("ldd"):
        resolved = subprocess.run(["ldd", REFERENCE_LIB], capture_output=True,
                                  text=True).stdout
        assert "libMLIR" not in resolved and "libLLVM" not in resolved, resolved
    # It travels to a machine with another Linux: an old glibc must do
    # (manylinux_2_28 at most).
    assert glibc_requirement(REFERENCE_LIB) <= (2, 28)
    # The C entry points fp4.reference declares are all there.
    symbols = subprocess.run(
        [shutil.which("nm") or "/usr/lib/llvm-22/bin/llvm-nm", "-D",
         "--defined-only", REFERENCE_LIB],
        capture_output=True, text=True, check=True).stdout.split()
    for name in ("fp4ReferenceQuantize", "fp4ReferenceDequantize",
                 "fp4HadamardRotate", "fp4DecomposeError", "fp4SparseResidual"):
        assert name in symbols, name


def test_build_gpu_libs_script(data, tmp_path):
    """scripts/build_gpu_libs.sh (the GPU machine's way to get the libraries
    without CMake or MLIR) builds a reference library that gives the same
    bytes, and the runtime where cuda.h exists."""
    x, x_path = data
    cxx = shutil.which("clang++-22") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    proc = subprocess.run(
        ["bash", os.path.join(ROOT, "scripts", "build_gpu_libs.sh"),
         str(tmp_path)], capture_output=True, text=True,
        env=dict(os.environ, CXX=cxx))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built = str(tmp_path / "libFP4Reference.so")
    child = run_child(os.path.join(ROOT, "python"), x_path,
                      dict(os.environ, FP4_REFERENCE_LIB=built))
    assert child.pop("loaded") == ["libFP4Reference"]
    assert child == reference_bytes(x)
    if os.path.isfile("/usr/local/cuda/include/cuda.h"):
        assert (tmp_path / "libfp4_cuda_runtime.so").is_file()
