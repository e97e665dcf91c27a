"""GPU check of the decode kernel's packed weight entries: the sparse form
(decode-outliers=sparse) and the register patch's packed loads
(decode-outliers=packed), lib/Conversion/FP4ToGPU/SparseWeightEntries.h.

Both forms take only constant entries (packed at compile time), and
gpu_check.py's recipe cases split the weight at run time, so this script
checks the form on folded-constant recipes (gpu_recipes.bench_mlir with
fold_weight=True, the benchmark's form):

The `default_*` cases compile without options: the packed patch is the
default for constant entries with 2 per unit from 9 stacked rows, and the
build fails if a case's kernel is not that form. `--only PREFIX..` keeps
the cases whose names start with a prefix (build and check alike).

  build OUT  (here, with fp4-opt): compiles each case for sm_90a into
             OUT/<case>/ and stores its inputs (x, the weight constants,
             the packed entries the compiler wrote) in inputs.npz;
  check OUT  (on the GPU machine, FP4_REFERENCE_LIB from
             scripts/build_gpu_libs.sh): runs each case's launches, then
             compares the result with the f64 product of the activation
             rows the prep wrote and Q(W) + outliers (relative Frobenius
             error <= 1e-5, gpu_check's bound), and requires the outliers'
             share in it (negative control). Exits 1 on any failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import gpu_recipes  # noqa: E402

SPARSE = "decode-outliers=sparse"
# name, recipe, m, n, k, options: the benchmark's K at a smaller N, and the
# interpreter test's partial chunks, CTA shapes and pipelining depths.
CASES = [
    ("full_m16_k4096", "full", 16, 1024, 4096, SPARSE),
    ("full_m16_k1184_r64", "full", 16, 77, 1184,
     SPARSE + " decode-rows-per-cta=64 decode-warps=8"),
    ("full_m8_k1184_p2", "full", 8, 150, 1184,
     SPARSE + " decode-prefetch=2 decode-warps=12 decode-rows-per-cta=64"),
    ("full_m1_k320", "full", 1, 70, 320, SPARSE),
    ("outlier_k1_m12_k320", "outlier_k1", 12, 77, 320, SPARSE),
    ("outlier_k2_m16_k4096", "outlier_k2", 16, 1024, 4096, SPARSE),
]
# The same for the register patch's packed entries (128-row CTAs of 16
# warps, the patch's shape above 16 stacked rows; 64-row ones, the packed
# form's own there; prefetch depth 2).
PACKED = "decode-outliers=packed"
CASES += [
    ("packed_full_m16_k4096", "full", 16, 1024, 4096,
     PACKED + " decode-rows-per-cta=128 decode-warps=16"),
    ("packed_full_m16_k1184_r64", "full", 16, 77, 1184,
     PACKED + " decode-rows-per-cta=64 decode-warps=8"),
    ("packed_full_m8_k1184_p2", "full", 8, 150, 1184,
     PACKED + " decode-prefetch=2 decode-warps=12 decode-rows-per-cta=64"),
    ("packed_outlier_k1_m12_k320", "outlier_k1", 12, 77, 320, PACKED),
    ("packed_outlier_k2_m16_k4096", "outlier_k2", 16, 1024, 4096, PACKED),
]
# The default for constant entries with two per unit from 9 stacked rows is
# the packed patch with 64-row CTAs (CorrectionToGPU
# kDecodePackedPatchUnitEntries): the benchmark's folded recipes at 16 rows,
# and partial chunks and CTAs at 12.
CASES += [
    ("default_full_m16_k4096", "full", 16, 1024, 4096, ""),
    ("default_outlier_k2_m16_k4096", "outlier_k2", 16, 1024, 4096, ""),
    ("default_full_m12_k1184", "full", 12, 77, 1184, ""),
]


def entry_arrays(options):
    """(values resource stem, second resource stem, the launch's argument
    names) of the packed form `options` asks for."""
    if SPARSE not in options:
        return ("patch_entry_values", "patch_entry_keys",
                ("weights.packed_values", "weights.packed_keys"))
    return ("sparse_entry_values", "sparse_entry_meta",
            ("weights.sparse_values", "weights.sparse_meta"))


def build(out, cases):
    from fp4 import gpu
    fp4_opt = gpu.find_fp4_opt()
    for name, recipe, m, n, k, options in cases:
        d = os.path.join(out, name)
        mlir = gpu_recipes.bench_mlir(dict(name=name, recipe=recipe, m=m,
                                           n=n, k=k), fold_weight=True)
        gpu.compile(mlir, chip="sm_90a", out_dir=d,
                    options=f"format=isa {options}")
        variants = [k["variant"] for k in json.load(
            open(os.path.join(d, "kernels.json")))["kernels"]]
        want = ("sparse" if SPARSE in options else "patch_packed")
        if not any(want in v for v in variants):
            raise SystemExit(f"{name}: no {want} kernel in {variants}")
        # The folded constants' text (MBs): the device needs the kernels.
        if os.path.exists(os.path.join(d, "input.mlir")):
            os.remove(os.path.join(d, "input.mlir"))
        conv = subprocess.run(
            [fp4_opt, "-", f"-convert-fp4-to-gpu=chip=sm_90a {options}",
             "-mlir-print-op-generic"], input=mlir, capture_output=True,
            text=True, check=True)
        blobs = {b: bytes.fromhex(h[8:]) for b, h in
                 re.findall(r'(\w+): "0x([0-9A-F]+)"', conv.stdout)}
        stems = entry_arrays(options)[:2]
        packed = {s: next(v for b, v in blobs.items() if b.startswith(s))
                  for s in stems}
        x = np.random.default_rng(11 + m + k).standard_normal((m, k))
        np.savez(os.path.join(d, "inputs.npz"),
                 x=gpu_recipes.bf16_bits(x.astype(np.float32)),
                 codes=np.frombuffer(blobs["bench_w_codes"], np.uint8),
                 scales=np.frombuffer(blobs["bench_w_scales"], np.uint8),
                 values=np.frombuffer(blobs["bench_w_values"], np.uint16),
                 indices=np.frombuffer(blobs["bench_w_indices"], np.uint8),
                 packed=np.frombuffer(packed[stems[0]], np.int32),
                 meta=np.frombuffer(packed[stems[1]], np.int32))
        json.dump(dict(recipe=recipe, m=m, n=n, k=k, options=options),
                  open(os.path.join(d, "case.json"), "w"))
        print("built", name, flush=True)


def weight64(codes, scales, values, indices, n, k, topk, block=32):
    """Q(W) and Q(W) + outliers in f64 from folded MXFP4 weight parts
    (packed codes, E8M0 scales, bf16 outlier bits, i8 indices of the top
    `topk` of blocks of `block`), through fp4.reference (the numerics
    library; FP4_REFERENCE_LIB or libFP4CAPI)."""
    from fp4 import reference as ref
    q = ref.dequantize(ref.Quantized(
        "mxfp4", (n, k), np.asarray(codes, np.uint8).reshape(n, k // 2),
        np.asarray(scales, np.uint8).reshape(n, k // 32))).astype(np.float64)
    vals = (np.asarray(values, np.uint16).astype(np.uint32) << 16).view(
        np.float32).reshape(n, k // block, topk)
    idx = np.asarray(indices, np.uint8).reshape(n, k // block, topk)
    return q, q + ref.scatter_sparse(vals, idx, block).astype(np.float64)


def product_errors(y, x64, q64, w64):
    """(relative Frobenius error of y against x64 w64^T, and how much
    farther y is from the product without the outliers, x64 q64^T): a
    correct product has the first small and the second large."""
    y64 = x64 @ w64.T
    diff = np.linalg.norm(y - y64)
    return diff / np.linalg.norm(y64), \
        np.linalg.norm(y - x64 @ q64.T) / max(diff, 1e-300)


def check(out, cases):
    import torch
    from fp4 import gpu
    dtypes = {"bfloat16": torch.bfloat16, "float32": torch.float32,
              "uint8": torch.uint8, "int32": torch.int32}
    print("sparse_entries_check on", torch.cuda.get_device_name(), flush=True)
    failed = 0
    for name, *_ in cases:
        d = os.path.join(out, name)
        case = json.load(open(os.path.join(d, "case.json")))
        m, n, k = case["m"], case["n"], case["k"]
        inp = np.load(os.path.join(d, "inputs.npz"))
        values_arg, meta_arg = entry_arrays(case["options"])[2]
        given = {"input": inp["x"].view(np.int16), "weight.codes": inp["codes"],
                 "weight.scales": inp["scales"], values_arg: inp["packed"],
                 meta_arg: inp["meta"]}
        ks = gpu.load(d)
        bufs = {}
        for kn in ks.names():
            args = []
            for a in ks[kn].spec["args"]:
                if a["name"] not in bufs:
                    t = torch.zeros(a["shape"], dtype=dtypes[a["dtype"]],
                                    device="cuda")
                    if a["name"] in given:
                        src = torch.from_numpy(np.ascontiguousarray(
                            given[a["name"]]))
                        t.view(-1).view(torch.uint8).copy_(
                            src.view(-1).view(torch.uint8))
                    bufs[a["name"]] = t
                args.append(bufs[a["name"]])
            ks[kn](*args)
        torch.cuda.synchronize()
        stacked = bufs["stacked0"].float().cpu().numpy().astype(np.float64)
        x64 = stacked.reshape(-1, m, k).sum(axis=0)
        q64, w64 = weight64(inp["codes"], inp["scales"], inp["values"],
                            inp["indices"], n, k,
                            1 if case["recipe"] == "outlier_k1" else 2)
        y = bufs["result"].cpu().numpy().astype(np.float64)
        err, farther = product_errors(y, x64, q64, w64)
        ok = err <= 1e-5 and farther > 100
        failed += not ok
        variant = ",".join(ks[kn].spec["variant"] for kn in ks.names())
        print(f"{'ok  ' if ok else 'FAIL'} {name}: rel. error {err:.2e} "
              f"(the product without the outliers {farther:.1e} times "
              f"farther) {variant}", flush=True)
    print(f"sparse_entries_check: {failed} failing case(s)")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["build", "check"])
    ap.add_argument("out")
    ap.add_argument("--only", nargs="*",
                    help="case-name prefixes (build and check alike)")
    a = ap.parse_args()
    cases = [c for c in CASES
             if not a.only or any(c[0].startswith(p) for p in a.only)]
    if not cases:
        raise SystemExit(f"no case matches {a.only}")
    if a.mode == "build":
        build(a.out, cases)
        return 0
    return check(a.out, cases)


if __name__ == "__main__":
    sys.exit(main())
