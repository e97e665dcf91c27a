"""The GPU run path without a GPU: libfp4_cuda_runtime.so, fp4-run exec,
fp4.cuda and fp4.gpu against fake_libcuda.c, a host-memory stand-in for
libcuda.so.1 that runs the test kernel `scale` (b = 2 * a) on the host.

This checks the plumbing between generated host code, the runtime and the
Python launchers (module loading from cubin and PTX, kernel parameter
arrays, device copies, result files, error reporting and exit statuses). The
kernels themselves run on the GPU machine (bench/).

Needs libfp4_cuda_runtime.so and fp4-run in $FP4_BUILD_DIR (default
/work/main/build; skipped where the CUDA toolkit is absent), mlir-opt and
mlir-translate / llc / clang from LLVM 22, and a C compiler.
"""

import ctypes
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
RUNTIME = os.path.join(BUILD_DIR, "lib", "libfp4_cuda_runtime.so")
FP4_RUN = os.path.join(BUILD_DIR, "bin", "fp4-run")
LLVM_BIN = "/usr/lib/llvm-22/bin"
MLIR_OPT = shutil.which("mlir-opt") or os.path.join(LLVM_BIN, "mlir-opt")
CUDA_ROOT = os.environ.get("CUDA_ROOT", "/usr/local/cuda")
sys.path.insert(0, os.path.join(ROOT, "python"))

pytestmark = pytest.mark.skipif(
    not os.path.isfile(RUNTIME),
    reason=f"{RUNTIME} not built (no CUDA toolkit)")

KERNEL_MODULE = textwrap.dedent("""\
    module attributes {gpu.container_module} {
      gpu.module @kernels {
        gpu.func @scale(%a: memref<256xf32>, %b: memref<256xf32>) kernel {
          %tid = gpu.thread_id x
          %bid = gpu.block_id x
          %bdim = gpu.block_dim x
          %t = arith.muli %bid, %bdim : index
          %i = arith.addi %t, %tid : index
          %v = memref.load %a[%i] : memref<256xf32>
          %two = arith.constant 2.0 : f32
          %w = arith.mulf %v, %two : f32
          memref.store %w, %b[%i] : memref<256xf32>
          gpu.return
        }
      }
      func.func @double(%a: memref<256xf32>, %b: memref<256xf32>)
          attributes {llvm.emit_c_interface} {
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c128 = arith.constant 128 : index
        // Exactly 48 KiB of dynamic shared memory: with the static byte
        // LLVM's dynamic-shared symbol counts, beyond the default limit, so
        // the runtime must raise it (the fake driver counts that byte).
        %smem = arith.constant 49152 : i32
        gpu.launch_func @kernels::@scale blocks in (%c2, %c1, %c1)
            threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem
            args(%a : memref<256xf32>, %b : memref<256xf32>)
        return
      }
    }
    """)


def pipeline(fmt):
    binary = f"format={fmt}" + (f" toolkit={CUDA_ROOT}" if fmt == "bin" else "")
    return ("builtin.module(nvvm-attach-target{chip=sm_90 O=3 features=+ptx80},"
            "gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),"
            "gpu-to-llvm{use-bare-pointers-for-kernels=1},"
            f"gpu-module-to-binary{{{binary}}},convert-to-llvm,"
            "reconcile-unrealized-casts)")


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    """A directory holding the fake libcuda.so.1."""
    cc = shutil.which("clang-22") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the fake driver")
    out = tmp_path_factory.mktemp("fake-driver")
    source = os.path.join(os.path.dirname(__file__), "fake_libcuda.c")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o",
                    str(out / "libcuda.so.1"), source], check=True)
    return out


def fake_env(fake_driver, log, **extra):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(fake_driver) + os.pathsep + env.get(
        "LD_LIBRARY_PATH", "")
    env["FAKE_CUDA_LOG"] = str(log)
    env.update(extra)
    return env


