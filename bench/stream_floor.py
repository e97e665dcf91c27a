#!/usr/bin/env python3
"""The bytes floor of the decode products, measured (a benchmark, not a
test): how long the GPU takes to stream exactly the bytes a product's
kernel must read, with no kernel of ours involved.

    python3 bench/stream_floor.py [--json PATH]

Why: at decode every kernel is memory bound, so the time of plain W4A4 and
of a recipe is bounded below by their bytes over the memory system's
streaming rate. The full recipe's weight outliers (top-2 of 32: bf16
values and i8 indices) add 6 bytes to MXFP4's 17 per 32 weights, so the
ratio of the two floors is the smallest recipe-over-plain cost any kernel
pair reading those bytes at equal efficiency can reach (the fixed costs of
the activation prep and of the quantizer come on top, and the prep's is
the larger). Each byte set is one contiguous buffer read by one reduction
(torch's float32 sum and int32 amax, the faster counts), rotated over
copies past 4x L2 and replayed as a CUDA graph like bench/gpu_bench.py, so
each read comes from DRAM. The copy bandwidth (read + write, like
peers_h200.py) is printed next to it.

A third row streams the full recipe's weight without the outlier indices:
numerics.md section 7 fixes the outlier values as bf16, so 4 bytes per 32
weights (+23.5%) is what any encoding of top-2 outliers must read, however
its positions are stored; its ratio bounds every kernel of that recipe,
not only ours.
"""
import argparse
import json
import os

import torch
from triton.testing import do_bench

DEV = "cuda"
N, K = 14336, 4096


def product_bytes(n, k, topk, index_bytes=1):
    """Bytes the decode kernel must read for the [n, k] MXFP4 weight and,
    with `topk`, its weight outliers per 32 (bf16 values, `index_bytes`
    per index: 1 as stored today, 0 for the encoding-independent bound)."""
    codes, scales = n * k // 2, n * k // 32
    outliers = n * (k // 32) * topk * (2 + index_bytes)
    return codes + scales + outliers


def stream_us(nbytes, l2):
    """Median microseconds to read `nbytes` once from DRAM."""
    words = nbytes // 4
    copies = max(2, -(-4 * l2 // nbytes))
    bufs = [torch.empty(words, dtype=torch.int32, device=DEV).random_(
        0, 1 << 20) for _ in range(copies)]
    best = None
    for op in (lambda b: b.view(torch.float32).sum(),
               lambda b: b.amax()):
        def launch_all(op=op):
            for b in bufs:
                op(b)
        g = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            launch_all()
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=stream):
                launch_all()
        torch.cuda.synchronize()
        us = 1e3 * do_bench(g.replay, warmup=10, rep=100,
                            return_mode="median") / copies
        best = us if best is None else min(best, us)
    return best


def copy_tbps():
    x = torch.empty(1 << 30, dtype=torch.bfloat16, device=DEV).normal_()
    y = torch.empty_like(x)
    ms = do_bench(lambda: y.copy_(x), warmup=50, rep=300,
                  return_mode="median")
    return 2 * x.numel() * 2 / ms / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=os.path.join(
        os.environ.get("OUT", "/tmp"), "stream_floor.json"))
    args = ap.parse_args()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for name, topk, index_bytes in (
            ("plain W4A4 weight", 0, 1), ("full recipe weight", 2, 1),
            ("full recipe weight, outlier values only", 2, 0)):
        b = product_bytes(N, K, topk, index_bytes)
        us = stream_us(b, l2)
        rows.append(dict(product=name, n=N, k=K, bytes=b, us=us,
                         tbps=b / us / 1e6))
    bw = copy_tbps()
    print(f"{torch.cuda.get_device_name()}: copy bandwidth {bw:.2f} TB/s "
          "(read + write)")
    print("| bytes streamed (N x K = 14336 x 4096) | MB | us | TB/s |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['product']} | {r['bytes'] / 1e6:.1f} | {r['us']:.2f} | "
              f"{r['tbps']:.2f} |")
    ratio = rows[1]["us"] / rows[0]["us"]
    bound = rows[2]["us"] / rows[0]["us"]
    print(f"floor ratio full / plain: {ratio:.3f} (as stored), "
          f"{bound:.3f} (values only: any encoding of section 7)")
    json.dump(dict(device=torch.cuda.get_device_name(), copy_tbps=bw,
                   rows=rows, floor_ratio=ratio,
                   floor_ratio_values_only=bound),
              open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
