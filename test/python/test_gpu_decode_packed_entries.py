"""The register patch with weight entries packed at compile time
(decode-outliers=packed, SparseWeightEntries.h packPatchWeightEntries),
run on the CPU by gpu_kernel_interp.py: a decode-sized recipe chain whose
weight parts are folded constants goes to one activation prep and one
decode launch on the warp-group form whose lanes load their units'
entries as one values pair and one key word per chunk and patch them into
their dequantized register fragments. The result must match the f64
product of the stacked activation rows and Q(W) + outliers within f32
rounding, and without the outliers it must not. The packed arrays are the
ones the compiler wrote (read back from its output), so the packer and
the kernel's layout are checked together against the arithmetic. No GPU
needed."""

import os
import sys

import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, HERE)

import gpu_kernel_interp as interp  # noqa: E402
import gpu_recipes  # noqa: E402
from test_gpu_activation_prep import prep_and_matmul  # noqa: E402
from test_gpu_decode_sparse_entries import (  # noqa: E402
    CASES as SPARSE_CASES, SPARSE, check_folded_recipe,
    compile_with_resources)

# The sparse form's cases (recipe, m, n, k, options: partial CTAs and row
# blocks, partial chunks whose units past K hold no entries, keys 16, the
# pipelined loop crossing them, 64-row CTAs, prefetch depth 2, M = 1 below
# 9 stacked rows by the option) under decode-outliers=packed, whose own
# shape above 16 stacked rows is 64 rows and 8 warps; and the patch's 128
# rows and 16 warps there, asked for.
PACKED = "decode-outliers=packed"
CASES = [(r, m, n, k, o.replace(SPARSE, PACKED))
         for r, m, n, k, o in SPARSE_CASES] + [
    ("full", 16, 77, 320, PACKED + " decode-rows-per-cta=128 decode-warps=16"),
]


@pytest.mark.parametrize("recipe,m,n,k,options", CASES)
def test_packed_weight_entries(recipe, m, n, k, options):
    kernel = check_folded_recipe(
        recipe, m, n, k, options, "decode_w4a16_wgmma_patch_packed_epilogue",
        [("weights.packed_values", "patch_entry_values"),
         ("weights.packed_keys", "patch_entry_keys")], seed=11)
    # The patch's f16x2 key compares are there.
    assert interp.count_ops(kernel, "arith.cmpf") > 0


def test_packed_entries_decline_to_the_patch():
    # More than 2 entries per 32-element unit do not fit the key word: the
    # patch reads them from their stored arrays, and a remark says why.
    # (Entries split at run time: corrections-decode-tile.mlir, PKREMARK.)
    case = dict(name="packed", recipe="outlier_k4", m=16, n=77, k=320)
    mlir = gpu_recipes.bench_mlir(case, fold_weight=True)
    _, manifest, stderr, _ = compile_with_resources(mlir, PACKED)
    _, matmul = prep_and_matmul(manifest)
    assert matmul["variant"] == "decode_w4a16_wgmma_patch_epilogue", \
        matmul["variant"]
    assert ("decode-outliers=packed: 4 entries per 32-element unit (at "
            "most 2); the entries take the register patch from their "
            "stored arrays" in stderr), stderr


# Without the option: the default for constant entries with 2 per unit
# from 9 stacked rows (CorrectionToGPU kDecodePackedPatchUnitEntries), on
# 64-row CTAs of 8 warps where the patch from stored entries takes 128
# rows and 16 warps at 32 stacked rows. Outlier blocks of 16 (top-1 of
# each: two per unit, one in each half) and 64 (top-2: a unit holds 0, 1
# or 2 of them) count 2 per unit too.
@pytest.mark.parametrize("recipe,m,n,k,wb", [("full", 16, 77, 1184, 32),
                                             ("outlier_k2", 12, 77, 320, 32),
                                             ("outlier_k1", 16, 70, 320, 16),
                                             ("full", 16, 77, 1216, 64)])
def test_packed_entries_are_the_default_for_two_per_unit(recipe, m, n, k, wb):
    check_folded_recipe(
        recipe, m, n, k, "", "decode_w4a16_wgmma_patch_packed_epilogue",
        [("weights.packed_values", "patch_entry_values"),
         ("weights.packed_keys", "patch_entry_keys")], seed=13,
        weight_block=wb)
    case = dict(name="default", recipe=recipe, m=m, n=n, k=k,
                weight_block=wb)
    _, manifest, stderr, _ = compile_with_resources(
        gpu_recipes.bench_mlir(case, fold_weight=True), "")
    _, matmul = prep_and_matmul(manifest)
    assert matmul["block"] == 256, matmul["block"]
    assert "remark" not in stderr, stderr


def test_top1_keeps_the_patch_by_default():
    # One entry per unit: the packed form would still load and patch two
    # (measured slower, docs/Performance.md "Session 25"), so the default
    # keeps the stored arrays, with no remark (nothing was asked).
    case = dict(name="top1", recipe="outlier_k1", m=16, n=77, k=320)
    _, manifest, stderr, _ = compile_with_resources(
        gpu_recipes.bench_mlir(case, fold_weight=True), "")
    _, matmul = prep_and_matmul(manifest)
    assert matmul["variant"] == "decode_w4a16_wgmma_patch_epilogue", \
        matmul["variant"]
    assert "remark" not in stderr, stderr
