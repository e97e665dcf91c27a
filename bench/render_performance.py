#!/usr/bin/env python3
"""Markdown tables for docs/Performance.md from one device run's files
(gpu_bench.json and ptxas.txt that bench/run_h200.sh leaves in $OUT):

    python3 bench/render_performance.py gpu_bench.json [ptxas.txt]
"""
import json
import sys


def main():
    data = json.load(open(sys.argv[1]))
    bw = data["copy_TBps"]
    print(f"GPU: {data['gpu']}, measured copy bandwidth {bw:.2f} TB/s "
          "(read + write).\n")
    print("| case (M x N x K) | our kernel | ours (us) | floor (us) | ours / floor |"
          " cuBLAS bf16 | cuBLAS bf16, graph | Triton dot_scaled | torch int4 |"
          " best peer / ours | TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    f = lambda v: f"{v:.1f}" if v else "-"
    for r in data["rows"]:
        if r["kind"] != "matmul":
            continue
        p = r.get("peers", {})
        peers = [p.get("bf16_us"), r.get("cublas_graph_us"),
                 p.get("triton_dot_scaled_us"), p.get("int4_tinygemm_us")]
        best = min([x for x in peers if x], default=None)
        print(f"| {r['case']} ({r['m']}x{r['n']}x{r['k']}) | {r['variant']} | "
              f"{r['us']:.1f} | {r['floor_us']:.1f} | "
              f"{r['us'] / r['floor_us']:.2f}x | {f(peers[0])} | {f(peers[1])} | "
              f"{f(peers[2])} | {f(peers[3])} | "
              f"{(best / r['us']) if best else 0:.2f}x | {r['tflops']:.0f} |")
    print()
    print("| case | our kernel | us | bytes moved | TB/s | % of copy bandwidth |")
    print("|---|---|---|---|---|---|")
    for r in data["rows"]:
        if r["kind"] == "matmul":
            continue
        print(f"| {r['case']} | {r['variant']} | {r['us']:.1f} | "
              f"{r['bytes'] / 1e6:.1f} MB | {r['tbps']:.2f} | "
              f"{r['pct_copy']:.0f}% |")
    if len(sys.argv) > 2:
        print()
        print("| case | kernel | variant | registers | spill stores / loads (bytes) |"
              " shared memory (bytes) |")
        print("|---|---|---|---|---|---|")
        for line in open(sys.argv[2]):
            t = line.split()
            if len(t) < 9:
                continue
            print(f"| {t[0]} | {t[1]} | {t[2]} | {t[4]} | {t[6]} | {t[8]} |")


if __name__ == "__main__":
    main()
