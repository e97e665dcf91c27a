"""`pip install .` into a fresh virtual environment, then use it from there.

The wheel is built by scikit-build-core (pyproject.toml) with `build-dir`
pointed at the already built tree ($FP4_BUILD_DIR): CMake re-configures it
with the same settings, the build step finds nothing to do, and only the
install component fp4-python is packed, so this costs seconds rather than a
second full C++ build. Offline: no build isolation (scikit-build-core comes
from scripts/install_deps.sh) and `--no-index`; the venv sees the system's
site-packages for numpy only, while fp4 itself must come from the venv.

Checks, with FP4_LIB_DIR / FP4_BUILD_DIR unset and the repository off
sys.path: the package is the installed one, its version is the VERSION
file's, it loads libFP4CAPI.so from inside itself and runs a JIT call;
fp4-opt (--version, a pipeline, an error), fp4-quant and fp4-run are console
scripts in the venv's bin; fp4-run build uses the package's fp4-opt and
CUDA runtime; the bundled mlir-opt plugin loads into upstream mlir-opt.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("FP4_BUILD_DIR", ROOT / "build"))
VERSION = (ROOT / "VERSION").read_text().strip()
QUICKSTART = ROOT / "examples" / "quickstart.mlir"


def cache_value(name):
    for line in (BUILD / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    raise KeyError(name)


def clean_env(venv):
    env = {k: v for k, v in os.environ.items()
           if k not in ("FP4_LIB_DIR", "FP4_BUILD_DIR", "FP4_OPT",
                        "FP4_PYTHON_DIR", "FP4_REFERENCE_LIB", "PYTHONPATH")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    assert (BUILD / "CMakeCache.txt").is_file(), \
        f"{BUILD} is not a configured fp4-mlir build (scripts/build.sh)"
    pytest.importorskip("scikit_build_core",
                        reason="scripts/install_deps.sh installs it")
    work = tmp_path_factory.mktemp("pip")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(venv)], check=True)
    prefix = cache_value("CMAKE_INSTALL_PREFIX")
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install",
             "--no-index", "--no-build-isolation", "--no-deps", "-q",
             f"--config-settings=build-dir={BUILD}", str(ROOT)],
            capture_output=True, text=True, env=clean_env(venv), cwd=work)
        seconds = time.monotonic() - start
    finally:
        # scikit-build-core left its wheel staging directory as the install
        # prefix and its SKBUILD_* variables in the tree: put the tree back
        # as scripts/build.sh made it (a re-configure of about a second).
        subprocess.run(["cmake", "-U", "SKBUILD*",
                        f"-DCMAKE_INSTALL_PREFIX={prefix}", str(BUILD)],
                       check=True, stdout=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    print(f"\npip install . (build-dir={BUILD}): {seconds:.1f} s")
    return venv, work


def run(venv, work, *command, **kwargs):
    proc = subprocess.run([str(c) for c in command], capture_output=True,
                          text=True, env=clean_env(venv), cwd=work, **kwargs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


PROBE = r"""
import json, os, sys
import numpy as np
import fp4
from fp4 import _lib, ir
ctx = ir.Context()
m = ctx.parse_module(open(sys.argv[1]).read())
ir.PassManager.parse("fp4-quantize,fp4-fold-constants,"
                     "func.func(llvm-request-c-wrappers),fp4-pipeline-cpu",
                     ctx).run(m)
x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
y = ir.ExecutionEngine(m).invoke("linear", x,
                                 results=[ir.MemRef(np.float32, 2)])
np.save(sys.argv[2], y)
print(json.dumps({"file": fp4.__file__, "version": fp4.__version__,
                  "lib": _lib.load()._name, "path": sys.path}))
