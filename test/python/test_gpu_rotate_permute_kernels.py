"""The two-level rotation's run-time ops on the GPU: fp4.permute (a gather
kernel over a host-constant table) and fp4.rotate groups a thread cannot
hold (a stride > 1, the cross-block Hadamard, or a size above 64), staged in
shared memory. Run on the CPU by gpu_kernel_interp.py and compared bit for
bit with the C++ reference (the folder's and the CPU lowering's numbers)."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)

from test_gpu_correction_kernels import (bf16_bits, data, from_bf16,  # noqa: E402
                                         kernel_stems, ref, run)


@pytest.mark.parametrize("size,stride,seed,inverse,cols", [
    (8, 32, None, False, 256),   # two-level cross-block: 8 blocks of 32
    (4, 32, 3, False, 256),      # two groups per row, randomized
    (8, 32, 11, True, 256),      # inverse with signs applied last
    (128, 1, 7, False, 256),     # wider than the register kernel's 64
    (16, 3, None, False, 96),    # a stride that is not a power of two
    (2, 32, None, True, 64),     # the smallest size (one stage)
])
def test_shared_rotate(size, stride, seed, inverse, cols):
    rows = 3
    x = data(rows, cols, size + stride)
    x[-1, 0] = 1.0
    x[-1, 5] = -0.0
    t, o = f"tensor<{rows}x{cols}xbf16>", f"tensor<{rows}x{cols}xf32>"
    s = f" seed {seed}" if seed is not None else ""
    st = f" stride {stride}" if stride != 1 else ""
    inv = " inverse" if inverse else ""
    mlir = (f"func.func @f(%x: {t}) -> ({o}, {o}) {{\n"
            f"  %r = fp4.rotate %x hadamard {size}{st}{s} axis 1{inv} : {t} -> {o}\n"
            f"  return %r, %r : {o}, {o}\n}}\n")
    out, manifest = run(mlir, {"input": bf16_bits(x)})
    assert kernel_stems(manifest) == ["fp4_rotate"]
    launch = manifest[0]
    assert launch["grid"] == rows * cols // (size * stride)
    expect = ref.hadamard_rotate(x, size, randomized=seed is not None,
                                 seed=seed or 0, inverse=inverse,
                                 stride=stride)
    assert np.array_equal(out["result"].view(np.uint32), expect.view(np.uint32))


def test_shared_rotate_bf16_result_rounds_once():
    rows, cols = 2, 128
    x = data(rows, cols, 5)
    t = f"tensor<{rows}x{cols}xbf16>"
    mlir = (f"func.func @f(%x: {t}) -> ({t}, {t}) {{\n"
            f"  %r = fp4.rotate %x hadamard 4 stride 32 seed 9 axis 1 : {t} -> {t}\n"
            f"  return %r, %r : {t}, {t}\n}}\n")
    out, _ = run(mlir, {"input": bf16_bits(x)})
    expect = ref.hadamard_rotate(x, 4, randomized=True, seed=9, stride=32)
    assert np.array_equal(out["result"].view(np.uint16), bf16_bits(expect))


@pytest.mark.parametrize("dtype,elem", [("bf16", np.uint16), ("f32", np.uint32),
                                        ("i8", np.uint8)])
def test_permute(dtype, elem):
    rows, cols = 3, 96
    rng = np.random.default_rng(4)
    perm = rng.permutation(cols)
    bits = rng.integers(0, np.iinfo(elem).max, size=(rows, cols), dtype=np.uint64).astype(elem)
    t = f"tensor<{rows}x{cols}x{dtype}>"
    table = ", ".join(str(int(p)) for p in perm)
    mlir = (f"func.func @f(%x: {t}) -> {t} {{\n"
            f"  %p = fp4.permute %x axis 1 permutation [{table}] : {t}\n"
            f"  return %p : {t}\n}}\n")
    # The table is a host constant the launch passes; here the test passes it.
    out, manifest = run(mlir, {"input": bits,
                               "permutation": perm.astype(np.int32)})
    assert kernel_stems(manifest) == ["fp4_permute"]
    assert [a[0] for a in manifest[0]["args"]] == ["input", "permutation", "result"]
    assert np.array_equal(out["result"].view(elem), bits[:, perm])