@pytest.fixture(scope="module", params=["bin", "isa"])
def model(request, tmp_path_factory):
    """model.so built by fp4-run with a cubin (mgpuModuleLoad) or PTX
    (mgpuModuleLoadJIT) image."""
    fmt = request.param
    if fmt == "bin" and not os.path.isfile(os.path.join(CUDA_ROOT, "bin",
                                                        "ptxas")):
        pytest.skip("no ptxas for format=bin")
    out = tmp_path_factory.mktemp(f"model-{fmt}")
    source = out / "double.mlir"
    source.write_text(KERNEL_MODULE)
    proc = subprocess.run(
        [FP4_RUN, "build", str(source), "-o", str(out / "model.so"),
         "--fp4-opt", MLIR_OPT, "--pass-pipeline", pipeline(fmt)],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return fmt, out / "model.so"


def run_exec(model_path, env, *inputs, out_dir):
    args = [FP4_RUN, "exec", str(model_path), "--entry", "double",
            "--output-dir", str(out_dir)]
    for path in inputs:
        args += ["--input", str(path)]
    return subprocess.run(args, capture_output=True, text=True, env=env)


def test_exec_runs_the_model_through_the_runtime(model, fake_driver, tmp_path):
    fmt, model_path = model
    a = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    log = tmp_path / "calls.log"
    proc = run_exec(model_path, fake_env(fake_driver, log), tmp_path / "a.npy",
                    out_dir=tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    # The trailing argument `b` is an output: allocated, poisoned, written
    # by the kernel, copied back.
    result = np.load(tmp_path / "out" / "result0.npy")
    np.testing.assert_array_equal(result, 2 * a)
    assert not (tmp_path / "out" / "result1.npy").exists()
    calls = log.read_text().splitlines()
    image = "cubin" if fmt == "bin" else "ptx"
    assert f"cuModuleLoadDataEx {image}" in calls
    assert "cuModuleGetFunction scale" in calls
    assert calls.index("cuFuncSetAttribute scale 8 49152") < calls.index(
        "cuLaunchKernel scale grid=2,1,1 block=128,1,1 smem=49152")
    # The module is loaded once, by model.so's constructor, and unloaded at
    # exit.
    assert sum(c.startswith("cuModuleLoadDataEx") for c in calls) == 1
    assert calls[-1] == "cuModuleUnload"


def test_exec_repeat_times_the_same_call(model, fake_driver, tmp_path):
    _, model_path = model
    a = np.arange(256, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    log = tmp_path / "calls.log"
    proc = subprocess.run(
        [FP4_RUN, "exec", str(model_path), "--entry", "double", "--input",
         str(tmp_path / "a.npy"), "--output-dir", str(tmp_path / "out"),
         "--repeat", "3"],
        capture_output=True, text=True, env=fake_env(fake_driver, log))
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "result0.npy"),
                                  2 * a)
    timing = json.loads((tmp_path / "out" / "timing.json").read_text())
    assert timing["entry"] == "double" and timing["memory"] == "host"
    assert len(timing["times_s"]) == 3
    assert timing["median_s"] == sorted(timing["times_s"])[1]
    assert all(t > 0 for t in timing["times_s"]) and timing["first_s"] > 0
    # One launch for the checked call and one per repeat.
    calls = log.read_text().splitlines()
    assert sum(c.startswith("cuLaunchKernel scale") for c in calls) == 4
    assert "median" in proc.stdout


def test_exec_repeat_rejects_a_negative_count(model, tmp_path):
    _, model_path = model
    proc = subprocess.run(
        [FP4_RUN, "exec", str(model_path), "--entry", "double",
         "--output-dir", str(tmp_path / "out"), "--repeat", "-2"],
        capture_output=True, text=True)
    assert proc.returncode == 2
    assert "'-2' is not a count" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exec_without_device_exits_3(model, fake_driver, tmp_path):
    _, model_path = model
    np.save(tmp_path / "a.npy", np.ones(256, np.float32))
    env = fake_env(fake_driver, tmp_path / "log", FAKE_CUDA_NO_DEVICE="1")
    proc = run_exec(model_path, env, tmp_path / "a.npy", out_dir=tmp_path / "o")
    assert proc.returncode == 3
    assert ("fp4-run: error: no usable GPU: cuInit(0) failed: "
            "CUDA_ERROR_NO_DEVICE") in proc.stderr
    assert not (tmp_path / "o").exists()


def test_exec_without_driver_exits_3(model, tmp_path):
    _, model_path = model
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has an NVIDIA driver")
    except OSError:
        pass
    np.save(tmp_path / "a.npy", np.ones(256, np.float32))
    proc = run_exec(model_path, dict(os.environ), tmp_path / "a.npy",
                    out_dir=tmp_path / "o")
    assert proc.returncode == 3
    assert "fp4-run: error: no NVIDIA driver: libcuda.so.1 cannot be loaded" \
        in proc.stderr


def test_runtime_reports_errors_to_the_caller(model, fake_driver, tmp_path):
    """Without a device the mgpu* calls print the failing call and keep the
    first error for fp4RuntimeGetLastError (read once, then cleared)."""
    _, model_path = model
    script = textwrap.dedent(f"""
        import ctypes
        rt = ctypes.CDLL({str(model_path.parent / 'libfp4_cuda_runtime.so')!r},
                         mode=ctypes.RTLD_GLOBAL)
        rt.fp4RuntimeGetLastError.restype = ctypes.c_int32
        rt.fp4RuntimeGetLastErrorMessage.restype = ctypes.c_char_p
        ctypes.CDLL({str(model_path)!r})  # constructor: mgpuModuleLoad*
        print(rt.fp4RuntimeGetLastErrorMessage().decode())
        print(rt.fp4RuntimeGetLastError(), rt.fp4RuntimeGetLastError())
        """)
    env = fake_env(fake_driver, tmp_path / "log", FAKE_CUDA_NO_DEVICE="1")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "cuInit(0) failed: CUDA_ERROR_NO_DEVICE (fake driver error)"
    assert lines[1] == "100 0"
    assert "fp4-cuda-runtime: cuInit(0) failed: CUDA_ERROR_NO_DEVICE" \
        in proc.stderr


# ---------------------------------------------------------------------------
# fp4.cuda and fp4.gpu on the fake driver (in a subprocess: the driver is
# chosen when libcuda.so.1 is first loaded)
# ---------------------------------------------------------------------------

FAKE_PTX = ".version 8.0\n.target sm_90\n.address_size 64\n"


def run_python(fake_driver, tmp_path, body):
    script = "import sys\nsys.path.insert(0, %r)\n" % os.path.join(
        ROOT, "python") + textwrap.dedent(body)
    log = tmp_path / "calls.log"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, env=fake_env(fake_driver, log),
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, log.read_text().splitlines() if log.exists() else []


def test_cuda_module_launch_and_copies(fake_driver, tmp_path):
    out, calls = run_python(fake_driver, tmp_path, f"""
        import numpy as np
        from fp4 import cuda
        cuda.init()
        assert cuda.compute_capability() == (9, 0)
        module = cuda.Module({FAKE_PTX!r})          # PTX text
        scale = module.function("scale")
        a = np.arange(512, dtype=np.float32)
        x = cuda.to_device(a)
        y = cuda.mem_alloc(a.nbytes)
        cuda.memset_d32(y, 0x7FC00000, a.size)      # poison with NaN
        start, end = cuda.Event().record(), cuda.Event()
        scale.launch((4,), (128,), [x, y.ptr])
        end.record()
        end.synchronize()
        assert start.elapsed_ms(end) == 0.5
        cuda.synchronize()
        b = cuda.from_device(y, a.shape, np.float32)
        assert (b == 2 * a).all(), b[:4]
        scale.launch((1,), (1,), [x, y], shared_bytes=100 * 1024)
        # Exactly 48 KiB dynamic plus the static byte exceed the default.
        other = module.function("other")
        other.launch((1,), (1,), [x, y], shared_bytes=48 * 1024)
        other.launch((1,), (1,), [x, y], shared_bytes=48 * 1024)  # raised once
        try:
            cuda.Module(b"not an image")
        except cuda.CudaError as error:
            print("ERROR", error.name, "|", error.log)
        """)
    assert "ERROR CUDA_ERROR_INVALID_IMAGE | fake ptxas: not a cubin or PTX" in out
    assert "cuModuleLoadDataEx ptx" in calls
    assert "cuLaunchKernel scale grid=4,1,1 block=128,1,1 smem=0" in calls
    # Above 48 KiB the function's limit is raised first.
    assert "cuFuncSetAttribute scale 8 102400" in calls
    assert "cuLaunchKernel scale grid=1,1,1 block=1,1,1 smem=102400" in calls
    assert calls.index("cuFuncSetAttribute other 8 49152") < calls.index(
        "cuLaunchKernel other grid=1,1,1 block=1,1,1 smem=49152")
    assert calls.count("cuFuncSetAttribute other 8 49152") == 1
    assert calls.count(
        "cuLaunchKernel other grid=1,1,1 block=1,1,1 smem=49152") == 2


MANIFEST = {
    "chip": "sm_90",
    "kernels": [{
        "name": "scale", "module": "kernels", "image": "kernels.ptx",
        "op": "test.scale", "variant": "host-emulated",
        "grid": [2, 1, 1], "block": [128, 1, 1], "shared_bytes": 65536,
        "args": [{"name": "lhs", "dtype": "float32", "shape": [256]},
                 {"name": "result", "dtype": "float32", "shape": [256]}],
    }],
}


def write_kernel_dir(path, manifest=MANIFEST):
    path.mkdir(parents=True, exist_ok=True)
    (path / "kernels.json").write_text(json.dumps(manifest))
    (path / "kernels.ptx").write_text(FAKE_PTX)
    return path


def test_gpu_kernel_set_launches_with_manifest_config(fake_driver, tmp_path):
    kernels = write_kernel_dir(tmp_path / "kernels")
    out, calls = run_python(fake_driver, tmp_path, f"""
        import numpy as np
        from fp4 import cuda, gpu

        class Array:  # a cupy-like device array
            def __init__(self, buffer, shape, typestr):
                self.buffer = buffer
                self.__cuda_array_interface__ = {{
                    "shape": shape, "typestr": typestr, "strides": None,
                    "data": (buffer.ptr, False), "version": 3}}

        ks = gpu.load({str(kernels)!r})
        print(ks.names(), ks.chip)
        cuda.init()
        a = np.linspace(-1, 1, 256, dtype=np.float32)
        x = Array(cuda.to_device(a), (256,), "<f4")
        y = Array(cuda.mem_alloc(1024), (256,), "<f4")
        ks["scale"](x, y)
        ks["scale"](x, y)   # the module is loaded once
        cuda.synchronize()
        b = cuda.from_device(y.buffer, (256,), np.float32)
        assert (b == 2 * a).all()
        ks["scale"](x.buffer, y.buffer.ptr)  # DeviceBuffer and raw pointer
        print("OK")
        """)
    assert "['scale'] sm_90" in out and "OK" in out
    assert calls.count("cuModuleLoadDataEx ptx") == 1
    assert calls.count(
        "cuLaunchKernel scale grid=2,1,1 block=128,1,1 smem=65536") == 3
    assert calls.count("cuFuncSetAttribute scale 8 65536") == 1


def test_importing_gpu_modules_loads_no_mlir(tmp_path):
    """fp4.cuda / fp4.gpu / fp4.memref must work on the GPU machine, which
    has no libMLIR.so: importing them (and loading a manifest) must not load
    libFP4CAPI.so, libMLIR or libcuda."""
    write_kernel_dir(tmp_path / "k")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.join(ROOT, 'python')!r})
        import fp4.cuda, fp4.gpu, fp4.memref
        fp4.gpu.load({str(tmp_path / 'k')!r})
        maps = open("/proc/self/maps").read()
        for name in ("libFP4CAPI", "libMLIR", "libLLVM", "libcuda"):
            print(name, name in maps)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["libFP4CAPI", "False", "libMLIR", "False",
                                   "libLLVM", "False", "libcuda", "False"]


