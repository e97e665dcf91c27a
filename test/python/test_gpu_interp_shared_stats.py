"""gpu_kernel_interp.py's shared-memory statistics (COUNT_SHARED), the CPU
diagnostic behind bench/shared_traffic.py: the bank model on fixed access
patterns, and two properties of the kernels that it measures: the decode
tail form's gathers from a lane-banked activation sum are conflict-free
(TransposedSum.h; the [K, M] sum at K = 512 is not), and the weight-tile
form's 16-byte tile and activation stores are (storeWeightTile). No GPU
needed."""

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
from test_gpu_activation_prep import recipe_mlir, run_plan  # noqa: E402
from test_gpu_correction_kernels import bf16_bits, compile_op  # noqa: E402


def waves(addr, nbytes, lanes=32):
    lane = np.arange(lanes)
    return interp.shared_wavefronts(np.zeros(lanes, np.int64), lane,
                                    np.asarray(addr, np.int64), nbytes)


@pytest.mark.parametrize("addr,nbytes,expect", [
    (4 * np.arange(32), 4, (1, 1)),            # one word per bank
    (np.zeros(32), 4, (1, 1)),                 # one word, broadcast
    (128 * np.arange(32), 4, (32, 1)),         # one bank, 32 words
    (4 * (np.arange(32) % 16), 4, (1, 1)),     # pairs share words
    (2 * np.arange(32), 2, (1, 1)),            # 16-bit, packed
    (8 * np.arange(32), 8, (2, 2)),            # 64-bit: two phases
    (16 * np.arange(32), 16, (4, 4)),          # 128-bit: four phases
    (128 * np.arange(32), 16, (32, 4)),        # 128-bit, one bank quad
    (256 * np.arange(32), 8, (32, 2)),         # 64-bit, one bank pair
])
def test_bank_model(addr, nbytes, expect):
    assert waves(addr, nbytes) == expect


def test_bank_model_counts_phases_per_warp():
    # Two warps, each conflict-free: one wavefront each.
    gid = np.arange(64)
    assert interp.shared_wavefronts(gid // 32, gid % 32, 4 * (gid % 32),
                                    4) == (2, 2)


def recipe_stats(m, n, k, options=""):
    """Runs the full recipe's prep and product through the interpreter
    with COUNT_SHARED; returns {variant: stats} of its launches."""
    rng = np.random.default_rng(5)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8)
                          .astype(np.float32))
    wrest, wv, wi = ref.split_outliers(w, 32, 2)
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=32)
    kernels, manifest = compile_op(recipe_mlir(
        m, n, k, rotate=True, split=True, residual=True,
        weight_outliers=True, weight_split=True), chip="sm_90a",
        options=options)
    launches = [l for l in manifest if l["name"].startswith(
        ("fp4_activation_prep", "fp4_matmul"))]
    inputs = {"input": bf16_bits(x), "weight.codes": qw.codes,
              "weight.scales": qw.scales.view(np.uint8),
              "weights.values": bf16_bits(wv), "weights.indices": wi}
    done = []
    old = interp.COUNT_SHARED
    interp.COUNT_SHARED = True
    try:
        run_plan(kernels, launches, inputs, launched=done)
    finally:
        interp.COUNT_SHARED = old
    return {l["variant"]: d.stats for l, d in zip(launches, done)}


def test_tail_gathers_from_the_lane_banked_sum_are_conflict_free():
    banked = recipe_stats(1, 256, 4096)["decode_w4a16_epilogue_tail"]
    # The tail's f32 gathers (and the stage's 32-bit reads): one wavefront
    # per request.
    assert banked["ld.b32"]["wavefronts"] == banked["ld.b32"]["ideal"]
    # K = 512: 32 entries per row, one per lane, so the runs are not whole
    # blocks and the sum stays [K, M]: random columns, bank conflicts.
    plain = recipe_stats(1, 128, 512)["decode_w4a16_epilogue_tail"]
    assert plain["ld.b32"]["wavefronts"] > 2 * plain["ld.b32"]["ideal"]


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_tail_reads_are_at_their_minimum_up_to_4_rows(m):
    # K = 1024 banks the sum (C = 32); 1 to 4 result rows make the
    # gathers 4-, 8-, 4- (3 rows: scalar reads, 3 l mod 32 distinct) and
    # 16-byte reads (TransposedSum.h). Every shared read of the tail
    # kernel is at its minimum.
    st = recipe_stats(m, 128, 1024)["decode_w4a16_epilogue_tail"]
    reads = {k: v for k, v in st.items() if k.startswith("ld.")}
    assert reads
    for kind, v in reads.items():
        assert v["wavefronts"] == v["ideal"], (kind, v)


