#!/usr/bin/env python3
"""GPU benchmark (not a test): our kernels next to the peers, one run.

Runs on the GPU machine after bench/gpu_check.py passed. For every case of
bench/gpu_cases.py marked bench=True it times the compiled kernel(s) with
triton's do_bench (median, weights rotated over enough copies that the
working set exceeds 2x L2, like peers_h200.py), and for the matmul shapes of
peers_h200.py the peers in the same process: cuBLAS bf16, Triton
dot_scaled, torch int4 (tinygemm) and the floor (bytes / measured copy
bandwidth). Prints one table and writes $OUT/gpu_bench.json.

    python3 bench/gpu_bench.py [--kernels bench/kernels] [--no-peers]
"""
import argparse
import json
import os
import sys

import torch
from triton.testing import do_bench

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

from fp4 import gpu  # noqa: E402
import gpu_cases  # noqa: E402
import gpu_recipes  # noqa: E402
import peers_h200  # noqa: E402

DEV = "cuda"
TORCH_DTYPE = {"bfloat16": torch.bfloat16, "float16": torch.float16,
               "float32": torch.float32, "uint8": torch.uint8,
               "int32": torch.int32}


def random_buffer(arg, g):
    """Plausible contents: random code bytes, scale bytes near 2^0,
    block-sparse indices inside their block, N(0,1) floats; the tensor
    scale 1."""
    shape, dtype, name = arg["shape"], arg["dtype"], arg["name"]
    if dtype == "uint8":
        if name.endswith(".indices"):
            # Block-sparse positions: valid for every block size (>= 16).
            return torch.randint(0, 16, shape, dtype=torch.uint8,
                                 device=DEV, generator=g)
        if name.endswith(".scales"):
            return torch.randint(118, 128, shape, dtype=torch.uint8,
                                 device=DEV, generator=g)
        return torch.randint(0, 256, shape, dtype=torch.uint8, device=DEV,
                             generator=g)
    if name.endswith(".sparse_meta"):
        # Packed 2:4 metadata (SparseWeightEntries.h): every group the
        # valid "no entry" positions (0, 3); the timing does not depend on
        # which groups hold entries.
        return torch.full(shape, 0xCCCCCCCC - (1 << 32), dtype=torch.int32,
                          device=DEV)
    if name.endswith(".packed_keys"):
        # The patch's packed keys (packPatchWeightEntries): per byte a pair
        # index 0..15 and a half bit; a unit row's entry 0 in an even pair,
        # entry 1 in an odd one (always distinct), so that every lane
        # patches as many pairs as real top-2 entries make it do.
        pairs = torch.randint(0, 8, list(shape[:-1]) + [4], dtype=torch.int32,
                              device=DEV, generator=g)
        pairs = 2 * pairs + torch.tensor([0, 1, 0, 1], dtype=torch.int32,
                                         device=DEV)
        halves = torch.randint(0, 2, pairs.shape, dtype=torch.int32,
                               device=DEV, generator=g)
        key = pairs | halves << 5
        word = key[..., 0] | key[..., 1] << 8 | key[..., 2] << 16
        return (word | key[..., 3] << 24).reshape(shape)
    if name.endswith(".sparse_values") or name.endswith(".packed_values"):
        # Two bf16 entries per i32.
        return torch.randn(list(shape[:-1]) + [2 * shape[-1]],
                           dtype=torch.bfloat16, device=DEV,
                           generator=g).view(torch.int32)
    if name.endswith("tensor_scale"):
        return torch.ones(shape, dtype=torch.float32, device=DEV)
    return torch.randn(shape, dtype=TORCH_DTYPE[dtype], device=DEV,
                       generator=g)


