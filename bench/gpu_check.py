#!/usr/bin/env python3
"""GPU correctness check (run on the GPU machine; fails loudly).

For every case compiled into bench/kernels/ (bench/build_gpu_kernels.py):
  quantize   the kernel's bytes must equal the C++ reference quantizer's
             (fp4.reference, libFP4Reference.so) on the same input, rotation
             included, for fresh random bf16 inputs with special values
             (+-0, ties, tiny negatives, NaN, +-Inf, saturating values,
             all-zero blocks) mixed in;
  dequantize the kernel's bf16 values must equal the reference's (bit for
             bit, NaN positions included);
  matmul     relative Frobenius error <= 1e-5 against the f64 product of
             the dequantized operands (reference dequantizer), with fresh
             random operands each run;
  recipe     every accuracy recipe of docs/Accuracy.md compiled whole by
             fp4-pipeline-nvvm (bench/gpu_recipes.py, run with fp4-run):
             every part (rest, quantized values, outlier and residual side
             tensors) bit-exact with the CPU pipeline, y within 1e-5
             relative Frobenius error of the f64 sum of the term products.
Every output is poisoned (NaN / 0xAB bytes) before each launch. Exit code 1
and a FAIL line per mismatch if anything is off.

    python3 bench/gpu_check.py [--kernels bench/kernels] [--seed N]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

from fp4 import gpu, reference  # noqa: E402
import gpu_cases  # noqa: E402
import gpu_recipes  # noqa: E402

DEV = "cuda"
TORCH_DTYPE = {"bfloat16": torch.bfloat16, "float16": torch.float16,
               "float32": torch.float32, "uint8": torch.uint8,
               "int32": torch.int32}
OUT_DTYPE = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def to_dev(a, dtype=None):
    t = torch.from_numpy(np.ascontiguousarray(a)).to(DEV)
    return t.view(dtype) if dtype is not None else t


def bf16_round(x):
    """f32 numpy -> the bf16 values (as f32) torch rounds to (RNE)."""
    return torch.from_numpy(x).to(torch.bfloat16).float().numpy()


def special_activations(rng, rows, cols):
    """bf16-representable f32 data with the edge cases of numerics.md."""
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x *= np.exp2(rng.integers(-8, 8, (rows, 1))).astype(np.float32)
    flat = x.reshape(-1)
    n = flat.size
    idx = rng.choice(n, size=min(n, 64), replace=False)
    specials = np.array([0.0, -0.0, 0.25, -0.25, 0.75, 2.5, 5.0, -1e-30, 1e30,
                         -1e30, 6.0, -6.0, np.inf, -np.inf, np.nan, 1e-38],
                        dtype=np.float32)
    flat[idx] = specials[np.arange(idx.size) % specials.size]
    if rows > 2 and cols >= 64:
        x[1, :32] = 0.0          # an all-zero block
        x[2, :32] = -0.0
    return bf16_round(x)


def quantized_components(q, scheme):
    if scheme == "mxfp4":
        return [q.codes, q.scales.view(np.uint8)]
    if scheme == "nvfp4":
        return [q.codes, q.scales.view(np.uint8),
                np.array(q.tensor_scale, dtype=np.float32)]
    raise ValueError(scheme)


def ref_quantize(x, scheme):
    return reference.quantize(x, scheme=scheme) if scheme == "nvfp4" else \
        reference.quantize(x, scheme="mxfp4", block_size=32)


def check_quantize(kernel_set, case, rng):
    r, c, s = case["rows"], case["cols"], case["scheme"]
    x = special_activations(rng, r, c)
    if s == "nvfp4":
        x = np.nan_to_num(x, nan=1.0, posinf=3.0, neginf=-3.0)  # finite amax
    ref_in = x
    if case["rotate"]:
        ref_in = reference.hadamard_rotate(
            x, case["rotate"], randomized=case["seed"] is not None,
            seed=case["seed"] or 0)
        ref_in = bf16_round(ref_in)   # fp4.rotate on bf16 yields bf16
    q = ref_quantize(ref_in, s)
    expected = quantized_components(q, s)
    xin = to_dev(x).to(torch.bfloat16)
    outs = [torch.full(e.shape, 0xAB, dtype=torch.uint8, device=DEV)
            if e.dtype == np.uint8 else
            torch.full(e.shape, float("nan"), dtype=torch.float32, device=DEV)
            for e in expected]
    run_plan(kernel_set, [xin], outs)
    bad = []
    for i, (o, e) in enumerate(zip(outs, expected)):
        got = o.cpu().numpy()
        if e.dtype == np.float32:
            ok = np.array_equal(got.view(np.uint32), e.view(np.uint32))
        else:
            ok = np.array_equal(got, e)
        if not ok:
            diff = np.argwhere(got.reshape(e.shape) != e) if e.ndim else [()]
            bad.append(f"component {i}: {len(diff)} bytes differ, first at "
                       f"{diff[0].tolist() if len(diff) else '?'}")
    return bad, f"{r}x{c} bytes identical"


def check_dequantize(kernel_set, case, rng):
    r, c, s = case["rows"], case["cols"], case["scheme"]
    x = special_activations(rng, r, c)
    if s == "nvfp4":
        x = np.nan_to_num(x, nan=1.0, posinf=3.0, neginf=-3.0)
    q = ref_quantize(x, s)
    expected = bf16_round(reference.dequantize(q))
    ins = [to_dev(a) for a in quantized_components(q, s)]
    out = torch.full((r, c), float("nan"), dtype=torch.bfloat16, device=DEV)
    run_plan(kernel_set, ins, [out])
    got = out.float().cpu().numpy()
    same = (got.view(np.uint32) == expected.view(np.uint32)) | \
        (np.isnan(got) & np.isnan(expected))
    bad = [] if same.all() else [f"{(~same).sum()} values differ, first at "
                                 f"{np.argwhere(~same)[0].tolist()}"]
    return bad, f"{r}x{c} values identical"


def check_matmul(kernel_set, case, rng):
    m, n, k, s = case["m"], case["n"], case["k"], case["scheme"]
    w = rng.standard_normal((n, k)).astype(np.float32)
    qw = ref_quantize(w, s)
    wd = torch.from_numpy(reference.dequantize(qw)).to(DEV, torch.float64)
    a = rng.standard_normal((m, k)).astype(np.float32)
    if case["w4a4"]:
        qa = ref_quantize(a, s)
        ad = torch.from_numpy(reference.dequantize(qa)).to(DEV, torch.float64)
        ins = [to_dev(t) for t in quantized_components(qa, s)]
    else:
        at = to_dev(a).to(torch.bfloat16)
        ad = at.double()
        ins = [at]
    ins += [to_dev(t) for t in quantized_components(qw, s)]
    out = torch.full((m, n), float("nan"), dtype=OUT_DTYPE[case["out"]],
                     device=DEV)
    run_plan(kernel_set, ins, [out])
    ref = ad @ wd.t()
    err = ((out.double() - ref).norm() / ref.norm()).item()
    tol = 1e-5 if case["out"] == "f32" else 4e-3  # bf16/f16 output rounding
    bad = [] if err <= tol else [f"relative Frobenius error {err:.3e} > {tol:g}"]
    return bad, f"rel. error {err:.2e} (tol {tol:g})"


def run_plan(kernel_set, inputs, outputs):
    """Launches the case's kernels in manifest order on its buffers
    (inputs, then outputs, then zeroed scratch), like the host code."""
    buffers = {}
    kernels = list(kernel_set.names())
    names = []
    first = kernel_set[kernels[0]].spec
    # Inputs and outputs are the non-scratch arguments in ABI order; the
    # union over the launches in order of first appearance.
    for name in kernels:
        for arg in kernel_set[name].spec["args"]:
            if arg["name"] not in names and not arg.get("scratch"):
                names.append(arg["name"])
    for name, t in zip(names, list(inputs) + list(outputs)):
        buffers[name] = t
    for name in kernels:
        spec = kernel_set[name].spec
        args = []
        for arg in spec["args"]:
            if arg.get("scratch") and arg["name"] not in buffers:
                buffers[arg["name"]] = torch.zeros(
                    arg["shape"], dtype=TORCH_DTYPE[arg["dtype"]], device=DEV)
            args.append(buffers[arg["name"]])
        kernel_set[name](*args)
    torch.cuda.synchronize()
    del first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=os.path.join(HERE, "kernels"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--recipes-only", action="store_true",
                    help="check only the recipe cases")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = np.random.default_rng(seed)
    print(f"gpu_check: seed {seed} on {torch.cuda.get_device_name()}")
    failures = 0
    for case in [] if args.recipes_only else gpu_cases.CASES:
        if args.only and case["name"] not in args.only:
            continue
        d = os.path.join(args.kernels, case["name"])
        if not os.path.isdir(d):
            print(f"FAIL {case['name']}: not compiled ({d} missing)")
            failures += 1
            continue
        ks = gpu.load(d)
        variants = ",".join(sorted({ks[n].spec["variant"] for n in ks.names()}))
        try:
            check = {"matmul": check_matmul, "quantize": check_quantize,
                     "dequantize": check_dequantize}[case["kind"]]
            bad, summary = check(ks, case, rng)
        except Exception as ex:  # a launch error is a failure too
            bad, summary = [f"{type(ex).__name__}: {ex}"], ""
        status = "FAIL" if bad else "ok  "
        print(f"{status} {case['name']:28s} [{variants}] {summary}")
        for b in bad:
            print(f"     {b}")
        failures += bool(bad)
    fp4_run = os.path.join(HERE, "..", "tools", "fp4-run", "fp4-run")
    for case in gpu_recipes.CHECK_CASES:
        if args.only and case["name"] not in args.only:
            continue
        d = os.path.join(args.kernels, "recipes", case["name"])
        if not os.path.isdir(d):
            print(f"FAIL {case['name']}: not compiled ({d} missing)")
            failures += 1
            continue
        try:
            bad, summary = gpu_recipes.check(d, fp4_run)
        except Exception as ex:
            bad, summary = [f"{type(ex).__name__}: {ex}"], ""
        print(f"{'FAIL' if bad else 'ok  '} {case['name']:36s} [recipe] {summary}")
        for b in bad:
            print(f"     {b}")
        failures += bool(bad)
    print(f"gpu_check: {failures} failing case(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