def test_tail_gathers_at_8_rows_take_two_wavefronts_per_phase():
    # The limit TransposedSum.h states: from 8 rows lanes l and l + 4 of a
    # 16-byte phase share a bank quad (2x), where [K, M] takes 3.5x. (At 8
    # rows, 16 stacked with the residual, the default is the register
    # patch since session 22: the tail form by its option.)
    tail = "decode-outliers=tail"
    banked = recipe_stats(8, 128, 1024, tail)["decode_w4a16_epilogue_tail"]
    assert banked["ld.b128"]["wavefronts"] == 2 * banked["ld.b128"]["ideal"]
    plain = recipe_stats(8, 128, 512, tail)["decode_w4a16_epilogue_tail"]
    assert plain["ld.b128"]["wavefronts"] > 3 * plain["ld.b128"]["ideal"]


def test_weight_tile_stores_are_conflict_free():
    st = recipe_stats(16, 128, 1024, "decode-outliers=tile")[
        "decode_w4a16_wgmma_entries_epilogue"]
    # The dequantized tile and the staged activations: 16-byte stores,
    # 8 rows x one swizzled chunk per phase.
    assert st["st.b128"]["wavefronts"] == st["st.b128"]["ideal"]
    # wgmma reads every tile byte once more (A) and the activations (B).
    assert st["wgmma"]["bytes"] == st["st.b128"]["bytes"]



def test_sparse_form_padded_stores_are_conflict_free():
    # decode-outliers=sparse (folded-constant weights: the form takes only
    # constants) stages its zero-padded activations with one 8-byte store
    # per pair; the step placement and staging lanes (sparseStepByte,
    # stagingLane) make every warp store 2 wavefronts, the minimum, where
    # the dense form's lanes and 64 (s % 2) took 8 (GPU.md).
    import gpu_recipes
    from test_gpu_decode_sparse_entries import (compile_with_resources,
                                                packed_name)
    case = dict(name="sparse", recipe="full", m=16, n=128, k=512)
    mlir = gpu_recipes.bench_mlir(case, fold_weight=True)
    kernels, manifest, _, blobs = compile_with_resources(
        mlir, "decode-outliers=sparse")
    launches = [l for l in manifest if l["name"].startswith(
        ("fp4_activation_prep", "fp4_matmul"))]
    x = np.random.default_rng(1).standard_normal((16, 512))
    inputs = {"input": bf16_bits(x.astype(np.float32)),
              "weight.codes": np.frombuffer(blobs["bench_w_codes"], np.uint8),
              "weight.scales": np.frombuffer(blobs["bench_w_scales"],
                                             np.uint8),
              "weights.sparse_values": np.frombuffer(
                  blobs[packed_name(blobs, "sparse_entry_values")], np.int32),
              "weights.sparse_meta": np.frombuffer(
                  blobs[packed_name(blobs, "sparse_entry_meta")], np.int32)}
    done = []
    old = interp.COUNT_SHARED
    interp.COUNT_SHARED = True
    try:
        run_plan(kernels, launches, inputs, launched=done)
    finally:
        interp.COUNT_SHARED = old
    st = {l["variant"]: d.stats for l, d in zip(launches, done)}[
        "decode_w4a16_wgmma_sparse_epilogue"]
    assert st["st.b64"]["requests"] > 0
    assert st["st.b64"]["wavefronts"] == st["st.b64"]["ideal"], st["st.b64"]
    # B bytes (Performance.md "Session 23"): per 64-row warp group and
    # 128-element chunk, 8 dense k16 steps of 32 stacked rows x 16 K and 8
    # sparse k32 steps of 32 x 32 padded K, 3x the dense steps alone; 2
    # warp groups (128 rows), 4 chunks (K = 512).
    dense, sparse = 8 * 32 * 16 * 2, 8 * 32 * 32 * 2
    assert sparse == 2 * dense
    assert st["wgmma"]["bytes"] == 2 * 4 * (dense + sparse), st["wgmma"]
