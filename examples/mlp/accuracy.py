#!/usr/bin/env python3
"""Error components per accuracy recipe on the MLP block with channel outliers.

For each recipe (a scheme plus accuracy transforms) this script

 1. runs `fp4-opt mlp.mlir -fp4-quantize=... <transforms>` on the SwiGLU block
    of gen_mlp.py, generated with `--outliers` (a few hidden channels of the
    activations 20-100x larger) and calibration samples (mlp.cal.npz);
 2. compiles the transformed IR with `-fp4-fold-constants -fp4-pipeline-cpu`
    and runs it on the evaluation tokens: the end-to-end errors, as in
    run_mlp.py;
 3. captures what every quantizer sees: the same recipe on the block
    generated for all calibration tokens (same weights) is extended so that
    the function also returns the input of every `fp4.quantize` (the rotated /
    permuted / outlier-free value, whatever the transforms made of it) and
    the untransformed operand it came from, compiled the same way and run
    once on the calibration tokens;
 4. tags each quantize with `fp4.calibration = "<matmul>.<act|wgt>"` (key rule
    1 of docs/Calibration.md), writes the captured inputs under those keys and
    runs `-fp4-error-report=calibration=... output=...json` on the transformed
    IR, before fp4-fold-constants, so that every quantize is still there.

Why capture: after fp4-rotate or fp4-outlier-fallback a quantize reads
`fp4.rotate(x)` or the rest of `fp4.split_outliers(x)`, not x; the samples
of x in mlp.cal.npz are not what it quantizes (and rotated constant weights
are no longer plain constants for the report). The captured samples are the
values the compiled program feeds the quantizer on the calibration tokens,
so every recipe (the baseline included) is analysed the same way; for the
down projection they include the quantization error of gate/up upstream.

Figures: the report's energies (E_scale, E_dead, E_grid, E_total,
docs/ErrorReport.md) of each quantize, re-expressed relative to ||x||^2 of the
matmul operand *before* the transforms (rotations and permutations keep the
norm; with outlier fallback the report sees only the rest, whose error is the
operand's error, and the bf16 outliers are exact up to bf16 rounding, which
is not counted), then averaged over the three matmuls (gate, up, down);
clipped / zeroed fractions are the element-weighted mean of the report's.
End-to-end: relative Frobenius error of each matmul's output against the
all-f32 block (f64 numpy), on the evaluation tokens.

Usage: accuracy.py [--tokens T --hidden D --intermediate F --seed S
                    --outliers N --calibration-samples S]
                   [--recipes NAME,...] [--json OUT.json] [--plot OUT.png]
                   [--workdir DIR]
       accuracy.py --from-json OUT.json [--plot OUT.png]   (table/plot again)
"""
import argparse
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from fp4 import ir  # noqa: E402

BUILD = pathlib.Path(os.environ.get("FP4_BUILD_DIR", ROOT / "build"))
FP4_OPT = BUILD / "bin" / "fp4-opt"

# name -> (scheme, transform pass options). `{cal}` is the calibration file
# written by gen_mlp.py.
RECIPES = [
    ("MXFP4 floor", "#fp4.mxfp4", []),
    ("+ macro-scale", "#fp4.mxfp4", ["-fp4-macro-scale"]),
    ("+ rotate H32", "#fp4.mxfp4", ["-fp4-rotate=size=32"]),
    ("+ rotate two-level", "#fp4.mxfp4",
     ["-fp4-rotate=size=32 mode=two-level calibration={cal}"]),
    ("+ outlier top-2", "#fp4.mxfp4", ["-fp4-outlier-fallback=k=2"]),
    ("+ residual 2:4", "#fp4.mxfp4", ["-fp4-residual"]),
    ("+ rot+outl+resid", "#fp4.mxfp4",
     ["-fp4-rotate=size=32", "-fp4-outlier-fallback=k=2", "-fp4-residual"]),
    ("NVFP4", "#fp4.nvfp4", []),
    ("HiF4", "#fp4.hif4", []),
]
MATMULS = ("gate", "up", "down")
COMPONENTS = ("scale", "dead", "grid", "total")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {shlex.join(map(str, cmd))} failed:\n{proc.stderr}")
    return proc


