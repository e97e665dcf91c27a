"""fp4.gpu without a GPU: kernels.json validation, argument checks against
the manifest (count, dtype, shape, contiguity, device memory) with messages
that name the kernel and the argument, the launch a valid call makes (a
recording launcher stands in for CUDA), and compile()'s error reporting.

fp4-opt comes from $FP4_BUILD_DIR (default /work/main/build).
"""

import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
sys.path.insert(0, os.path.join(ROOT, "python"))
from fp4 import cuda, gpu  # noqa: E402

K = 4096
N = 14336
MANIFEST = {
    "chip": "sm_90",
    "kernels": [
        {"name": "decode_mm", "module": "fp4_kernels", "image": "fp4_kernels.ptx",
         "op": "fp4.matmul", "variant": "decode_w4a16",
         "grid": [1792, 1, 1], "block": [128, 1, 1], "shared_bytes": 0,
         "args": [
             {"name": "lhs", "dtype": "bfloat16", "shape": [1, K]},
             {"name": "rhs.codes", "dtype": "uint8", "shape": [N, K // 2]},
             {"name": "rhs.scales", "dtype": "uint8", "shape": [N, K // 32]},
             {"name": "result", "dtype": "float32", "shape": [1, N]}]},
        {"name": "nv_quant", "module": "fp4_kernels", "image": "fp4_kernels.ptx",
         "op": "fp4.quantize", "variant": "nvfp4",
         "grid": [16, 1, 1], "block": [256, 1, 1], "shared_bytes": 98304,
         "args": [
             {"name": "input", "dtype": "bfloat16", "shape": [16, K]},
             {"name": "result.codes", "dtype": "uint8", "shape": [16, K // 2]},
             {"name": "result.scales", "dtype": "uint8", "shape": [16, K // 16]},
             {"name": "result.tensor_scale", "dtype": "float32", "shape": []}]},
    ],
}


class RecordingLauncher:
    def __init__(self):
        self.launches = []

    def launch(self, kernel, pointers, stream=None, device=None):
        self.launches.append((kernel.name, kernel.grid, kernel.block,
                              kernel.shared_bytes, list(pointers), stream,
                              device))


class DeviceArray:
    """A cupy-like array: __cuda_array_interface__ only."""

    def __init__(self, shape, typestr, ptr=0x7F0000000000, strides=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "strides": strides,
            "data": (ptr, False), "version": 3}


class FakeDevice:
    def __init__(self, index):
        self.type, self.index = "cuda", index


def _torch_like(shape, dtype, ptr=0x7E0000000000, contiguous=True, cuda=True,
                device=0):
    """Duck-typed like a torch.Tensor (fp4.gpu recognizes torch by module)."""
    cls = type("Tensor", (), {"__module__": "torch"})
    t = cls()
    t.shape, t.dtype = tuple(shape), f"torch.{dtype}"
    t.is_cuda, t.device = cuda, FakeDevice(device if cuda else None)
    t.data_ptr = lambda: ptr
    t.is_contiguous = lambda: contiguous
    return t


@pytest.fixture
def kernel_dir(tmp_path):
    (tmp_path / "kernels.json").write_text(json.dumps(MANIFEST))
    (tmp_path / "fp4_kernels.ptx").write_text(".version 8.0\n.target sm_90\n")
    return tmp_path


@pytest.fixture
def kernels(kernel_dir):
    launcher = RecordingLauncher()
    return gpu.load(kernel_dir, launcher=launcher), launcher


def decode_args():
    return [DeviceArray((1, K), "<V2", 0x1000),
            DeviceArray((N, K // 2), "|u1", 0x2000),
            DeviceArray((N, K // 32), "|u1", 0x3000),
            DeviceArray((1, N), "<f4", 0x4000)]


def test_valid_call_launches_with_manifest_configuration(kernels):
    ks, launcher = kernels
    assert ks.names() == ["decode_mm", "nv_quant"]
    assert ks.chip == "sm_90" and len(ks) == 2 and "decode_mm" in ks
    assert [k.name for k in ks.find(op="fp4.quantize")] == ["nv_quant"]
    ks["decode_mm"](*decode_args(), stream=7)
    assert launcher.launches == [
        ("decode_mm", (1792, 1, 1), (128, 1, 1), 0,
         [0x1000, 0x2000, 0x3000, 0x4000], 7, None)]
    assert ks["decode_mm"].spec["variant"] == "decode_w4a16"


def test_torch_tensors_and_raw_pointers(kernels):
    ks, launcher = kernels
    args = [_torch_like((16, K), "bfloat16", 0x10),
            _torch_like((16, K // 2), "uint8", 0x20),
            _torch_like((16, K // 16), "float8_e4m3fn", 0x30),  # one byte
            _torch_like((), "float32", 0x40)]
    ks["nv_quant"](*args, stream=0)
    args[3] = 0x50  # a raw device address is passed unchecked
    ks["nv_quant"](*args, stream=0)
    assert [l[4] for l in launcher.launches] == [[0x10, 0x20, 0x30, 0x40],
                                                 [0x10, 0x20, 0x30, 0x50]]
    assert launcher.launches[0][3] == 98304 and launcher.launches[0][6] == 0


def test_rank0_tensor_scale_accepts_one_element(kernels):
    ks, _ = kernels
    ks["nv_quant"](_torch_like((16, K), "bfloat16"),
                   _torch_like((16, K // 2), "uint8"),
                   _torch_like((16, K // 16), "uint8"),
                   _torch_like((1,), "float32"), stream=0)


@pytest.mark.parametrize("index,value,message", [
    (0, DeviceArray((1, K), "<f4"),
     "argument 0 'lhs': expected dtype bfloat16, got float32"),
    (0, DeviceArray((1, K), "<f2"),
     "argument 0 'lhs': expected dtype bfloat16, got float16"),
    (1, DeviceArray((N, K // 2), "<i4"),
     "argument 1 'rhs.codes': expected dtype uint8, got int32"),
    (2, DeviceArray((N, K // 16), "|u1"),
     "argument 2 'rhs.scales': expected shape [14336, 128], got [14336, 256]"),
    (3, DeviceArray((N,), "<f4"),
     "argument 3 'result': expected shape [1, 14336], got [14336]"),
    (3, DeviceArray((1, N), "<f4", strides=(4, 4 * 1)),
     "argument 3 'result': is not contiguous"),
    (0, np.zeros((1, K), np.float32),
     "argument 0 'lhs': is a host array; pass device memory"),
    (1, "codes", "argument 1 'rhs.codes': unsupported argument type str"),
    (0, _torch_like((1, K), "bfloat16", cuda=False),
     "argument 0 'lhs': is a host array"),
    (3, _torch_like((1, N), "float32", contiguous=False),
     "argument 3 'result': is not contiguous"),
    (2, cuda.DeviceBuffer.__new__(cuda.DeviceBuffer),
     "argument 2 'rhs.scales': buffer of 100 bytes, needs 1835008"),
])
def test_argument_errors_name_kernel_and_argument(kernels, index, value,
                                                  message):
    ks, launcher = kernels
    if isinstance(value, cuda.DeviceBuffer):
        value.ptr, value.nbytes = 0x99, 100  # not allocated: no driver needed
    args = decode_args()
    args[index] = value
    with pytest.raises(ValueError) as info:
        ks["decode_mm"](*args, stream=0)
    assert str(info.value).startswith("kernel 'decode_mm': ")
    assert message in str(info.value)
    assert launcher.launches == []
    if isinstance(value, cuda.DeviceBuffer):
        value.ptr = 0  # nothing to free


def test_argument_count(kernels):
    ks, _ = kernels
    with pytest.raises(ValueError, match=r"kernel 'decode_mm': expected 4 "
                       r"arguments \(lhs, rhs.codes, rhs.scales, result\), "
                       r"got 3"):
        ks["decode_mm"](*decode_args()[:3])


def test_arguments_on_two_devices(kernels):
    ks, _ = kernels
    args = [_torch_like((16, K), "bfloat16", device=0),
            _torch_like((16, K // 2), "uint8", device=1),
            _torch_like((16, K // 16), "uint8", device=0),
            _torch_like((), "float32", device=0)]
    with pytest.raises(ValueError, match=r"kernel 'nv_quant': arguments on "
                       r"several devices \[0, 1\]"):
        ks["nv_quant"](*args, stream=0)


def test_unknown_kernel(kernels):
    ks, _ = kernels
    with pytest.raises(KeyError, match="no kernel 'mm' in .* \\(kernels: "
                       "decode_mm, nv_quant\\)"):
        ks["mm"]


def broken(**changes):
    data = json.loads(json.dumps(MANIFEST))
    entry = data["kernels"][0]
    for key, value in changes.items():
        if value is None:
            del entry[key]
        else:
            entry[key] = value
    return data


@pytest.mark.parametrize("manifest,message", [
    ({"kernels": "x"}, "expected an object with a 'kernels' list"),
    (broken(grid=None), "kernel #0: missing 'grid'"),
    (broken(grid=[1, 1]), "kernel 'decode_mm': 'grid' must be a list of 3 "
     "positive integers, got [1, 1]"),
    (broken(block=[0, 1, 1]), "'block' must be a list of 3 positive integers"),
    (broken(shared_bytes=-1), "'shared_bytes' must be a non-negative integer"),
    (broken(dependent="yes"), "'dependent' must be true or false, got 'yes'"),
    (broken(image="missing.ptx"), "image 'missing.ptx' not found"),
    (broken(image="../x.ptx"), "'image' must be a file name in the directory"),
    (broken(args=[{"name": "lhs", "dtype": "bf16", "shape": [1]}]),
     "argument 0 'lhs': unknown dtype 'bf16'"),
    (broken(args=[{"name": "lhs", "dtype": "float32", "shape": [-1]}]),
     "argument 0 'lhs': 'shape' must be a list of non-negative integers"),
    (broken(args=[{"name": "lhs"}]),
     "argument 0 must have 'name', 'dtype' and 'shape'"),
    ({"kernels": [MANIFEST["kernels"][0], MANIFEST["kernels"][0]]},
     "kernel 'decode_mm' listed twice"),
])
def test_malformed_manifest(kernel_dir, manifest, message):
    (kernel_dir / "kernels.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError) as info:
        gpu.load(kernel_dir, launcher=RecordingLauncher())
    assert message in str(info.value)


def test_missing_or_invalid_manifest(tmp_path):
    with pytest.raises(ValueError, match="kernels.json not found"):
        gpu.load(tmp_path)
    (tmp_path / "kernels.json").write_text("{")
    with pytest.raises(ValueError, match="invalid JSON"):
        gpu.load(tmp_path)


def test_compile_reports_fp4_opt_diagnostics(tmp_path):
    fp4_opt = os.path.join(BUILD_DIR, "bin", "fp4-opt")
    assert os.path.isfile(fp4_opt), f"{fp4_opt} not built"
    out = tmp_path / "out"
    with pytest.raises(gpu.CompileError) as info:
        gpu.compile("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                    "  return %y : tensor<4xf32>\n}\n",
                    out_dir=out, fp4_opt=fp4_opt)
    text = str(info.value)
    # The text was written into the export directory for fp4-opt to read.
    source = out / "input.mlir"
    assert source.is_file()
    command = [fp4_opt, str(source),
               f"-fp4-pipeline-nvvm=chip=sm_90 export-dir={out}", "-o",
               os.devnull]
    assert text.startswith("fp4-opt failed (exit 1): " + " ".join(command))
    # fp4-opt's own diagnostics, verbatim.
    proc = subprocess.run(command, capture_output=True, text=True)
    assert proc.returncode != 0 and proc.stderr.strip()
    assert proc.stderr.strip() in text
    assert not (out / "kernels.json").exists()


def test_compile_needs_fp4_opt(tmp_path):
    with pytest.raises(FileNotFoundError, match="fp4-opt not found at /nope"):
        gpu.compile("module {}", out_dir=tmp_path, fp4_opt="/nope")


def test_dependent_flag(kernel_dir):
    # fp4-gpu-dependent-launch's kernels carry "dependent": true; the
    # launcher reads a missing key as false.
    data = broken(dependent=True)
    (kernel_dir / "kernels.json").write_text(json.dumps(data))
    ks = gpu.load(kernel_dir, launcher=RecordingLauncher())
    assert ks["decode_mm"].dependent and not ks["nv_quant"].dependent


def test_dependent_launch_config_layout():
    # cuLaunchKernelEx's CUlaunchConfig and CUlaunchAttribute as cuda.h lays
    # them out on x86-64 (the attribute's value after the 4-byte id and its
    # padding; hStream, attrs and numAttrs after the seven unsigned ints).
    from fp4 import cuda
    attr, config = cuda._LaunchAttribute, cuda._LaunchConfig
    assert attr.value.offset == 8 and ctypes.sizeof(attr) == 72
    assert config.sharedMemBytes.offset == 24
    assert config.hStream.offset == 32 and config.attrs.offset == 40
    assert config.numAttrs.offset == 48 and ctypes.sizeof(config) == 56
    assert cuda.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION == 6
