#!/usr/bin/env python3
"""Markdown tables for docs/Performance.md, and its figure
docs/performance.png, from one device run's files (gpu_bench.json and
ptxas.txt that bench/run_h200.sh leaves in $OUT):

    python3 bench/render_performance.py gpu_bench.json [ptxas.txt] \
        [--plot docs/performance.png]

The figure needs no GPU (matplotlib only): a roofline of every matmul case
(TFLOP/s against arithmetic intensity, under the copy-bandwidth roof that
defines the floor) and, per shape, each kernel's time over the bytes floor.
docs/performance.png is rendered from docs/perf/s24/s24b_gpu_bench.json (the
latest complete run; docs/perf/s22/s21f_gpu_bench.json rendered it before).
"""
import argparse
import json
import math
import os
import sys


def matmul_bytes(row, copy_tbps):
    """Bytes the FP4 kernel must move: the run's own count when the JSON has
    it, else what the floor implies (floor = bytes / copy bandwidth)."""
    if row.get("bytes"):
        return row["bytes"]
    return row["floor_us"] * copy_tbps * 1e6


# Peer columns of gpu_bench.json: key (in row["peers"] or the row), label.
PEERS = [("bf16_us", "cuBLAS bf16"), ("cublas_graph_us", "cuBLAS bf16, graph"),
         ("triton_dot_scaled_us", "Triton dot_scaled"),
         ("int4_tinygemm_us", "torch int4")]


def peer_us(row, key):
    return row.get(key) or row.get("peers", {}).get(key)