def _readelf(*args):
    readelf = shutil.which("readelf") or os.path.join(LLVM_BIN, "llvm-readelf")
    return subprocess.run([readelf, *args], capture_output=True, text=True,
                          check=True).stdout


def test_runtime_library_travels(model):
    """The runtime and model.so run on the GPU machine, another Linux: they
    need only the driver and libc (an old glibc), no RUNPATH that could pick
    up a stub or the working directory, and the runtime exports nothing but
    its C ABI."""
    _, model_path = model
    for path, needed in ((RUNTIME, ["libcuda.so.1", "libc.so.6"]),
                         (str(model_path), ["libfp4_cuda_runtime.so",
                                            "libm.so.6", "libc.so.6"])):
        dynamic = _readelf("-d", path)
        assert [l.split("[")[1].rstrip("]") for l in dynamic.splitlines()
                if "(NEEDED)" in l] == needed, dynamic
        runpath = [l for l in dynamic.splitlines() if "PATH)" in l]
        if path == RUNTIME:
            assert runpath == [], runpath
        else:
            assert len(runpath) == 1 and runpath[0].endswith("[$ORIGIN]")
        versions = re.findall(r"@+GLIBC_(\d+)\.(\d+)",
                              _readelf("--dyn-syms", "-W", path))
        assert max((int(a), int(b)) for a, b in versions) <= (2, 28)
    nm = shutil.which("nm") or os.path.join(LLVM_BIN, "llvm-nm")
    exported = subprocess.run([nm, "-D", "--defined-only", RUNTIME],
                              capture_output=True, text=True,
                              check=True).stdout.split()[2::3]
    assert exported and all(s.startswith(("mgpu", "fp4Runtime"))
                            for s in exported), exported
