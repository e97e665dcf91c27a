#!/usr/bin/env python3
"""The GPU rows of the real-model table: every recipe of
bench/eval_real_model.py compiled by fp4-pipeline-nvvm (fp4-run build),
run on the GPU machine (fp4-run exec) and compared with the CPU
pipeline's bits and with fp32.

Three steps, because the GPU machine has no MLIR and the build machine no
GPU:

    # here, after `bench/eval_real_model.py --out build/eval` (it saves the
    # input batches and every recipe's CPU outputs in build/eval/outputs):
    python3 bench/eval_real_model_gpu.py build --out build/eval [--only NAME ...]
    # on the GPU machine, per recipe (build/eval/gpu/NAME is self-contained:
    # model.so, its runtime library, the inputs):
    python3 bench/eval_real_model_gpu.py run build/eval/gpu/NAME --results R/NAME
    # here again, with the result folders brought back:
    python3 bench/eval_real_model_gpu.py compare --out build/eval --results R

build: quantizes the exported model with the recipe (the same passes as
the CPU rows), requests C wrappers, counts what `convert-fp4-to-gpu` leaves
on the host (its "stays on the host" remarks: 0 means every fp4 op became
a kernel) and the kernels, and runs `fp4-run build`; times in build.json.
run: `fp4-run exec` per input batch, --repeats timed calls of the first
(host memory: the compiled host code copies operands to the GPU and back
at every launch, and runs the non-quantized parts, LayerNorm, softmax,
attention products of a float recipe, as host loops; so the time is that
whole forward, not the kernels'). compare: whether the GPU's bits are the
CPU pipeline's, their relative difference, each one's error against the
CPU fp32 lowering (relative Frobenius, cos(hidden)), cos(emb) / pairs rho,
build and run times; writes OUT/real_model_gpu.{json,md}. Where every
partial sum of the products is exact in f32 (MXFP4 and HiF4: E2M1 grids
and power-of-two scales), the GPU's MMAs and the CPU's k-ordered loop give
the same bits whatever the order. Non-power-of-two scales (NVFP4's E4M3
block scale times the tensor scale, the macro-block factor) and bf16
correction values make partial sums round, the two orders round
differently (gpu_check.py holds such products to 1e-5 of the f64 product),
and the next layers' activation quantizers turn that into whole
quantization steps here and there; there the check is accuracy: the GPU's
cos(hidden) within COS_TOLERANCE of the CPU's and its error at most 2%
above. Needs only numpy (no torch); exit status 1 when a
GPU result fails that or a step fails.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import eval_real_model as E  # noqa: E402 (no torch at import time)

FP4_RUN = os.path.join(E.ROOT, "tools", "fp4-run", "fp4-run")
# A GPU result that is not the CPU's bits must be as accurate: cos(hidden)
# vs fp32 within this of the CPU's, and its relative error vs fp32 at most
# 2% above the CPU's.
COS_TOLERANCE = 0.002


def recipes(only):
    paths = sorted(glob.glob(os.path.join(E.ROOT, "examples", "recipes",
                                          "*.json")))
    out = [(os.path.splitext(os.path.basename(p))[0], p) for p in paths]
    if only:
        unknown = set(only) - {n for n, _ in out}
        if unknown:
            raise SystemExit(f"eval_real_model_gpu: no recipe {sorted(unknown)}"
                             f" (have: {', '.join(n for n, _ in out)})")
        out = [(n, p) for n, p in out if n in only]
    return out


def fail(message):
    print(f"eval_real_model_gpu: error: {message}", file=sys.stderr)
    sys.exit(1)


def command_build(args):
    build = os.environ.get("FP4_BUILD_DIR", os.path.join(E.ROOT, "build"))
    fp4_opt = os.path.join(build, "bin", "fp4-opt")
    model = os.path.join(args.out, "minilm_l6.mlir")
    inputs = os.path.join(args.out, "outputs", "inputs.npz")
    for path in (fp4_opt, model, inputs):
        if not os.path.isfile(path):
            fail(f"{path} not found (build the project and run "
                 "bench/eval_real_model.py --out OUT first)")
    import numpy as np
    batches = np.load(inputs)
    for name, recipe in recipes(args.only):
        folder = os.path.join(args.out, "gpu", name)
        os.makedirs(folder, exist_ok=True)
        for i in range(batches["ids"].shape[0]):
            np.save(os.path.join(folder, f"ids{i}.npy"), batches["ids"][i])
            np.save(os.path.join(folder, f"mask{i}.npy"), batches["mask"][i])
        quantized = os.path.join(folder, "quantized.mlir")
        rec = {"name": name, "recipe": os.path.relpath(recipe, E.ROOT),
               "chip": args.chip}
        passes = (f"fp4-quantize{{recipe={recipe}}},{E.RECIPE_PASSES}"
                  "fp4-fold-constants,canonicalize,"
                  "func.func(llvm-request-c-wrappers)")
        t = time.perf_counter()
        proc = subprocess.run([fp4_opt, model, f"-pass-pipeline=builtin.module"
                               f"({passes})", "-o", quantized],
                              capture_output=True, text=True)
        rec["quantize_s"] = time.perf_counter() - t
        if proc.returncode:
            fail(f"{name}: quantizing failed:\n{proc.stderr}")
        # What the GPU conversion leaves on the host, and the kernels.
        proc = subprocess.run([fp4_opt, quantized, "-convert-fp4-to-gpu",
                               "-o", "-"], capture_output=True, text=True)
        if proc.returncode:
            fail(f"{name}: convert-fp4-to-gpu failed:\n{proc.stderr}")
        remarks = [line for line in proc.stderr.splitlines()
                   if "stays on the host" in line]
        rec["host_fp4_ops"] = len(remarks)
        rec["host_remarks"] = sorted(set(r.split("remark: ", 1)[-1]
                                         for r in remarks))
        rec["kernels"] = proc.stdout.count("gpu.func @")
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, FP4_RUN, "build", quantized,
                               "-o", os.path.join(folder, "model.so"),
                               "--chip", args.chip, "--fp4-opt", fp4_opt],
                              capture_output=True, text=True)
        rec["build_s"] = time.perf_counter() - t
        if proc.returncode:
            fail(f"{name}: fp4-run build failed:\n{proc.stderr}")
        rec["model_bytes"] = os.path.getsize(os.path.join(folder, "model.so"))
        if args.gzip:
            import gzip
            with open(os.path.join(folder, "model.so"), "rb") as src, \
                    gzip.open(os.path.join(folder, "model.so.gz"), "wb",
                              compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(os.path.join(folder, "model.so"))
        if not args.keep_ir:
            os.remove(quantized)
        with open(os.path.join(folder, "build.json"), "w") as f:
            json.dump(rec, f, indent=1)
        print(f"{name}: {rec['kernels']} kernels, {rec['host_fp4_ops']} fp4 "
              f"ops on the host, quantize {rec['quantize_s']:.1f} s, build "
              f"{rec['build_s']:.1f} s, model.so "
              f"{rec['model_bytes'] / 2**20:.1f} MiB -> {folder}", flush=True)


def command_run(args):
    folder = args.folder
    model = os.path.join(folder, "model.so")
    if not os.path.isfile(model) and os.path.isfile(model + ".gz"):
        # build --gzip: a model over the GPU machine's transfer limit.
        import gzip
        with gzip.open(model + ".gz", "rb") as src, open(model, "wb") as dst:
            shutil.copyfileobj(src, dst)
    if not os.path.isfile(model):
        fail(f"{model} not found (eval_real_model_gpu.py build)")
    batches = sorted(glob.glob(os.path.join(folder, "ids*.npy")))
    if not batches:
        fail(f"no ids*.npy input batches in {folder}")
    os.makedirs(args.results, exist_ok=True)
    for i in range(len(batches)):
        out = os.path.join(args.results, f"b{i}")
        cmd = [sys.executable, FP4_RUN, "exec", model, "--entry", "main",
               "--input", os.path.join(folder, f"ids{i}.npy"),
               "--input", os.path.join(folder, f"mask{i}.npy"),
               "--output-dir", out]
        if i == 0 and args.repeats:
            cmd += ["--repeat", str(args.repeats)]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode:
            fail(f"batch {i}: fp4-run exec exited {proc.returncode}:\n"
                 f"{proc.stderr}")
        print(f"batch {i}: {wall:.2f} s wall (process included)", flush=True)


def embed_cos_rho(outs, base, masks):
    import numpy as np
    tok = [E.cosine_rows(o, b)[m.astype(bool)]
           for o, b, m in zip(outs, base, masks)]
    emb = [E.embed(o, m) for o, m in zip(outs, masks)]
    emb_base = [E.embed(o, m) for o, m in zip(base, masks)]
    cos_emb = float(np.concatenate(
        [E.cosine_rows(a, b) for a, b in zip(emb, emb_base)]).mean())
    pairs = E.pair_similarities(emb)
    return (float(np.concatenate(tok).mean()), cos_emb,
            E.spearman(pairs, E.pair_similarities(emb_base)),
            E.spearman(pairs, [s for _, _, s in E.PAIRS]))


def command_compare(args):
    import numpy as np
    outputs = os.path.join(args.out, "outputs")
    fp32_path = os.path.join(outputs, "fp32.npy")
    if not os.path.isfile(fp32_path):
        fail(f"{fp32_path} not found (bench/eval_real_model.py --out "
             f"{args.out})")
    base = list(np.load(fp32_path))
    masks = list(np.load(os.path.join(outputs, "inputs.npz"))["mask"])
    sentences = sum(b.shape[0] for b in base)
    if sentences != 2 * len(E.PAIRS) or len(masks) != len(base):
        fail(f"{outputs}: {sentences} sentences in {len(base)} batches and "
             f"{len(masks)} masks; the harness's {len(E.PAIRS)} pairs need "
             f"{2 * len(E.PAIRS)} (rerun bench/eval_real_model.py)")
    rows, bad = [], []
    for name, _ in recipes(args.only):
        results = os.path.join(args.results, name)
        build_json = os.path.join(args.out, "gpu", name, "build.json")
        if not os.path.isdir(results):
            if args.only:
                fail(f"{results}: no GPU results for {name}")
            continue
        with open(build_json) as f:
            rec = json.load(f)
        cpu_path = os.path.join(outputs, f"{name}.npy")
        if not os.path.isfile(cpu_path):
            fail(f"{cpu_path} not found: no CPU row for {name}")
        cpu = list(np.load(cpu_path))
        gpu = []
        for i in range(len(cpu)):
            path = os.path.join(results, f"b{i}", "result0.npy")
            if not os.path.isfile(path):
                fail(f"{path} not found: batch {i} of {name} did not run")
            gpu.append(np.load(path))
            if gpu[-1].shape != cpu[i].shape or gpu[-1].dtype != cpu[i].dtype:
                fail(f"{path}: {gpu[-1].dtype} {list(gpu[-1].shape)}, the CPU "
                     f"row has {cpu[i].dtype} {list(cpu[i].shape)}")
        diff = [np.abs(g.astype(np.float64) - c) for g, c in zip(gpu, cpu)]
        rec["max_abs_vs_cpu"] = float(max(d.max() for d in diff))
        rec["differing_vs_cpu"] = int(sum(
            int((g.view(np.uint32) != c.view(np.uint32)).sum())
            for g, c in zip(gpu, cpu)))
        rec["values"] = int(sum(c.size for c in cpu))
        (rec["cos_hidden"], rec["cos_emb"], rec["rho_fp32"],
         rec["rho_labels"]) = embed_cos_rho(gpu, base, masks)
        rec["cpu_cos_hidden"] = embed_cos_rho(cpu, base, masks)[0]
        # Relative Frobenius norms over real tokens: GPU vs CPU, and each
        # vs fp32 (the recipe's own error).
        def rel(x, ref):
            num = sum(float(((a - r)[m.astype(bool)] ** 2).sum())
                      for a, r, m in zip(x, ref, masks))
            den = sum(float((r[m.astype(bool)].astype(np.float64) ** 2).sum())
                      for r, m in zip(ref, masks))
            return (num / den) ** 0.5
        as64 = lambda xs: [x.astype(np.float64) for x in xs]
        rec["rel_vs_cpu"] = rel(as64(gpu), as64(cpu))
        rec["rel_vs_fp32"] = rel(as64(gpu), as64(base))
        rec["cpu_rel_vs_fp32"] = rel(as64(cpu), as64(base))
        timing = os.path.join(results, "b0", "timing.json")
        if os.path.isfile(timing):
            with open(timing) as f:
                rec["exec_s"] = json.load(f)["median_s"]
        # Bit-exact where the products' partial sums are exact in f32;
        # otherwise the GPU's and the CPU's orders round differently and
        # the check is that the GPU is as accurate against fp32 (module
        # docstring).
        if rec["differing_vs_cpu"] and (
                abs(rec["cos_hidden"] - rec["cpu_cos_hidden"]) > COS_TOLERANCE
                or rec["rel_vs_fp32"] > rec["cpu_rel_vs_fp32"] * 1.02):
            bad.append(name)
        rows.append(rec)
    if not rows:
        fail(f"no GPU results under {args.results}")
    head = ("| recipe | kernels | fp4 ops on host | GPU = CPU bits | "
            "GPU-CPU rel. | error vs fp32 GPU / CPU | cos(hidden) GPU / CPU "
            "| cos(emb) | pairs rho(fp32) | quantize s | fp4-run build s | "
            "forward ms (host memory) |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        same = ("yes" if not r["differing_vs_cpu"] else
                f"no ({100 * r['differing_vs_cpu'] / r['values']:.0f}%)")
        fwd = f"{r['exec_s'] * 1e3:.0f}" if "exec_s" in r else "-"
        lines.append(f"| {r['name']} | {r['kernels']} | {r['host_fp4_ops']} | "
                     f"{same} | {r['rel_vs_cpu']:.2g} | "
                     f"{r['rel_vs_fp32']:.4f} / {r['cpu_rel_vs_fp32']:.4f} | "
                     f"{r['cos_hidden']:.4f} / {r['cpu_cos_hidden']:.4f} | "
                     f"{r['cos_emb']:.4f} | "
                     f"{r['rho_fp32']:.3f} | {r['quantize_s']:.1f} | "
                     f"{r['build_s']:.0f} | {fwd} |")
    md = "\n".join(lines)
    with open(os.path.join(args.out, "real_model_gpu.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "real_model_gpu.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    if bad:
        fail("GPU results less accurate than the CPU pipeline's: "
             f"{', '.join(bad)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile every recipe for the GPU")
    b.add_argument("--out", default=os.path.join(E.ROOT, "build", "eval"))
    b.add_argument("--only", nargs="*")
    b.add_argument("--chip", default="sm_90")
    b.add_argument("--gzip", action="store_true",
                   help="store model.so.gz instead of model.so (run "
                        "decompresses it): for a transfer size limit")
    b.add_argument("--keep-ir", action="store_true",
                   help="keep NAME/quantized.mlir (about 100 MB)")
    r = sub.add_parser("run", help="run one built recipe (on the GPU machine)")
    r.add_argument("folder", help="OUT/gpu/NAME from the build step")
    r.add_argument("--results", required=True)
    r.add_argument("--repeats", type=int, default=10,
                   help="timed calls of the first batch (0: none)")
    c = sub.add_parser("compare", help="compare the GPU results with the CPU")
    c.add_argument("--out", default=os.path.join(E.ROOT, "build", "eval"))
    c.add_argument("--results", required=True,
                   help="folder holding one run result folder per recipe")
    c.add_argument("--only", nargs="*")
    args = p.parse_args()
    if args.command == "run" and args.repeats < 0:
        p.error("--repeats must be >= 0")
    {"build": command_build, "run": command_run,
     "compare": command_compare}[args.command](args)


if __name__ == "__main__":
    main()
