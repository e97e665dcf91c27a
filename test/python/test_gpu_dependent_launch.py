"""fp4-gpu-dependent-launch (DependentLaunch.cpp) run on the CPU by
gpu_kernel_interp.py: a decode-sized full recipe chain (activation prep,
the stacked decode product, the outlier epilogue), its kernels made
dependent, must give every buffer bit
for bit as without the pass (the griddepcontrol ops are no-ops in one
launch at a time; what this checks is that the prefetch code changes
nothing), and every prefetch address must lie inside the buffer it came
from (the interpreter asserts it; these shapes do not reach the pass's
end-of-buffer bound, which dependent-launch.mlir checks is emitted): all of
the 1 MiB weight's lines with
a 64 MiB budget, the budget's fraction of each CTA's share with a
small one, none with 0 or the default. The launches' overlap itself needs the GPU
(bench/pdl_check.py). No GPU needed."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402
from test_gpu_activation_prep import recipe_mlir, run_plan  # noqa: E402
from test_gpu_correction_kernels import bf16_bits  # noqa: E402
from test_gpu_quant_kernels import FP4_OPT  # noqa: E402

# 520 x 4096 MXFP4 weight: 1040 KiB of codes (over the pass's 1 MiB
# threshold), 65 KiB of scales (below it); 520 rows make the CTAs' shares
# no whole number of lines (each CTA's first line is not aligned).
M, N, K = 16, 520, 4096
CODES = N * K // 2


def compile_chain(passes):
    mlir = recipe_mlir(M, N, K, rotate=True, split=True, residual=True,
                       weight_outliers=True)
    out = subprocess.run(
        [FP4_OPT, "-", "-convert-fp4-to-gpu=chip=sm_90a"]
        + passes + ["-mlir-print-op-generic"], input=mlir,
        capture_output=True, text=True, check=True)
    return interp.parse_kernels(out.stdout), interp.parse_manifest(out.stdout)


def run(kernels, manifest, inputs):
    """Every launch in order (run_plan); returns the buffers' bytes and the
    number of prefetches of each launch."""
    launched = []
    got = run_plan(kernels, manifest, inputs, launched)
    return ({n: a.view(np.uint8).copy() for n, a in got.items()},
            [getattr(l, "prefetched", 0) for l in launched])


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(4711)
    x = ref.round_to_bf16(rng.standard_normal((M, K)).astype(np.float32))
    w = ref.round_to_bf16((rng.standard_normal((N, K)) / 8).astype(np.float32))
    wrest, wv, wi = ref.split_outliers(w, 32, 2)
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=32)
    return {"input": bf16_bits(x), "weight.codes": qw.codes,
            "weight.scales": qw.scales.view(np.uint8),
            "weights.values": bf16_bits(wv), "weights.indices": wi}


@pytest.fixture(scope="module")
def plain(inputs):
    kernels, manifest = compile_chain([])
    assert not any(interp.count_ops(k, "nvvm.griddepcontrol")
                   for k in kernels.values())
    return run(kernels, manifest, inputs)[0]


@pytest.mark.parametrize("budget", [
    64 << 20,  # every line of the codes
    1 << 18,   # about a quarter of each CTA's share
    0,
    None,      # the default: none (measured slower on the H200)
])
def test_dependent_chain_matches_and_prefetches_in_bounds(inputs, plain,
                                                          budget):
    option = "-fp4-gpu-dependent-launch" + (
        "" if budget is None else f"=prefetch-bytes={budget}")
    kernels, manifest = compile_chain([option])
    assert [l["variant"] for l in manifest] == [
        "activation_prep_mxfp4_hadamard32_top2_residual", "decode_w4a16",
        "stacked_epilogue_warp"]
    for k in kernels.values():
        assert interp.count_ops(k, "nvvm.griddepcontrol") == 2
    got, prefetched = run(kernels, manifest, inputs)
    assert got.keys() == plain.keys()
    for name in plain:
        assert np.array_equal(got[name], plain[name]), name
    # Only the product has an argument of 1 MiB or more (the codes).
    matmul = 1
    assert all(p == 0 for i, p in enumerate(prefetched) if i != matmul)
    ctas = int(np.prod(manifest[matmul]["grid_dims"]))
    assert CODES % (ctas * 128) != 0
    # The same leading fraction (in 1/1024ths) of each CTA's share; each
    # CTA rounds its part up to a whole line.
    if not budget:
        assert prefetched[matmul] == 0, prefetched
        return
    fraction = min(1024, budget * 1024 // CODES)
    lines = CODES * fraction / 1024 / 128
    assert abs(prefetched[matmul] - lines) <= ctas, (prefetched, lines)
    if fraction == 1024:
        assert prefetched[matmul] >= lines