def time_case(ks, case, l2, g):
    """Median microseconds of the case's launches; the largest buffers
    (weights or the quantizer's input) rotate over enough copies."""
    names = list(ks.names())
    args = {}
    for n in names:
        for a in ks[n].spec["args"]:
            args.setdefault(a["name"], a)
    size = {n: torch.Size(a["shape"]).numel() *
            torch.tensor([], dtype=TORCH_DTYPE[a["dtype"]]).element_size()
            for n, a in args.items()}
    if case["kind"] == "matmul":
        rotate = [n for n in args if n.startswith("rhs.")]
    else:
        rotate = [n for n in args if n in ("input",) or n.startswith("input.")]
    per_copy = sum(size[n] for n in rotate)
    # Nothing to rotate (a small kernel timed alone): two copies.
    copies = max(2, -(-4 * l2 // per_copy)) if per_copy else 2
    sets = []
    for i in range(copies):
        s = {}
        for n, a in args.items():
            if i == 0 or n in rotate:
                s[n] = random_buffer(a, g) if not a.get("scratch") else \
                    torch.zeros(a["shape"], dtype=TORCH_DTYPE[a["dtype"]],
                                device=DEV)
            else:
                s[n] = sets[0][n]
        sets.append(s)
    # Launch overhead (Python + driver, ~10-40 us) exceeds the kernels, so
    # time GPU work by CUDA-graph replay: one graph holds `copies` launches
    # over the rotating buffers; per-launch time = replay time / copies.
    def launch_all():
        for s in sets:
            for n in names:
                ks[n](*[s[a["name"]] for a in ks[n].spec["args"]])
    launch_all()                      # loads modules, sets smem limits
    torch.cuda.synchronize()
    return graph_time(launch_all, copies), size


def time_recipe(ks, l2, g):
    """Median microseconds of all launches of a recipe (bench form of
    bench/gpu_recipes.py). Each kernel argument gets its own buffer (names
    repeat across the recipe's kernels); buffers of 4 MiB and more (the
    weight parts, prefill activations) rotate over enough copies to exceed
    2x L2, so no kernel finds its weight in L2 from the previous one."""
    names = list(ks.names())
    per = [(n, a) for n in names for a in ks[n].spec["args"]]

    def nbytes(a):
        return torch.Size(a["shape"]).numel() * \
            torch.tensor([], dtype=TORCH_DTYPE[a["dtype"]]).element_size()
    big = {i for i, (_, a) in enumerate(per) if nbytes(a) >= 1 << 22}
    per_copy = sum(nbytes(per[i][1]) for i in big)
    # Nothing to rotate (a small kernel timed alone): two copies.
    copies = max(2, -(-4 * l2 // per_copy)) if per_copy else 2
    sets = []
    for c in range(copies):
        sets.append([random_buffer(a, g) if (c == 0 or i in big) else sets[0][i]
                     for i, (_, a) in enumerate(per)])

    def launch_all():
        for s in sets:
            i = 0
            for n in names:
                cnt = len(ks[n].spec["args"])
                ks[n](*s[i:i + cnt])
                i += cnt
    launch_all()
    torch.cuda.synchronize()
    return graph_time(launch_all, copies)


class OneKernel:
    """A KernelSet view holding one of its kernels (for time_recipe)."""

    def __init__(self, ks, name):
        self.ks, self.name = ks, name

    def names(self):
        return [self.name]

    def __getitem__(self, name):
        return self.ks[name]


def bench_recipes(kernels, only, g, l2, breakdown=False):
    """Each recipe's cost next to plain W4A4 (quantize + matmul) of the
    same shape (rows of gpu_bench.json with kind "recipe"); with
    `breakdown`, also each launch timed alone (row "kernels": name ->
    variant and us; alone, a small kernel shows its launch latency)."""
    rows, plain = [], {}
    for case in gpu_recipes.BENCH_CASES:
        if only and case["name"] not in only:
            continue
        d = os.path.join(kernels, "recipes", case["name"])
        if not os.path.isdir(d):
            print(f"skip {case['name']}: not compiled", flush=True)
            continue
        ks = gpu.load(d)
        us = time_recipe(ks, l2, g)
        shape = (case["m"], case["n"], case["k"])
        if case["recipe"] == "plain":
            plain[shape] = us
        row = dict(case=case["name"], kind="recipe", recipe=case["recipe"],
                   m=shape[0], n=shape[1], k=shape[2], us=us,
                   launches=len(list(ks.names())),
                   variant=",".join(sorted({ks[n].spec["variant"]
                                            for n in ks.names()})))
        if shape in plain:
            row["over_plain_pct"] = 100 * (us / plain[shape] - 1)
        if breakdown:
            row["kernels"] = {n: [ks[n].spec["variant"],
                                  round(time_recipe(OneKernel(ks, n), l2, g), 2)]
                              for n in ks.names()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def graph_time(fn, launches):
    """Median microseconds per launch of `fn` (which issues `launches`
    launches on the current stream) replayed as one CUDA graph."""
    g = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()                           # warm up on the capture stream
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=stream):
            fn()
    torch.cuda.synchronize()
    ms = do_bench(g.replay, warmup=10, rep=100, return_mode="median")
    return 1e3 * ms / launches


def cublas_graph_us(m, n, k, l2, g):
    """cuBLAS bf16 for the same shape, timed like our kernels (graph replay,
    weights rotated past 2x L2): the launch-overhead-free peer number."""
    a = torch.randn(m, k, dtype=torch.bfloat16, device=DEV, generator=g)
    copies = max(2, -(-4 * l2 // (2 * n * k)))
    ws = [torch.randn(n, k, dtype=torch.bfloat16, device=DEV, generator=g)
          for _ in range(copies)]
    out = torch.empty(m, n, dtype=torch.bfloat16, device=DEV)

    def fn():
        for w in ws:
            torch.matmul(a, w.t(), out=out)
    return graph_time(fn, copies)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=os.path.join(HERE, "kernels"))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--recipes-only", action="store_true",
                    help="time only the recipe rows (bench/gpu_recipes.py)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also time each launch of a recipe alone")
    ap.add_argument("--json", default=None,
                    help="where the rows go (default $OUT/gpu_bench.json); "
                         "a partial run (--only) after a full one in the "
                         "same call must not overwrite the full run's file")
    args = ap.parse_args()
    g = torch.Generator(device=DEV).manual_seed(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    bw = peers_h200.copy_bandwidth()
    print(f"copy bandwidth {bw:.2f} TB/s on {torch.cuda.get_device_name()}",
          flush=True)
    rows = []
    for case in [] if args.recipes_only else gpu_cases.CASES:
        if not case["bench"] or (args.only and case["name"] not in args.only):
            continue
        d = os.path.join(args.kernels, case["name"])
        if not os.path.isdir(d):
            print(f"skip {case['name']}: not compiled", flush=True)
            continue
        ks = gpu.load(d)
        us, size = time_case(ks, case, l2, g)
        variant = ",".join(sorted({ks[n].spec["variant"] for n in ks.names()}))
        io = sum(v for k, v in size.items()
                 if not any(a.get("scratch") for n in ks.names()
                            for a in ks[n].spec["args"] if a["name"] == k))
        row = dict(case=case["name"], kind=case["kind"], variant=variant,
                   us=us, bytes=io, floor_us=io / (bw * 1e12) * 1e6)
        if case["kind"] == "matmul":
            m, n, k = case["m"], case["n"], case["k"]
            row.update(m=m, n=n, k=k, tflops=2 * m * n * k / us / 1e6)
            if not args.no_peers and not case["w4a4"] and \
                    case["scheme"] == "mxfp4" and \
                    (m, n, k) in peers_h200.SHAPES:
                row["peers"] = peers_h200.measure_peers(m, n, k, bw)
            if not case["w4a4"] and case["scheme"] == "mxfp4":
                row["cublas_graph_us"] = cublas_graph_us(m, n, k, l2, g)
        else:
            row["tbps"] = io / us / 1e6
            row["pct_copy"] = 100 * row["tbps"] / bw
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "peers"}),
              flush=True)
    recipe_rows = bench_recipes(args.kernels, args.only, g, l2,
                                args.breakdown)
    rows += recipe_rows
    path = args.json or os.path.join(os.environ.get("OUT", "/tmp"),
                                     "gpu_bench.json")
    json.dump({"gpu": torch.cuda.get_device_name(), "copy_TBps": bw,
               "rows": rows}, open(path, "w"), indent=1)
    print()
    print("| case | variant | ours us | floor us | ours/floor | cuBLAS bf16 | "
          "cuBLAS bf16 (graph) | Triton dot_scaled | torch int4 | "
          "best peer / ours | TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["kind"] != "matmul":
            continue
        p = r.get("peers", {})
        peers = [p.get(k) for k in ("bf16_us", "triton_dot_scaled_us",
                                    "int4_tinygemm_us")]
        # The best peer includes cuBLAS's graph-timed launch (the only peer
        # at some shapes); "-" where no peer runs the case.
        best = min([x for x in peers + [r.get("cublas_graph_us")] if x],
                   default=None)
        f = lambda v: f"{v:.1f}" if v else "-"
        ratio = f"{best / r['us']:.2f}x" if best else "-"
        print(f"| {r['case']} | {r['variant']} | {r['us']:.1f} | "
              f"{r['floor_us']:.1f} | {r['us'] / r['floor_us']:.2f}x | "
              f"{f(peers[0])} | {f(r.get('cublas_graph_us'))} | "
              f"{f(peers[1])} | {f(peers[2])} | "
              f"{ratio} | {r['tflops']:.0f} |")
    print()
    print("| case | variant | us | TB/s | % of copy bandwidth |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["kind"] not in ("quantize", "dequantize"):
            continue
        print(f"| {r['case']} | {r['variant']} | {r['us']:.1f} | "
              f"{r['tbps']:.2f} | {r['pct_copy']:.0f}% |")
    print()
    print("| recipe | M x N x K | launches | us | over plain W4A4 |")
    print("|---|---|---|---|---|")
    for r in recipe_rows:
        over = r.get("over_plain_pct")
        print(f"| {r['recipe']} | {r['m']}x{r['n']}x{r['k']} | "
              f"{r['launches']} | {r['us']:.1f} | "
              f"{'-' if over is None else f'{over:+.0f}%'} |")


if __name__ == "__main__":
    main()