def shape_class(row):
    return "decode" if row["m"] <= 16 else "prefill"


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")  # no display: CI and the GPU machine
    import matplotlib.pyplot as plt

    bw = data["copy_TBps"]
    rows = [r for r in data["rows"] if r["kind"] == "matmul"]
    if not rows:
        raise SystemExit("render_performance.py: no matmul rows to plot")
    fig, (roof, bars) = plt.subplots(1, 2, figsize=(14, 5.5),
                                     gridspec_kw={"width_ratios": [1, 1.3]})
    markers = {"bf16_us": "s", "cublas_graph_us": "D",
               "triton_dot_scaled_us": "^", "int4_tinygemm_us": "v"}

    # Roofline: x = FLOP per byte the FP4 kernel moves; the memory roof
    # bw * x is where a kernel running at the floor sits.
    intensity = {r["case"]: 2 * r["m"] * r["n"] * r["k"] /
                 matmul_bytes(r, bw) for r in rows}
    lo, hi = min(intensity.values()) / 2, max(intensity.values()) * 2
    roof.plot([lo, hi], [bw * lo, bw * hi], "k--", lw=1,
              label=f"bytes floor ({bw:.2f} TB/s copy bandwidth)")
    seen, labelled = set(), {}
    for r in rows:
        x = intensity[r["case"]]
        flops = 2 * r["m"] * r["n"] * r["k"]
        fmt = r["case"].split("_")[0]
        label = {"mm": "ours, MXFP4 W4A16", "w4a4": "ours, MXFP4 W4A4",
                 "nv": "ours, NVFP4 W4A16"}.get(fmt, "ours, " + fmt)
        color = {"mm": "C0", "w4a4": "C1", "nv": "C2"}.get(fmt, "C4")
        roof.scatter([x], [flops / r["us"] / 1e6], color=color, s=50,
                     zorder=3, label=None if label in seen else label)
        seen.add(label)
        for key, name in PEERS:
            us = peer_us(r, key)
            if us:
                roof.scatter([x], [flops / us / 1e6], marker=markers[key],
                             facecolors="none", edgecolors="0.4", s=40,
                             label=None if name in seen else name)
                seen.add(name)
        if fmt == "mm":  # one label per shape; stacked where shapes share x
            stack = labelled.setdefault(round(math.log10(x), 1), [])
            roof.annotate(f"{r['m']}x{r['n']}x{r['k']}",
                          (x, flops / r["us"] / 1e6), fontsize=7,
                          textcoords="offset points",
                          xytext=(8, -4 - 9 * len(stack)))
            stack.append(r["case"])
    roof.set_xscale("log")
    roof.set_yscale("log")
    roof.set_xlabel("arithmetic intensity (FLOP per byte of FP4 weights, "
                    "scales, activations, output)")
    roof.set_ylabel("TFLOP/s")
    roof.set_title("Roofline: matmuls (MXFP4/NVFP4 weights)")
    roof.grid(True, which="both", alpha=0.3)
    roof.legend(fontsize=7, loc="upper left")

    # Per shape, grouped by class: time over the floor (1 = at the floor).
    shapes = [r for r in rows if r.get("peers") or r.get("cublas_graph_us")]
    shapes.sort(key=lambda r: (shape_class(r) != "decode", r["m"], r["n"]))
    series = [("us", "ours")] + PEERS
    width = 0.8 / len(series)
    for i, (key, name) in enumerate(series):
        xs, ys = [], []
        for j, r in enumerate(shapes):
            us = r["us"] if key == "us" else peer_us(r, key)
            if us:
                xs.append(j + (i - (len(series) - 1) / 2) * width)
                ys.append(us / r["floor_us"])
        bars.bar(xs, ys, width, label=name,
                 color="C0" if key == "us" else f"C{i + 4}")
    bars.axhline(1.0, color="k", ls="--", lw=1, label="bytes floor")
    bars.set_yscale("log")
    bars.set_xticks(range(len(shapes)))
    bars.set_xticklabels([f"{shape_class(r)}\n{r['m']}x{r['n']}x{r['k']}"
                          for r in shapes], fontsize=8)
    bars.set_ylabel("time / bytes floor (lower is better)")
    bars.set_title("MXFP4 W4A16 against the peers, per shape")
    bars.grid(True, axis="y", which="both", alpha=0.3)
    bars.legend(fontsize=7, ncol=2)

    fig.suptitle(f"{data.get('gpu', 'GPU')}: fp4-pipeline-nvvm kernels "
                 "(bench/gpu_bench.py)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def recipe_table(rows):
    """The accuracy recipes (gpu_bench's recipe rows): us per shape, each
    with its cost over plain W4A4 of the same run and shape."""
    shapes, recipes, cell = [], [], {}
    for r in rows:
        shape = (r["m"], r["n"], r["k"])
        if shape not in shapes:
            shapes.append(shape)
        if r["recipe"] not in recipes:
            recipes.append(r["recipe"])
        cell[r["recipe"], shape] = r
    lines = ["| recipe, us (over plain W4A4) | " +
             " | ".join(f"{m} x {n} x {k}" for m, n, k in shapes) + " |",
             "|---" * (len(shapes) + 1) + "|"]
    for name in recipes:
        out = []
        for shape in shapes:
            r = cell.get((name, shape))
            if r is None:
                out.append("-")
            elif r.get("over_plain_pct") is None or name == "plain":
                out.append(f"{r['us']:.1f}")
            else:
                out.append(f"{r['us']:.1f} ({r['over_plain_pct']:+.0f}%)")
        lines.append(f"| {name} | " + " | ".join(out) + " |")
    return "\n".join(lines)


# The keys each row kind must have (gpu_bench.py's schema); rows of other
# kinds are left out with a note on stderr.
ROW_KEYS = {
    "matmul": ("case", "variant", "us", "floor_us", "m", "n", "k", "tflops"),
    "quantize": ("case", "variant", "us", "bytes", "tbps", "pct_copy"),
    "dequantize": ("case", "variant", "us", "bytes", "tbps", "pct_copy"),
    "recipe": ("case", "recipe", "m", "n", "k", "us"),
}


def load_run(path):
    """gpu_bench.json, checked against the schema the tables need; exits
    with a message naming the file and what is wrong (never a traceback)."""
    def fail(why):
        sys.exit(f"render_performance: {path}: {why}")
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"cannot read it ({e.strerror})")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        fail(f"not a gpu_bench.json (invalid JSON: {e})")
    if not isinstance(data, dict):
        fail("not a gpu_bench.json (the top level is not an object)")
    for key in ("gpu", "copy_TBps", "rows"):
        if key not in data:
            fail(f"not a gpu_bench.json (no '{key}')")
    if not isinstance(data["rows"], list):
        fail("'rows' is not a list")
    if not isinstance(data["copy_TBps"], (int, float)) or \
            data["copy_TBps"] <= 0:
        fail(f"'copy_TBps' must be a positive number, got "
             f"{data['copy_TBps']!r}")
    kept = []
    for i, row in enumerate(data["rows"]):
        if not isinstance(row, dict) or "kind" not in row:
            fail(f"row {i} has no 'kind'")
        keys = ROW_KEYS.get(row["kind"])
        if keys is None:
            print(f"render_performance: {path}: row {i} "
                  f"({row.get('case', '?')}) of kind {row['kind']!r} is "
                  "left out (no table renders that kind)", file=sys.stderr)
            continue
        missing = [k for k in keys if row.get(k) is None]
        if missing:
            fail(f"row {i} ({row.get('case', '?')}, kind {row['kind']}) "
                 f"lacks {', '.join(missing)}")
        if row["kind"] == "matmul" and not row["floor_us"] > 0:
            fail(f"row {i} ({row['case']}): 'floor_us' must be positive")
        kept.append(row)
    data["rows"] = kept
    return data


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="gpu_bench.json of one run")
    parser.add_argument("ptxas", nargs="?", help="ptxas.txt of the same build")
    parser.add_argument("--plot", metavar="PNG",
                        help="also draw the roofline / floor figure here")
    args = parser.parse_args()
    data = load_run(args.json)
    if args.ptxas and not os.path.isfile(args.ptxas):
        sys.exit(f"render_performance: {args.ptxas}: no such file")
    if args.plot:
        plot(data, args.plot)
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
        ratio = f"{best / r['us']:.2f}x" if best else "-"
        print(f"| {r['case']} ({r['m']}x{r['n']}x{r['k']}) | {r['variant']} | "
              f"{r['us']:.1f} | {r['floor_us']:.1f} | "
              f"{r['us'] / r['floor_us']:.2f}x | {f(peers[0])} | {f(peers[1])} | "
              f"{f(peers[2])} | {f(peers[3])} | "
              f"{ratio} | {r['tflops']:.0f} |")
    print()
    print("| case | our kernel | us | bytes moved | TB/s | % of copy bandwidth |")
    print("|---|---|---|---|---|---|")
    for r in data["rows"]:
        if r["kind"] not in ("quantize", "dequantize"):
            continue
        print(f"| {r['case']} | {r['variant']} | {r['us']:.1f} | "
              f"{r['bytes'] / 1e6:.1f} MB | {r['tbps']:.2f} | "
              f"{r['pct_copy']:.0f}% |")
    recipes = [r for r in data["rows"] if r["kind"] == "recipe"]
    if recipes:
        print()
        print(recipe_table(recipes))
    if args.ptxas:
        print()
        print("| case | kernel | variant | registers | spill stores / loads (bytes) |"
              " shared memory (bytes) |")
        print("|---|---|---|---|---|---|")
        for line in open(args.ptxas):
            t = line.split()
            if len(t) < 9:
                continue
            print(f"| {t[0]} | {t[1]} | {t[2]} | {t[4]} | {t[6]} | {t[8]} |")


if __name__ == "__main__":
    main()
