"""The fused correction chain of convert-fp4-to-gpu (FusedCorrectionChain.h)
run on the CPU by gpu_kernel_interp.py: every launch is interpreted, the
activation stacker, the W4A16 decode kernel (mma.sync modelled per warp
in f64, exact products and one f32 rounding) with its fused epilogue
(row-group sum, weight outliers, acc, result rounding) where one product
holds the chain, and the separate epilogue where it does not. The stacked
rows must equal the parts bit for bit (dequantized MXFP4 and the outlier /
residual entries are bf16 numbers), the transposed sum must be their f32
sum, and the result must match the f64 sum of every term's product within
f32 rounding. No GPU needed."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from fp4 import reference as ref  # noqa: E402

import gpu_kernel_interp as interp  # noqa: E402
from test_gpu_quant_kernels import buffer_for  # noqa: E402
from test_gpu_correction_kernels import (bf16_bits, compile_op,  # noqa: E402
                                         from_bf16, qtype, scatter)


def chain_mlir(m, n, k, weight_outliers, acc, result, wbs=32, wk=2):
    """Every activation part (Q(x), outliers, 2:4 residual) times every
    weight part (Q(W)[, outliers]), accumulated in the passes' order."""
    y, yr = f"tensor<{m}x{n}xf32>", f"tensor<{m}x{n}x{result}>"
    sx = (f"tensor<{m}x{k // 32}x2xbf16>", f"tensor<{m}x{k // 32}x2xi8>")
    rx = (f"tensor<{m}x{k // 4}x2xbf16>", f"tensor<{m}x{k // 4}x2xi8>")
    sw = (f"tensor<{n}x{k // wbs}x{wk}xbf16>", f"tensor<{n}x{k // wbs}x{wk}xi8>")
    args = [f"%qx: {qtype(m, k)}", f"%xv: {sx[0]}", f"%xi: {sx[1]}",
            f"%rv: {rx[0]}", f"%ri: {rx[1]}", f"%qw: {qtype(n, k)}"]
    act = [("(%qx)", f"({qtype(m, k)})"),
           ("(%xv, %xi block 32)", f"({sx[0]}, {sx[1]})"),
           ("(%rv, %ri block 4)", f"({rx[0]}, {rx[1]})")]
    wgt = [("(%qw)", f"({qtype(n, k)})")]
    if weight_outliers:
        args += [f"%wv: {sw[0]}", f"%wi: {sw[1]}"]
        wgt.append((f"(%wv, %wi block {wbs})", f"({sw[0]}, {sw[1]})"))
    body = []
    if acc:
        args.append(f"%acc: {y}")
        terms = [(a, w) for a in act for w in wgt]
        prev = "%acc"
    else:
        body.append(f"%y0 = fp4.matmul %qx, %qw : {qtype(m, k)}, {qtype(n, k)} -> {y}")
        terms = [(a, w) for a in act for w in wgt][1:]
        prev = "%y0"
    for i, (a, w) in enumerate(terms):
        ty = yr if i == len(terms) - 1 else y
        body.append(f"%y{i + 1} = fp4.correction_matmul {a[0]}, {w[0]} acc {prev} : "
                    f"{a[1]}, {w[1]}, {y} -> {ty}")
        prev = f"%y{i + 1}"
    lines = "\n".join("  " + b for b in body)
    return (f"func.func @f({', '.join(args)}) -> {yr} {{\n{lines}\n"
            f"  return {prev} : {yr}\n}}\n")


@pytest.mark.parametrize("m,weight_outliers,acc,result,k,wbs,wk", [
    (1, True, False, "f32", 64, 32, 2), (3, True, True, "bf16", 64, 32, 2),
    (16, True, False, "f32", 64, 32, 2), (2, False, False, "f32", 64, 32, 2),
    (5, False, True, "f32", 64, 32, 2),
    # The decode kernel's main loop and K tail (2 chunks + 64), outlier
    # blocks of 16 (two per lane unit) and of 64 (wider than the unit).
    (1, True, False, "f32", 320, 32, 2), (2, True, True, "f32", 320, 16, 1),
    (4, True, False, "bf16", 320, 64, 4), (10, True, False, "f32", 320, 32, 2),
    # A sum too large for the decode kernel's shared memory (K * M * 4 >
    # 32 KB): the weight outliers go to the epilogue kernel, its slot form
    # (outlier blocks of 32, 16 and 64) or, with 64 or more entries per
    # slice row, its sliced form (5 slices at M = 16 with the swizzled
    # stage; 2 at M = 10, the last partial, with a partial lane round).
    (10, True, True, "f32", 896, 32, 2), (16, True, False, "f32", 2560, 32, 2),
    (12, True, True, "bf16", 1024, 16, 1), (9, True, False, "f32", 1024, 64, 4),
    (16, True, False, "f32", 2560, 32, 4), (10, True, True, "bf16", 1024, 32, 4)])
