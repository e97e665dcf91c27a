"""The decode kernel's sparse weight entries (decode-outliers=sparse,
SparseWeightEntries.h), run on the CPU by gpu_kernel_interp.py: a
decode-sized recipe chain whose weight parts are folded constants (as
fp4-fold-constants leaves them: codes +-0 at every outlier position)
goes to one activation prep and one decode launch on the warp-group form
that multiplies the dequantized weight with register-A wgmma and the
outliers, packed at compile time into 2:4 values and metadata, with
register-A wgmma.sp against a zero-padded copy of the staged activations
(both modelled in f64 with one f32 rounding per instruction). The result
must match the f64 product of the stacked activation rows and Q(W) +
outliers within f32 rounding, and without the outliers it must not. The
packed arrays are the ones the compiler wrote (read back from its
output), so the packer, the kernel's layout and the wgmma.sp model are
checked together against the arithmetic. No GPU needed."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, HERE)

import gpu_kernel_interp as interp  # noqa: E402
import gpu_recipes  # noqa: E402
from sparse_entries_check import product_errors, weight64  # noqa: E402
from test_gpu_activation_prep import prep_and_matmul, run_plan  # noqa: E402
from test_gpu_correction_kernels import (FP4_OPT, bf16_bits,  # noqa: E402
                                         from_bf16)

def compile_with_resources(mlir, options):
    """convert-fp4-to-gpu for sm_90a: (kernels, manifest, stderr, blobs),
    blobs the output's dialect resources by name (the packed entries)."""
    out = subprocess.run(
        [FP4_OPT, "-", f"-convert-fp4-to-gpu=chip=sm_90a {options}".strip(),
         "-mlir-print-op-generic"], input=mlir, capture_output=True,
        text=True, check=True)
    blobs = {name: bytes.fromhex(data[8:]) for name, data in
             re.findall(r'(\w+): "0x([0-9A-F]+)"', out.stdout)}
    return (interp.parse_kernels(out.stdout),
            interp.parse_manifest(out.stdout), out.stderr, blobs)


def packed_name(blobs, stem):
    names = [n for n in blobs if n.startswith(stem)]
    assert len(names) == 1, list(blobs)
    return names[0]


# recipe, m, n, k, options. N = 77 and 150: partial CTAs and row blocks;
# K = 320 and 1184: a partial chunk (units past K hold no entries), the
# pipelined loop crossing it; the full recipe stacks Q(x) and its 2:4
# residual (2 m rows), outlier fallback alone Q(x) (m rows, N padded to 8).
SPARSE = "decode-outliers=sparse"
CASES = [
    ("full", 16, 77, 320, SPARSE),
    ("full", 16, 77, 1184, SPARSE + " decode-rows-per-cta=64 decode-warps=8"),
    ("full", 8, 150, 1184,
     SPARSE + " decode-prefetch=2 decode-warps=12 decode-rows-per-cta=64"),
    ("full", 1, 70, 320, SPARSE),
    ("outlier_k1", 12, 77, 320, SPARSE),
    ("outlier_k2", 16, 77, 1184, SPARSE + " decode-k-unroll=256"),
]


def check_folded_recipe(recipe, m, n, k, options, variant, arrays, seed,
                        weight_block=32):
    """Compiles the folded-constant recipe with `options`, checks the decode
    launch's `variant` and argument names (`arrays`: the two packed entry
    arguments and the stems of the resources that fill them), runs prep
    and product on the interpreter with the compiler's packed arrays, and
    checks the result against the f64 product of the stacked rows and
    Q(W) + outliers (and that it is far from the product without them).
    `weight_block`: the weight outliers' block. Returns the decode kernel's
    IR."""
    case = dict(name="folded", recipe=recipe, m=m, n=n, k=k,
                weight_block=weight_block)
    mlir = gpu_recipes.bench_mlir(case, fold_weight=True)
    topk = 1 if recipe == "outlier_k1" else 2
    kernels, manifest, _, blobs = compile_with_resources(mlir, options)
    prep, matmul = prep_and_matmul(manifest)
    assert matmul["variant"] == variant, matmul["variant"]
    names = [a[0] for a in matmul["args"]]
    assert names == ["stacked0", "weight.codes", "weight.scales",
                     arrays[0][0], arrays[1][0], "result"], names

    x = np.random.default_rng(seed + m + k).standard_normal((m, k))
    inputs = {"input": bf16_bits(x.astype(np.float32)),
              "weight.codes": np.frombuffer(blobs["bench_w_codes"], np.uint8),
              "weight.scales": np.frombuffer(blobs["bench_w_scales"],
                                             np.uint8)}
    for arg, stem in arrays:
        inputs[arg] = np.frombuffer(blobs[packed_name(blobs, stem)], np.int32)
    got = run_plan(kernels, [prep, matmul], inputs)
    stacked = from_bf16(got["stacked0"]).astype(np.float64)
    x64 = stacked.reshape(-1, m, k).sum(axis=0)
    q64, w64 = weight64(*(np.frombuffer(blobs[f"bench_w_{c}"], t) for c, t in
                          (("codes", np.uint8), ("scales", np.uint8),
                           ("values", np.uint16), ("indices", np.uint8))),
                        n, k, topk, weight_block)
    err, farther = product_errors(got["result"].astype(np.float64), x64,
                                  q64, w64)
    assert err <= 1e-6, err
    # Negative control: the outliers' share is in the result.
    assert farther > 100, farther
    return kernels[matmul["name"]]


@pytest.mark.parametrize("recipe,m,n,k,options", CASES)
def test_sparse_weight_entries(recipe, m, n, k, options):
    kernel = check_folded_recipe(
        recipe, m, n, k, options, "decode_w4a16_wgmma_sparse_epilogue",
        [("weights.sparse_values", "sparse_entry_values"),
         ("weights.sparse_meta", "sparse_entry_meta")], seed=7)
    # No register patch (its f16x2 key compares).
    assert interp.count_ops(kernel, "arith.cmpf") == 0


def test_sparse_entries_decline_to_the_patch():
    # A non-finite entry would turn the zero slots' products into NaN: the
    # packer declines, the register patch takes the entries, a remark
    # says why. Entries that are not constants (split at run time) too.
    case = dict(name="sparse", recipe="full", m=16, n=77, k=320)
    mlir = gpu_recipes.bench_mlir(case, fold_weight=True)
    blobs = dict(re.findall(r'(bench_w_values): "(0x[0-9A-F]+)"', mlir))
    data = bytearray.fromhex(blobs["bench_w_values"][10:])
    data[6:8] = (0x7F80).to_bytes(2, "little")     # +Inf
    mlir = mlir.replace(blobs["bench_w_values"],
                        "0x08000000" + data.hex().upper())
    _, manifest, stderr, _ = compile_with_resources(mlir, SPARSE)
    _, matmul = prep_and_matmul(manifest)
    assert matmul["variant"] == "decode_w4a16_wgmma_patch_epilogue", \
        matmul["variant"]
    assert "decode-outliers=sparse: a non-finite entry" in stderr, stderr