def rel_err(y, ref):
    ref = ref.astype(np.float64)
    return float(np.linalg.norm(y.astype(np.float64) - ref) / np.linalg.norm(ref))


def silu_mul(g, u):
    g = g.astype(np.float64)
    return g / (1.0 + np.exp(-g)) * u


# --------------------------------------------------------------------------
# Text surgery on the printed IR of the transformed function.
# --------------------------------------------------------------------------

NAME = r"%[\w.#]+"
QUANTIZE = re.compile(rf"^(\s*)({NAME}) = fp4\.quantize ({NAME}) (\{{[^}}]*\}} )?: "
                      r"(tensor<[^>]+>) -> (.*)$")
MATMUL = re.compile(rf"^\s*({NAME}) = fp4\.matmul ({NAME}), ({NAME})\b")
# Transforms between an operand and its quantize: value -> input, input type.
TRANSFORM = re.compile(rf"^\s*({NAME})(?:, {NAME})* = fp4\.(rotate|permute|split_outliers) "
                       rf"({NAME})\b.*? : (tensor<[^>]+>)")
RETURN = re.compile(r"^(\s*)return (.*) : (.*)$")


def instrument(text):
    """Tags every fp4.quantize of @mlp with its calibration key and makes @mlp
    also return each quantize input and the untransformed operand behind it.

    Returns (tagged IR, capturing IR, [(key, kind) of the extra results])."""
    lines = text.split("\n")
    quantizes = {}   # result name -> (line index, input, input type)
    producers = {}   # transformed value -> (input, input type)
    roles = {}       # quantize result -> key
    matmul_count = 0
    for i, line in enumerate(lines):
        if m := QUANTIZE.match(line):
            quantizes[m.group(2)] = (i, m.group(3), m.group(5))
        elif m := TRANSFORM.match(line):
            producers[m.group(1)] = (m.group(3), m.group(4))
        elif m := MATMUL.match(line):
            if matmul_count >= len(MATMULS):
                sys.exit("error: more fp4.matmul ops than the MLP's three")
            mm = MATMULS[matmul_count]
            matmul_count += 1
            roles[m.group(2)] = f"{mm}.act"
            roles[m.group(3)] = f"{mm}.wgt"
    if matmul_count != len(MATMULS) or len(roles) != 2 * len(MATMULS):
        sys.exit(f"error: expected 3 fp4.matmul ops on 6 fp4.quantize results, "
                 f"found {matmul_count} on {len(roles)}")

    tagged = list(lines)
    captures = []  # (value, type, key, kind)
    for result, key in roles.items():
        i, value, ty = quantizes[result]
        m = QUANTIZE.match(lines[i])
        attrs = m.group(4) or ""
        if attrs:
            attrs = attrs.rstrip()[:-1].rstrip() + f', fp4.calibration = "{key}"}} '
        else:
            attrs = f'{{fp4.calibration = "{key}"}} '
        tagged[i] = (f"{m.group(1)}{m.group(2)} = fp4.quantize {m.group(3)} {attrs}: "
                     f"{m.group(5)} -> {m.group(6)}")
        captures.append((value, ty, key, "input"))
        root, root_ty = value, ty
        while root in producers:
            root, root_ty = producers[root]
        captures.append((root, root_ty, key, "operand"))

    capture = list(lines)
    ret = [i for i, line in enumerate(capture) if RETURN.match(line)]
    if len(ret) != 1:
        sys.exit("error: expected one return in the transformed IR")
    r = ret[0]
    m = RETURN.match(capture[r])
    indent, values, types = m.group(1), m.group(2), m.group(3)
    extra_lines, extra_values, extra_types = [], [], []
    for n, (value, ty, _, _) in enumerate(captures):
        if ty.endswith("xf32>"):
            extra_values.append(value)
        else:  # bf16 / f16 weights: extend to f32 for the capture
            f32 = re.sub(r"x(bf16|f16)>$", "xf32>", ty)
            extra_lines.append(f"{indent}%capture_{n} = arith.extf {value} : {ty} to {f32}")
            extra_values.append(f"%capture_{n}")
        extra_types.append(re.sub(r"x(bf16|f16)>$", "xf32>", ty))
    capture[r] = (f"{indent}return {values}, {', '.join(extra_values)} : "
                  f"{types}, {', '.join(extra_types)}")
    capture[r:r] = extra_lines
    sig = [i for i, line in enumerate(capture) if "func.func @mlp(" in line]
    if len(sig) != 1:
        sys.exit("error: expected one func.func @mlp")
    capture[sig[0]] = re.sub(r"-> \((.*?)\)( attributes|\s*\{)",
                             lambda s: f"-> ({s.group(1)}, {', '.join(extra_types)}){s.group(2)}",
                             capture[sig[0]], count=1)
    return "\n".join(tagged), "\n".join(capture), [(k, kind) for _, _, k, kind in captures]