def test_fused_chain(m, weight_outliers, acc, result, k, wbs, wk):
    check_fused_chain(m, weight_outliers, acc, result, k, wbs, wk)


@pytest.mark.parametrize("m,weight_outliers,acc,result,k,wbs,wk", [
    (1, False, False, "f32", 64, 32, 2), (10, False, True, "bf16", 320, 32, 2),
    (12, False, False, "f32", 320, 32, 2), (16, False, True, "f32", 352, 32, 2),
    (9, False, False, "f32", 64, 32, 2),
    # Weight outliers from per-group slices of the sum: the main loop and
    # the partial chunk (K = 352), blocks of 16 (two per unit), 32 and 64
    # (wider than the unit), 1 to 4 entries, a sum larger than 32 KB
    # (M = 10, K = 1024: 40 KB), M = 1 by the option.
    (1, True, False, "f32", 320, 32, 2), (9, True, True, "bf16", 352, 16, 1),
    (10, True, False, "f32", 352, 32, 2),
    (10, True, False, "f32", 1024, 32, 2), (10, True, True, "f32", 384, 64, 4),
    (9, True, False, "f32", 64, 32, 4)])
def test_fused_chain_wgmma(m, weight_outliers, acc, result, k, wbs, wk):
    """sm_90a: the stacked products on the decode kernel's warp-group form
    (decode_w4a16_wgmma from 9 rows, by default; at M = 1 by the option),
    with its fused epilogue (one product of up to 32 rows: M = 1, 9, 10)
    or the epilogue kernel (two products at M = 12 and 16, no weight
    outliers). From 9 rows such chains stay on the decode plan instead of
    going to the prefill kernel, with weight outliers where one product
    holds the chain (gathered in the main loop from per-group slices of
    the activation sum)."""
    # Weight outliers go to the wgmma form only by the option.
    options = "decode-mma=wgmma" if m < 9 or weight_outliers else ""
    variants = check_fused_chain(m, weight_outliers, acc, result, k, wbs, wk,
                                 chip="sm_90a", options=options)
    products = -(-3 // max(1, 32 // m))
    assert variants[1:1 + products] == \
        ["decode_w4a16_wgmma" + ("_epilogue" if products == 1 else "")] * \
        products, variants


@pytest.mark.parametrize("m,acc,result,k,wbs,wk,options", [
    (1, False, "f32", 1024, 32, 2, ""), (2, True, "bf16", 2048, 16, 1, ""),
    (3, False, "f32", 2048, 64, 4, "decode-outliers=tail"),
    (4, True, "f32", 1024, 32, 1, "")])
def test_fused_chain_lane_banked_sum(m, acc, result, k, wbs, wk, options):
    # The tail form with whole blocks per lane run (K / 32 columns per
    # lane: 32, 64, 64, 32): the sum arrives lane-banked and the tail
    # gathers it by lane (rows 1, 2, 3 and 4: scalar, 8-byte and 16-byte
    # reads; blocks of 16 with two per unit, 32, and 64 wider than the
    # unit).
    variants = check_fused_chain(m, True, acc, result, k, wbs, wk,
                                 options=options)
    assert variants[1] == "decode_w4a16_epilogue_tail", variants


def test_fused_chain_wgmma_128_rows():
    # Weight outliers from the activation sum's slices (unproven: function
    # arguments) with two warp groups per K warp: each K warp's 256
    # threads stage its slice.
    variants = check_fused_chain(10, True, True, "f32", 384, 32, 2,
                                 chip="sm_90a",
                                 options="decode-mma=wgmma "
                                         "decode-rows-per-cta=128")
    assert variants[1] == "decode_w4a16_wgmma_epilogue", variants


def check_fused_chain(m, weight_outliers, acc, result, k, wbs, wk,
                      chip="sm_90", options=""):
    # sm_90a: the decode products run on the wgmma form, whose weight
    # outliers need no [K, M] sum in shared memory (per-group slices).
    sliced = chip == "sm_90a"
    n = 37
    rng = np.random.default_rng(100 + m + k)
    x = ref.round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    x[:, 5] *= 60.0
    w = ref.round_to_bf16((rng.standard_normal((n, k)) / 8).astype(np.float32))
    rest, xv, xi = ref.split_outliers(x, 32, 2)
    qx = ref.quantize(rest, scheme="mxfp4", block_size=32)
    rv, ri = ref.sparse_residual(rest, "mxfp4", block_size=4, k=2)
    wrest, wv, wi = ref.split_outliers(w, wbs, wk)
    qw = ref.quantize(wrest, scheme="mxfp4", block_size=32)
    y0 = rng.standard_normal((m, n)).astype(np.float32)
    inputs = {"group0.dense.codes": qx.codes,
              "group0.dense.scales": qx.scales.view(np.uint8),
              "group1.values": bf16_bits(xv), "group1.indices": xi,
              "group2.values": bf16_bits(rv), "group2.indices": ri,
              "weight.codes": qw.codes, "weight.scales": qw.scales.view(np.uint8),
              "weights.values": bf16_bits(wv), "weights.indices": wi,
              "acc": y0}
    kernels, manifest = compile_op(
        chain_mlir(m, n, k, weight_outliers, acc, result, wbs, wk), chip,
        options)
    stems = [l["name"].rsplit("_", 1)[0] for l in manifest]
    # 3 row groups: one decode product for M <= 10 (up to 32 rows), which
    # does the epilogue itself; at 12 and 16, two groups (24 or 32 rows)
    # and then one, summed by the epilogue kernel.
    per_product = max(1, 32 // m)
    products = -(-3 // per_product)
    separate = products > 1 or (weight_outliers and k * m * 4 > 32 * 1024
                                and not sliced)
    assert stems == ["fp4_stack_activations"] + ["fp4_matmul"] * products + \
        (["fp4_stacked_epilogue"] if separate else []), stems
    deq_w = ref.dequantize(qw).astype(np.float64)
    buffers = {}
    for launch in manifest:
        args = []
        for name, dtype, shape, _ in launch["args"]:
            if name not in buffers:
                buffers[name] = buffer_for(name, dtype, shape, inputs.get(name))
            args.append(buffers[name])
        interp.run_kernel(kernels[launch["name"]], launch["grid"],
                          launch["block"], args, launch["shared_bytes"])
    got = {name: b.bytes.view(b.dtype).reshape(b.shape)
           for name, b in buffers.items()}
    parts = [ref.dequantize(qx), scatter(xv, xi, 32), scatter(rv, ri, 4)]
    stacked = np.concatenate([from_bf16(got[f"stacked{p}"])
                              for p in range(products)]).reshape(3, m, k)
    for g, part in enumerate(parts):
        assert np.array_equal(stacked[g].view(np.uint32),
                              part.astype(np.float32).view(np.uint32)), g
    if weight_outliers:
        summed = (parts[0] + parts[1]).astype(np.float32) + parts[2]
        want = summed.T.astype(np.float32)
        # The tail form reads it lane-banked where its lanes' runs of a
        # row's entries are whole blocks (TransposedSum.h): element (k, m)
        # at [k mod C, k / C, m], C = K / 32.
        tail = any(l.get("variant", "").endswith("_tail") for l in manifest)
        per_row = k // wbs * wk
        c = k // 32 if (tail and per_row % 32 == 0
                        and (per_row // 32) % wk == 0) else 0
        if c:
            want = want.reshape(32, c, m).transpose(1, 0, 2)
        assert got["summed_t"].shape == want.shape, got["summed_t"].shape
        assert np.array_equal(got["summed_t"].view(np.uint32),
                              want.view(np.uint32))
    x64 = sum(p.astype(np.float64) for p in parts)
    w64 = deq_w + (scatter(wv, wi, wbs) if weight_outliers else 0.0)
    y64 = x64 @ w64.T + (y0 if acc else 0.0)
    y = got["result"]
    y = from_bf16(y) if result == "bf16" else y
    tol = 2.0 ** -8 if result == "bf16" else 1e-6
    err = np.linalg.norm(y.astype(np.float64) - y64) / np.linalg.norm(y64)
    assert err <= tol, err
    return [l.get("variant") for l in manifest]


def test_weight_outlier_chains_keep_mma_sync_by_default():
    # sm_90a without decode-mma: a chain with weight outliers keeps the
    # mma.sync decode forms (its 30 stacked rows would take the wgmma form,
    # whose sliced outlier gathers measured slower), one without them
    # takes it.
    n, k = 37, 320
    _, with_outliers = compile_op(chain_mlir(10, n, k, True, False, "f32"),
                                  "sm_90a")
    _, without = compile_op(chain_mlir(10, n, k, False, False, "f32"),
                            "sm_90a")
    assert [l["variant"] for l in with_outliers][1] == \
        "decode_w4a16_epilogue_tail", with_outliers
    assert [l["variant"] for l in without][1] == \
        "decode_w4a16_wgmma_epilogue", without
