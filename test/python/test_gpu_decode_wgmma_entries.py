"""The decode kernel's weight-tile form (DecodeMatmulKernel.cpp,
MatmulKernelSpec::WeightEntries on the warp-group form), run on the CPU by
gpu_kernel_interp.py: a decode-sized recipe chain whose weight outliers are
split from the same weight at run time (so the quantized rest is +-0 at
their positions) goes, under decode-mma=wgmma, to one activation prep
(which writes no [K, M] activation sum) and one decode launch that
dequantizes each 64-row weight tile into shared memory, writes the weight
outliers over their elements and multiplies both operands from shared
memory (nvvm.wgmma.mma_async, modelled in f64 with one f32 rounding). The
result must match the f64 product of the stacked activation parts and
Q(W) + outliers within f32 rounding, and without the outliers it must
not. No GPU needed."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, HERE)

from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402
from sparse_entries_check import product_errors  # noqa: E402
from test_gpu_activation_prep import (prep_and_matmul,  # noqa: E402
                                     recipe_mlir, run_plan)
from test_gpu_correction_kernels import (bf16_bits, compile_op,  # noqa: E402
                                         from_bf16)


# m, n, k, weight outlier block, top-k, activation outliers. N = 77: two
# CTAs of 64 rows, the last partial. K = 320: two full chunks and a partial
# one whose units beyond K store no entries. Blocks of 16 (two per
# 32-element unit), 32 and 64 (wider than the unit: only the unit holding
# the entry writes it). M = 16 is the benchmark's 32 stacked rows (wgmma
# N = 32: Q(x's rest) with x's outliers, and the 2:4 residual); 9 pads 18
# rows to 24; 1 (2 rows, N = 8) by the option alone.
# The last two: software pipelined (decode-prefetch; the entries are
# carried a group ahead with the weight words), two chunks per group with
# a tail of whole and partial chunks, and depth 2 with three K warp groups.
WGMMA = "decode-mma=wgmma"
CASES = [
    (16, 77, 320, 32, 2, True, WGMMA),
    (16, 77, 4096, 32, 2, True, WGMMA),
    (9, 77, 128, 16, 1, False, WGMMA),
    (1, 70, 320, 64, 4, False, WGMMA),
    (12, 64, 256, 32, 1, True, WGMMA),
    (16, 77, 1184, 32, 2, True, WGMMA + " decode-prefetch=1 decode-k-unroll=256"),
    (10, 70, 1600, 16, 2, True, WGMMA + " decode-prefetch=2 decode-warps=12"),
    # decode-outliers=tile asks for the same form for proven chains only.
    (16, 77, 320, 32, 2, True, "decode-outliers=tile"),
    # The defaults (session 18): above 16 stacked rows a proven chain takes
    # the form without options, pipelined one group ahead (K = 1184: the
    # carried group crosses the partial chunk).
    (16, 77, 1184, 32, 2, True, ""),
    (9, 70, 320, 16, 1, False, ""),
    # Since session 22 also 2 entries per unit from 9 stacked rows (here
    # 16: 8 rows and their residual, 64 weight rows per CTA, pipelined).
    (8, 77, 1184, 32, 2, True, ""),
    (1, 70, 320, 64, 4, False, "decode-outliers=tile"),
    # Two warp groups per K warp sharing the activations, one tile of 128
    # rows (the second group's descriptor 64 rows into each atom).
    (16, 200, 320, 32, 2, True, "decode-outliers=tile decode-rows-per-cta=128"),
    (8, 150, 1184, 16, 2, True,
     "decode-outliers=tile decode-rows-per-cta=128 decode-warps=16 "
     "decode-prefetch=1 decode-k-unroll=256"),
    # decode-outliers=patch: the same entries replace their elements in
    # each lane's register fragments (no tile): blocks of 16, 32 and 64,
    # partial chunks, pipelined at depth 1 and 2, two warp groups per CTA.
    (16, 77, 320, 32, 2, True, "decode-outliers=patch"),
    (16, 77, 4096, 32, 2, True, "decode-outliers=patch"),
    (9, 70, 320, 16, 1, False, "decode-outliers=patch"),
    (12, 64, 256, 32, 1, True, "decode-outliers=patch"),
    (16, 77, 1184, 32, 2, True,
     "decode-outliers=patch decode-prefetch=1 decode-k-unroll=256"),
    (10, 70, 1600, 16, 2, True,
     "decode-outliers=patch decode-prefetch=2 decode-warps=12"),
    (16, 200, 320, 32, 2, True,
     "decode-outliers=patch decode-rows-per-cta=128"),
    # Below 9 stacked rows the patch goes into the mma.sync form's
    # fragments (the same pairs of the lane's unit): 2, 4 and 8 rows...
    (1, 70, 320, 64, 4, False, "decode-outliers=patch"),
    (4, 77, 1184, 32, 2, True, "decode-outliers=patch"),
    (1, 200, 1024, 16, 2, True, "decode-outliers=patch decode-prefetch=1"),
    (2, 45, 352, 32, 1, False,
     "decode-outliers=patch decode-rows-per-cta=32 decode-warps=4"),
    # ... unless decode-mma asks for the warp-group form.
    (1, 70, 320, 32, 2, True, "decode-outliers=patch decode-mma=wgmma"),
]


def entries_variant(options, m, unit_entries=2):
    # Without decode-outliers the patch is the default for at most 2
    # entries per 32-element unit, the tile above.
    patch = "decode-outliers=patch" in options or (
        "decode-outliers" not in options and unit_entries <= 2)
    if not patch:
        return "decode_w4a16_wgmma_entries_epilogue"
    # The chains stack Q(x) and the 2:4 residual: 2 m rows.
    wgmma = 2 * m >= 9 or "decode-mma=wgmma" in options
    return "decode_w4a16_wgmma_patch_epilogue" if wgmma else \
        "decode_w4a16_patch_epilogue"


@pytest.mark.parametrize("m,n,k,wb,wk,split,options", CASES)
def test_decode_wgmma_weight_entries(m, n, k, wb, wk, split, options):
    rng = np.random.default_rng(1200 + m + k + wb)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8).astype(np.float32))
    w[:, 3] *= 30.0
    w[5, 64:96] *= 50.0
    w = ref.round_to_bf16(w)
    wrest, wv, wi = ref.split_outliers(w, wb, wk)
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=32)
    src = ref.hadamard_rotate(x, 32, randomized=True, seed=0)
    rest, xv, xi = ref.split_outliers(src, 32, 2) if split else (src, 0, 0)
    qx = ref.quantize(rest, scheme="mxfp4", block_size=32)
    rv, ri = ref.sparse_residual(rest, "mxfp4", block_size=4, k=2)
    x64 = ref.dequantize(qx).astype(np.float64) + \
        ref.scatter_sparse(rv, ri, 4).astype(np.float64)
    if split:
        x64 = x64 + ref.scatter_sparse(xv, xi, 32)

    kernels, manifest = compile_op(recipe_mlir(
        m, n, k, rotate=True, split=split, residual=True,
        weight_outliers=True, weight_split=True, weight_block=wb,
        weight_k=wk), chip="sm_90a", options=options)
    launches = prep_and_matmul(manifest)
    prep, matmul = launches
    unit_entries = wk * (2 if wb == 16 else 1)
    assert matmul["variant"] == entries_variant(options, m, unit_entries), \
        matmul["variant"]
    # No activation sum: the outliers are in the weight operand.
    assert "summed_t" not in [a[0] for a in prep["args"]], prep["args"]
    names = [a[0] for a in matmul["args"]]
    assert names == ["stacked0", "weight.codes", "weight.scales",
                     "weights.values", "weights.indices", "result"], names
    kernel = kernels[matmul["name"]]
    if "wgmma_patch" in matmul["variant"]:
        # Register-A wgmma (inline PTX) and no shared weight tile: the
        # dynamic shared memory is the activation slots and the stages.
        assert interp.count_ops(kernel, "nvvm.wgmma.mma_async") == 0
        assert interp.count_ops(kernel, "llvm.inline_asm") > 0
        assert interp.count_ops(kernel, "nvvm.prmt") > 0
    elif "patch" in matmul["variant"]:
        # mma.sync with the patched A fragments; no shared memory at all.
        assert interp.count_ops(kernel, "nvvm.mma.sync") > 0
        assert interp.count_ops(kernel, "nvvm.prmt") > 0
        assert matmul["shared_bytes"] == 0, matmul["shared_bytes"]
    else:
        assert interp.count_ops(kernel, "nvvm.wgmma.mma_async") > 0

    inputs = {"input": bf16_bits(x), "weight.codes": qw.codes,
              "weight.scales": qw.scales.view(np.uint8),
              "weights.values": bf16_bits(wv), "weights.indices": wi}
    got = run_plan(kernels, launches, inputs)
    # The prep's stacked rows are the activation parts (exact in bf16).
    stacked = from_bf16(got["stacked0"]).astype(np.float64)
    assert stacked.shape == (2 * m, k)
    assert np.array_equal(stacked[:m] + stacked[m:], x64)
    q64 = ref.dequantize(qw).astype(np.float64)
    w64 = q64 + ref.scatter_sparse(wv, wi, wb)
    err, farther = product_errors(got["result"].astype(np.float64), x64,
                                  q64, w64)
    assert err <= 1e-6, err
    # Negative control: the outliers' share is in the result.
    assert farther > 100, farther


def test_unproven_weight_outliers_keep_the_sum():
    # The same chain with the weight outliers as arguments: nothing proves
    # Q(W) +-0 at their positions, so the wgmma form gathers them from the
    # activation sum's slices instead of writing them into its tile.
    _, manifest = compile_op(recipe_mlir(
        16, 77, 320, rotate=True, split=False, residual=True,
        weight_outliers=True), chip="sm_90a", options="decode-mma=wgmma")
    matmul = [l for l in manifest if l["name"].startswith("fp4_matmul")][0]
    assert matmul["variant"] == "decode_w4a16_wgmma_epilogue", \
        matmul["variant"]
    assert "summed_t" in [a[0] for a in matmul["args"]]


@pytest.mark.parametrize("options", ["decode-outliers=tile",
                                     "decode-outliers=patch"])
def test_weight_tile_with_16_element_scale_blocks(options):
    # An MXFP4 weight with scale blocks of 16: each 32-element unit takes
    # two scale bytes (words 0-1 and 2-3 of the unit), its dequantized
    # 16-byte chunks in the tile use the word's own byte.
    m, n, k = 16, 70, 320
    rng = np.random.default_rng(1777)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8).astype(np.float32))
    w[:, 16:32] *= 64.0   # the second 16-block of each unit scales apart
    w = ref.round_to_bf16(w)
    wrest, wv, wi = ref.split_outliers(w, 32, 2)
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=16)
    src = ref.hadamard_rotate(x, 32, randomized=True, seed=0)
    qx = ref.quantize(src, scheme="mxfp4", block_size=32)
    rv, ri = ref.sparse_residual(src, "mxfp4", block_size=4, k=2)
    x64 = ref.dequantize(qx).astype(np.float64) + \
        ref.scatter_sparse(rv, ri, 4).astype(np.float64)
    mlir = recipe_mlir(m, n, k, rotate=True, split=False, residual=True,
                       weight_outliers=True, weight_split=True)
    # The weight's type (every occurrence of the [N, K] quantized type).
    w32 = f"!fp4.tensor<{n}x{k}xf4E2M1FN, #fp4.mxfp4<block_size = 32>"
    assert w32 in mlir
    mlir = mlir.replace(w32, w32.replace("block_size = 32", "block_size = 16"))
    kernels, manifest = compile_op(mlir, chip="sm_90a", options=options)
    prep, matmul = prep_and_matmul(manifest)
    assert matmul["variant"] == entries_variant(options, m)
    got = run_plan(kernels, [prep, matmul], {
        "input": bf16_bits(x), "weight.codes": qw.codes,
        "weight.scales": qw.scales.view(np.uint8),
        "weights.values": bf16_bits(wv), "weights.indices": wi})
    q64 = ref.dequantize(qw).astype(np.float64)
    y64 = x64 @ (q64 + ref.scatter_sparse(wv, wi, 32)).T
    y = got["result"].astype(np.float64)
    assert np.linalg.norm(y - y64) / np.linalg.norm(y64) <= 1e-6
    assert np.linalg.norm(y - x64 @ q64.T) > 100 * np.linalg.norm(y - y64)