# --------------------------------------------------------------------------
# One recipe.
# --------------------------------------------------------------------------

def compile_and_load(path, out):
    run([FP4_OPT, path, "-fp4-fold-constants", "-fp4-pipeline-cpu", "-o", out])
    ctx = ir.Context()
    return ir.ExecutionEngine(ctx.parse_module(pathlib.Path(out).read_text()), opt_level=2)


def run_recipe(index, name, scheme, transforms, src, src_cal, cal, x, x_cal, refs, work):
    stem = work / f"recipe{index}"
    passes = [f'-fp4-quantize=scheme="{scheme}"'] + [t.format(cal=cal) for t in transforms]

    # End to end: the recipe's program on the evaluation tokens.
    transformed = stem.with_suffix(".transformed.mlir")
    run([FP4_OPT, src, *passes, "-o", transformed])
    engine = compile_and_load(transformed, stem.with_suffix(".llvm.mlir"))
    gate, up, _, down = engine.invoke("mlp", x, results=[ir.MemRef(np.float32, 2)] * 4)
    g_ref, u_ref, d_ref = refs
    e2e = {"gate": rel_err(gate, g_ref), "up": rel_err(up, u_ref), "down": rel_err(down, d_ref)}

    # The same recipe on the block generated for all calibration tokens at
    # once (same weights, same transforms), instrumented to return what each
    # quantizer sees; one call (returned buffers are not freed by the JIT).
    cal_stem = work / f"recipe{index}_calibration"
    cal_transformed = cal_stem.with_suffix(".transformed.mlir")
    run([FP4_OPT, src_cal, *passes, "-o", cal_transformed])
    tagged, capture, captured = instrument(cal_transformed.read_text())
    tagged_path = cal_stem.with_suffix(".tagged.mlir")
    tagged_path.write_text(tagged)
    capture_path = cal_stem.with_suffix(".capture.mlir")
    capture_path.write_text(capture)
    cal_engine = compile_and_load(capture_path, cal_stem.with_suffix(".llvm.mlir"))
    values = cal_engine.invoke("mlp", x_cal,
                               results=[ir.MemRef(np.float32, 2)] * (4 + len(captured)))[4:]
    samples, operand_norm2 = {}, {}
    for value, (key, kind) in zip(values, captured):
        if kind == "input":
            samples[key] = value.astype(np.float32)
        else:
            operand_norm2[key] = float(np.sum(value.astype(np.float64) ** 2))
    cal_path = stem.with_suffix(".captured.npz")
    np.savez(cal_path, **samples)

    report_path = stem.with_suffix(".report.json")
    report_cmd = [FP4_OPT, tagged_path,
                  f"-fp4-error-report=calibration={cal_path} output={report_path}",
                  "-o", os.devnull]
    run(report_cmd)
    report = json.loads(report_path.read_text())
    ops = {op["key"]: op for op in report["ops"]}
    missing = sorted(set(samples) - set(ops))
    if missing:
        sys.exit(f"error: {name}: the report did not analyse {missing}")

    per_op = {}
    for key, op in ops.items():
        absolute = {c: op["relative"][c] * op["norm2"] for c in COMPONENTS}
        per_op[key] = {
            "relative": {c: absolute[c] / operand_norm2[key] for c in COMPONENTS},
            "report_relative": op["relative"],
            "source": op["source"], "scheme": op["scheme"], "elements": op["elements"],
            "fractions": op["fractions"],
            "vector_terms_max_abs_residual": op["vector_terms"]["max_abs_residual"],
        }
    summary = {}
    for role in ("act", "wgt"):
        keys = [f"{mm}.{role}" for mm in MATMULS]
        elements = sum(per_op[k]["elements"] for k in keys)
        summary[role] = {c: float(np.mean([per_op[k]["relative"][c] for k in keys]))
                         for c in COMPONENTS}
        for f in ("clipped", "zeroed"):
            summary[role][f] = sum(per_op[k]["fractions"][f] * per_op[k]["elements"]
                                   for k in keys) / elements
    return {"recipe": name, "scheme": scheme, "passes": passes,
            "command": shlex.join(map(str, [FP4_OPT, src, *passes])),
            "report_command": shlex.join(map(str, report_cmd)),
            "summary": summary, "ops": per_op, "e2e": e2e}