"""


def test_package_imports_and_jits(venv):
    venv, work = venv
    out = run(venv, work, venv / "bin" / "python", "-c", PROBE, QUICKSTART,
              work / "y.npy")
    info = json.loads(out.strip().splitlines()[-1])
    site = pathlib.Path(info["file"]).resolve()
    assert str(site).startswith(str(venv.resolve())), \
        f"fp4 imported from {site}, not from the venv"
    assert info["version"] == VERSION
    lib = pathlib.Path(info["lib"]).resolve()
    assert lib.parent == site.parent / "lib", f"loaded {lib}"
    assert not any(str(ROOT) == p for p in info["path"])
    # The JIT-compiled W4A4 MXFP4 linear layer against the f32 product.
    import re
    rows = re.findall(r"\[([^\[\]]+)\]", QUICKSTART.read_text().split(
        "dense<", 1)[1].split(">", 1)[0])
    w = np.array([[float(v) for v in r.split(",")] for r in rows], np.float32)
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    y, want = np.load(work / "y.npy"), x @ w
    error = np.linalg.norm(y - want) / np.linalg.norm(want)
    assert y.shape == (4, 8) and 0 < error < 0.3, error


def test_tools_on_path(venv):
    venv, work = venv
    bin_dir = venv / "bin"
    for tool in ("fp4-opt", "fp4-quant", "fp4-run"):
        assert shutil.which(tool, path=str(bin_dir)), f"no {tool} in {bin_dir}"
    version = run(venv, work, bin_dir / "fp4-opt", "--version")
    assert f"fp4-mlir version {VERSION}" in version
    assert "LLVM/MLIR 22." in version
    assert f"fp4-mlir version {VERSION}" in run(
        venv, work, bin_dir / "fp4-quant", "--version")
    lowered = run(venv, work, bin_dir / "fp4-opt", QUICKSTART,
                  "-fp4-quantize", "-fp4-fold-constants", "-fp4-pipeline-cpu")
    assert "llvm.func @linear" in lowered and "fp4." not in lowered
    # The console script passes the tool's exit status and diagnostics on.
    bad = subprocess.run([str(bin_dir / "fp4-opt"), str(QUICKSTART),
                          "--pass-pipeline=builtin.module(fp4-quantize{scheme=bogus})"],
                         capture_output=True, text=True, env=clean_env(venv))
    assert bad.returncode == 1 and "invalid scheme 'bogus'" in bad.stderr
    assert "usage: fp4-run" in run(venv, work, bin_dir / "fp4-run", "--help")
    shebang = (bin_dir / "fp4-run").read_text().splitlines()[0]
    assert shebang.startswith(f"#!{venv}"), shebang  # the venv's Python


def test_fp4_run_build_uses_the_package(venv):
    """fp4-run from the venv finds fp4-opt next to it and
    libfp4_cuda_runtime.so inside the installed package."""
    venv, work = venv
    package = next((venv / "lib").glob("python*/site-packages/fp4"))
    if not (package / "lib" / "libfp4_cuda_runtime.so").is_file():
        pytest.skip("built without the CUDA toolkit: no libfp4_cuda_runtime.so")
    if not (shutil.which("ptxas") or os.path.isfile("/usr/local/cuda/bin/ptxas")
            or os.environ.get("CUDA_ROOT")):
        pytest.skip("no ptxas")
    source = ROOT / "examples" / "gpu" / "linear.mlir"
    out = run(venv, work, venv / "bin" / "fp4-run", "build", source,
              "-o", work / "model" / "model.so")
    assert "fp4-run: wrote" in out
    assert (work / "model" / "libfp4_cuda_runtime.so").is_file()


def test_bundled_plugin_loads_in_mlir_opt(venv):
    venv, work = venv
    plugin = next((venv / "lib").glob("python*/site-packages/fp4/lib/FP4Plugin.so"))
    out = run(venv, work, "/usr/lib/llvm-22/bin/mlir-opt",
              f"--load-dialect-plugin={plugin}", f"--load-pass-plugin={plugin}",
              QUICKSTART, "--pass-pipeline=builtin.module(fp4-quantize)")
    assert "fp4.matmul" in out


def test_source_tree_version():
    """From the source tree (python/ on sys.path) the version is the VERSION
    file's too."""
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "import fp4; print(fp4.__version__)", str(ROOT / "python")],
        capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == VERSION