def run_all(tokens=16, hidden=256, intermediate=768, seed=2026, outliers=4,
            calibration_samples=256, recipes=None, workdir=None):
    work = pathlib.Path(workdir or tempfile.mkdtemp(prefix="fp4-accuracy-"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / "mlp_outliers.mlir"
    src_cal = work / "mlp_outliers_calibration_tokens.mlir"
    for path, t in ((src, tokens), (src_cal, calibration_samples)):
        # The weights do not depend on the token count (drawn first).
        run([sys.executable, ROOT / "examples/mlp/gen_mlp.py", path, "--tokens", str(t),
             "--hidden", str(hidden), "--intermediate", str(intermediate),
             "--seed", str(seed), "--outliers", str(outliers),
             "--calibration-samples", str(calibration_samples)])
    data = np.load(work / "mlp_outliers.npz")
    cal = work / "mlp_outliers.cal.npz"
    x_cal = np.ascontiguousarray(np.load(cal)["@mlp/arg0"])
    other = np.load(work / "mlp_outliers_calibration_tokens.npz")
    other_cal = np.load(work / "mlp_outliers_calibration_tokens.cal.npz")
    if not (np.array_equal(other_cal["@mlp/arg0"], x_cal)
            and all(np.array_equal(other[k], data[k]) for k in ("w_gate", "w_up", "w_down"))):
        sys.exit("error: the two generated blocks differ in weights or calibration samples")
    x = np.ascontiguousarray(data["x"])
    wg, wu, wd = (data[k].astype(np.float64) for k in ("w_gate", "w_up", "w_down"))
    g_ref = x.astype(np.float64) @ wg.T
    u_ref = x.astype(np.float64) @ wu.T
    h_ref = silu_mul(g_ref, u_ref)
    refs = (g_ref, u_ref, h_ref @ wd.T)
    selected = [r for r in RECIPES if recipes is None or r[0] in recipes]
    if recipes is not None and len(selected) != len(recipes):
        sys.exit(f"error: unknown recipe in {recipes}")
    results = [run_recipe(i, *r, src, src_cal, cal, x, x_cal, refs, work)
               for i, r in enumerate(selected)]
    setup = {"tokens": tokens, "hidden": hidden, "intermediate": intermediate, "seed": seed,
             "outliers": outliers, "calibration_samples": calibration_samples,
             "x_outlier_channels": data["x_outlier_channels"].tolist() if outliers else [],
             "x_outlier_factors": data["x_outlier_factors"].tolist() if outliers else [],
             "h_outlier_channels": data["h_outlier_channels"].tolist() if outliers else [],
             "workdir": str(work)}
    return {"setup": setup, "recipes": results}


def format_table(run_result):
    s = run_result["setup"]
    out = [f"Error components per recipe: SwiGLU MLP tokens={s['tokens']} hidden={s['hidden']} "
           f"intermediate={s['intermediate']} (seed {s['seed']}), {s['outliers']} outlier "
           f"channels (20-100x) in x and in h,",
           f"{s['calibration_samples']} calibration samples. Energies in 1e-3 of ||operand||^2, "
           f"mean over gate/up/down; e2e = relative error of each matmul output vs f32."]
    head = (f"{'recipe':<20}|{'act':>6}{'scale':>7}{'dead':>7}{'grid':>7}{'total':>8}"
            f"{'clip%':>6}{'zero%':>6} |{'wgt':>4}{'scale':>7}{'dead':>7}{'grid':>7}{'total':>8}"
            f" |{'e2e':>4}{'gate':>7}{'up':>7}{'down':>7}")
    out += [head, "-" * len(head)]
    for r in run_result["recipes"]:
        a, w, e = r["summary"]["act"], r["summary"]["wgt"], r["e2e"]
        out.append(f"{r['recipe']:<20}|{'':>6}"
                   + "".join(f"{1e3 * a[c]:>7.2f}" for c in ("scale", "dead", "grid"))
                   + f"{1e3 * a['total']:>8.2f}{100 * a['clipped']:>6.2f}{100 * a['zeroed']:>6.1f} |"
                   + f"{'':>4}" + "".join(f"{1e3 * w[c]:>7.2f}" for c in ("scale", "dead", "grid"))
                   + f"{1e3 * w['total']:>8.2f} |{'':>4}"
                   + "".join(f"{e[m]:>7.4f}" for m in MATMULS))
    return "\n".join(out)


def plot(run_result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recipes = run_result["recipes"]
    names = [r["recipe"] for r in recipes]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2),
                             gridspec_kw={"width_ratios": [1, 1, 0.8]})
    colors = {"scale": "#d62728", "dead": "#1f77b4", "grid": "#7f7f7f"}
    labels = {"scale": "E_scale (scale choice)", "dead": "E_dead (deadzone)",
              "grid": "E_grid (element grid)"}
    pos = np.arange(len(names))
    for ax, role, title in ((axes[0], "act", "activations"), (axes[1], "wgt", "weights")):
        bottom_pos = np.zeros(len(names))
        bottom_neg = np.zeros(len(names))
        for c in ("scale", "dead", "grid"):
            v = np.array([1e3 * r["summary"][role][c] for r in recipes])
            base = np.where(v >= 0, bottom_pos, bottom_neg)
            ax.bar(pos, v, bottom=base, color=colors[c], label=labels[c])
            bottom_pos += np.where(v >= 0, v, 0)
            bottom_neg += np.where(v < 0, v, 0)
        ax.plot(pos, [1e3 * r["summary"][role]["total"] for r in recipes], "k_",
                markersize=14, mew=2, label="E_total")
        ax.set_title(f"{title}: error energy, 1e-3 of ||x||^2 (mean of 3 matmuls)")
        ax.set_xticks(pos, names, rotation=40, ha="right")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.legend(fontsize=8)
    width = 0.27
    for i, m in enumerate(MATMULS):
        axes[2].bar(pos + (i - 1) * width, [r["e2e"][m] for r in recipes], width, label=m)
    axes[2].set_title("end-to-end relative error vs f32")
    axes[2].set_xticks(pos, names, rotation=40, ha="right")
    axes[2].legend(fontsize=8)
    s = run_result["setup"]
    fig.suptitle(f"fp4-error-report per recipe, SwiGLU MLP (D={s['hidden']}, "
                 f"F={s['intermediate']}) with {s['outliers']} outlier channels in x and h")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def add_arguments(ap):
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--intermediate", type=int, default=768)
    ap.add_argument("--seed", type=int, default=2026)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--outliers", type=int, default=4)
    ap.add_argument("--calibration-samples", type=int, default=256)
    ap.add_argument("--recipes", help="comma-separated subset of the recipe names")
    ap.add_argument("--json", help="write all figures here")
    ap.add_argument("--plot", help="write the stacked-bar plot (PNG) here")
    ap.add_argument("--workdir", help="keep the generated IR, captures and reports here")
    ap.add_argument("--from-json", help="print and plot the figures of an earlier --json")
    args = ap.parse_args()
    if args.from_json:
        result = json.loads(pathlib.Path(args.from_json).read_text())
        print(format_table(result))
        if args.plot:
            plot(result, args.plot)
        return
    result = run_all(args.tokens, args.hidden, args.intermediate, args.seed, args.outliers,
                     args.calibration_samples,
                     args.recipes.split(",") if args.recipes else None, args.workdir)
    print(format_table(result))
    print(f"\nIR, captures and reports: {result['setup']['workdir']}; the transform "
          f"passes of each row: --json")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=2))
    if args.plot:
        plot(result, args.plot)


if __name__ == "__main__":
    main()
