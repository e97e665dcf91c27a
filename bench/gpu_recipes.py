"""The accuracy recipes of docs/Accuracy.md on the GPU, end to end.

Each check case is `y = x W^T` (x bf16 [M, K], W bf16 [N, K], f32 out, both
function arguments, so every part is computed at run time) run through
`fp4-quantize` and a recipe's transform passes. build() (here, with MLIR):
  * asserts that convert-fp4-to-gpu leaves no fp4 op on the host;
  * makes the function also return every operand of every product term
    (quantized ones through fp4.dequantize to f32, which is exact) and
    records the terms (recipe.json);
  * compiles it with `fp4-run build` (fp4-pipeline-nvvm, the GPU program)
    and with fp4-pipeline-cpu, runs the CPU one on fixed random inputs, and
    stores inputs, the CPU's results and the f64 sum of the term products
    (expected.npz).
check() (on the GPU machine, no MLIR) runs the model with `fp4-run exec`:
every part must equal the CPU pipeline's bit for bit, and y must be within
1e-5 relative Frobenius error of the f64 product.

bench_mlir() writes the recipes in their folded form for gpu_bench.py:
weight-side parts are arguments (as fp4-fold-constants leaves constant
weights), the activation side and the product terms are what the passes
produce.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

# Options of fp4-pipeline-nvvm that convert-fp4-to-gpu does not take.
PIPELINE_ONLY_OPTIONS = ("dependent-launch=", "dependent-prefetch-bytes=")

# name -> (fp4-quantize options, transform passes). {cal}: calibration file.
RECIPES = {
    "rotate_h32": ("", ["-fp4-rotate=size=32"]),
    "outlier_k1": ("", ["-fp4-outlier-fallback=k=1"]),
    "outlier_k2": ("", ["-fp4-outlier-fallback=k=2"]),
    "outlier_k4": ("", ["-fp4-outlier-fallback=k=4"]),
    "static_channels": ("", ["-fp4-outlier-fallback=mode=static-channels "
                             "calibration={cal}"]),
    "residual_24": ("", ["-fp4-residual"]),
    "residual_top4": ("", ["-fp4-residual=sparsity=topk k=4 block-size=32"]),
    "rot_outl_resid": ("", ["-fp4-rotate=size=32", "-fp4-outlier-fallback=k=2",
                            "-fp4-residual"]),
    # The same with activation-only outliers (no weight outlier bytes).
    "rot_outl_act_resid": ("", ["-fp4-rotate=size=32",
                                "-fp4-outlier-fallback=k=2 operands=activations",
                                "-fp4-residual"]),
    # Two-level rotation: block-balancing permutation, cross-block Hadamard
    # (stride 32) and the intra-block rotation, all on the activations at
    # run time (fp4.permute and the strided fp4.rotate kernels).
    "rotate_two_level": ("", ["-fp4-rotate=mode=two-level size=32 "
                              "cross-block=true calibration={cal}"]),
    # W4A16: bf16 activations, the weights corrected.
    "w4a16_outlier_k2": ("operands=weights",
                         ["-fp4-outlier-fallback=k=2 operands=weights"]),
    "w4a16_residual_24": ("operands=weights",
                          ["-fp4-residual=operands=weights"]),
}

# decode (M = 1, and M = 8: the stacked-row plans), the prefill kernel's
# medium class (M = 16: correction chains from 9 rows; M = 40: a partial
# 48-row tile), prefill.
SHAPES = [(1, 200, 352), (8, 77, 224), (16, 77, 224), (130, 77, 224)]
# K/32 must be even for a cross-block rotation (its size is the largest
# power of two dividing the number of 32-blocks): 8 and 12 blocks.
RECIPE_SHAPES = {"rotate_two_level": [(1, 200, 256), (16, 77, 384),
                                      (130, 77, 256)],
                 # K * M f32 of activation sum beyond 32 KB with 64+ entries
                 # per slice row: the sliced weight-outlier epilogue (a
                 # decode plan: at most 8 rows).
                 "outlier_k4": SHAPES + [(8, 77, 2560)],
                 # M = 1 with whole 16-entry runs per weight row: the
                 # decode tail form copies each CTA's entries into shared
                 # memory (decode-outliers=tail; 200 rows: 4 CTAs, the
                 # last partial).
                 "outlier_k2": SHAPES + [(40, 77, 224), (1, 200, 1024)],
                 "rot_outl_resid": SHAPES + [(12, 77, 352), (40, 77, 224),
                                             (1, 200, 512)]}

CHECK_CASES = [dict(name=f"recipe_{r}_m{m}_n{n}_k{k}", recipe=r, m=m, n=n, k=k)
               for r in RECIPES for (m, n, k) in RECIPE_SHAPES.get(r, SHAPES)]

OUTLIER_CHANNELS = (5, 70, 131)


def frontend(m, n, k):
    t = lambda r, c, e: f"tensor<{r}x{c}x{e}>"
    return f"""func.func @linear(%x: {t(m, k, 'bf16')}, %w: {t(n, k, 'bf16')}) -> {t(m, n, 'f32')} attributes {{llvm.emit_c_interface}} {{
  %e = tensor.empty() : {t(m, n, 'f32')}
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : {t(m, n, 'f32')}) -> {t(m, n, 'f32')}
  %y = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : {t(m, k, 'bf16')}, {t(n, k, 'bf16')}) outs(%f : {t(m, n, 'f32')}) -> {t(m, n, 'f32')}
  return %y : {t(m, n, 'f32')}
}}
"""


def bf16_bits(a):
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)


def bits_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


def inputs(case, seed=2026):
    rng = np.random.default_rng(seed)
    m, n, k = case["m"], case["n"], case["k"]
    x = rng.standard_normal((m, k)).astype(np.float32)
    x[:, list(c for c in OUTLIER_CHANNELS if c < k)] *= 60.0
    w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
    return bf16_bits(x), bf16_bits(w)


def split_top(text):
    """Splits at top-level commas (outside <>, (), [], {})."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# Generic form: results, name, operands, properties, then an optional
# discardable-attribute dictionary (e.g. fp4.intra_block_rotation of the
# two-level mode), then the function type.
OP_LINE = re.compile(r'^\s*(?:(%[\w#:]+) = )?"([\w.]+)"\((.*?)\)\s*(<\{.*\}>)?\s*(?:\{.*\})?\s*:\s*\((.*)\)\s*->\s*(.*)$')


def instrument(generic):
    """Adds every term operand to the results; returns (text, terms, types)."""
    lines = generic.splitlines()
    terms, extra, types, defs = [], [], [], []
    seen = {}
    ret_index = None
    for i, line in enumerate(lines):
        mo = OP_LINE.match(line)
        if not mo:
            continue
        _, op, operands, attrs, in_types, _ = mo.groups()
        if op == "func.return":
            ret_index = i
            continue
        if op not in ("fp4.matmul", "fp4.correction_matmul"):
            continue
        ops = split_top(operands)
        tys = split_top(in_types)
        if op == "fp4.matmul":
            seg = [1, 1, 0]
        else:
            seg = [int(v) for v in re.search(r"operandSegmentSizes = array<i32: ([\d, ]+)>", attrs).group(1).split(",")]
        groups = [list(zip(ops[:seg[0]], tys[:seg[0]])),
                  list(zip(ops[seg[0]:seg[0] + seg[1]], tys[seg[0]:seg[0] + seg[1]]))]
        blocks = []
        for side in ("lhs", "rhs"):
            b = re.search(side + r"_block_size = (\d+)", attrs or "")
            blocks.append(int(b.group(1)) if b else 0)
        term = {}
        for side, group, block in zip(("lhs", "rhs"), groups, blocks):
            idx = []
            for name, ty in group:
                if name not in seen:
                    seen[name] = len(extra) + 1
                    if ty.startswith("!fp4.tensor"):
                        dims = re.match(r"!fp4.tensor<([\dx]+)x", ty).group(1)
                        f32 = f"tensor<{dims}xf32>"
                        tmp = f"%__part{len(extra)}"
                        defs.append(f'    {tmp} = "fp4.dequantize"({name}) : ({ty}) -> {f32}')
                        extra.append((tmp, f32))
                    else:
                        extra.append((name, ty))
                idx.append(seen[name])
            term[side] = idx
            term[side + "_block"] = block
        terms.append(term)
    mo = OP_LINE.match(lines[ret_index])
    y_name, y_type = mo.group(3), mo.group(5)
    names = [y_name] + [e[0] for e in extra]
    tys = [y_type] + [e[1] for e in extra]
    indent = re.match(r"\s*", lines[ret_index]).group(0)
    lines[ret_index] = f'{indent}"func.return"({", ".join(names)}) : ({", ".join(tys)}) -> ()'
    lines[ret_index:ret_index] = defs
    text = "\n".join(lines)
    text = re.sub(r"(function_type = \(.*?\) -> )(tensor<[^>]*>)",
                  lambda s: s.group(1) + "(" + ", ".join(tys) + ")", text, count=1)
    return text, terms, tys


def dtype_of(ty):
    e = re.search(r"x([a-z]\w*)>$", ty).group(1)
    return {"f32": np.float32, "bf16": np.uint16, "i8": np.int8}[e]


def as_f64(arr, ty):
    return (bits_to_f32(arr) if ty.endswith("xbf16>") else arr).astype(np.float64)


def dense(parts, tys, idx, block, k):
    if len(idx) == 1:
        return as_f64(parts[idx[0]], tys[idx[0]])
    vals = as_f64(parts[idx[0]], tys[idx[0]])
    ind = np.clip(parts[idx[1]].astype(np.int64), 0, block - 1)
    r, nb, kk = vals.shape
    out = np.zeros((r, k))
    cols = np.arange(nb)[None, :, None] * block + ind
    np.add.at(out, (np.arange(r)[:, None, None].repeat(nb, 1).repeat(kk, 2), cols), vals)
    return out


def f64_product(parts, tys, terms, k):
    y = 0.0
    for t in terms:
        y = y + dense(parts, tys, t["lhs"], t["lhs_block"], k) @ \
            dense(parts, tys, t["rhs"], t["rhs_block"], k).T
    return y


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr[-4000:]}")
    return r


HOST_OP = re.compile(r'"?fp4\.(rotate|permute|split_outliers|split_channels|residual|quantize|dequantize|matmul|correction_matmul)"?[ (]')


def build(case, out, fp4_opt, fp4_run, chip="sm_90", options=""):
    """Compiles one check case into `out` for `chip` (see the module
    comment); `options`: more fp4-pipeline-nvvm options (e.g.
    prefill-residual=sparse)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from fp4 import ir
    os.makedirs(out, exist_ok=True)
    m, n, k = case["m"], case["n"], case["k"]
    q_opts, passes = RECIPES[case["recipe"]]
    src = os.path.join(out, "frontend.mlir")
    open(src, "w").write(frontend(m, n, k))
    x, w = inputs(case)
    cal = os.path.join(out, "cal.npz")
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((64, k)).astype(np.float32)
    xs[:, list(c for c in OUTLIER_CHANNELS if c < k)] *= 60.0
    np.savez(cal, **{"@linear/arg0": xs, "@linear/arg1": bits_to_f32(w)})
    quant = "-fp4-quantize" + (f"={q_opts}" if q_opts else "")
    transformed = os.path.join(out, "transformed.mlir")
    run([fp4_opt, src, quant] + [p.format(cal=cal) for p in passes] +
        ["-canonicalize", "-o", transformed])
    # Nothing may stay on the host.
    # fp4-pipeline-nvvm's own options (not convert-fp4-to-gpu's) stay out
    # of this check.
    gpu_options = " ".join(o for o in options.split()
                           if not o.startswith(PIPELINE_ONLY_OPTIONS))
    r = run([fp4_opt, transformed,
             f"-convert-fp4-to-gpu=chip={chip} {gpu_options}".strip()])
    host = [l.strip() for l in r.stdout.splitlines()
            if HOST_OP.search(l) and "fp4.launch_plan" not in l and "fp4.gpu_manifest" not in l]
    if host or "stays on the host" in r.stderr:
        raise SystemExit(f"{case['name']}: fp4 ops left on the host:\n" +
                         "\n".join(host) + r.stderr)
    generic = run([fp4_opt, transformed, "--mlir-print-op-generic"]).stdout
    text, terms, tys = instrument(generic)
    if not terms:
        raise SystemExit(f"{case['name']}: no fp4.matmul / fp4.correction_matmul "
                         "term found in the transformed program")
    generic_debug = os.path.join(out, "recipe.generic.mlir")
    open(generic_debug, "w").write(text)
    debug = os.path.join(out, "recipe.mlir")
    run([fp4_opt, generic_debug, "-o", debug])
    run([sys.executable, fp4_run, "build", debug, "-o",
         os.path.join(out, "model.so"), "--fp4-opt", fp4_opt,
         "--chip", chip] + (["--pipeline-opts", options] if options else []))
    cpu = run([fp4_opt, debug, "-fp4-pipeline-cpu"]).stdout
    engine = ir.ExecutionEngine(ir.Context().parse_module(cpu), opt_level=2)
    results = engine.invoke("linear", x, w,
                            results=[ir.MemRef(dtype_of(t), t.count("x")) for t in tys])
    results = [np.ascontiguousarray(r) for r in results]
    y64 = f64_product(results, tys, terms, k)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "w.npy"), w)
    np.savez(os.path.join(out, "expected.npz"), y64=y64,
             **{f"result{i}": r for i, r in enumerate(results)})
    json.dump({"case": case, "terms": terms, "types": tys,
               "passes": [quant] + passes},
              open(os.path.join(out, "recipe.json"), "w"), indent=1)


def check(case_dir, fp4_run):
    """Runs a built case on the GPU; returns (problems, summary)."""
    meta = json.load(open(os.path.join(case_dir, "recipe.json")))
    exp = np.load(os.path.join(case_dir, "expected.npz"))
    got_dir = os.path.join(case_dir, "gpu")
    os.makedirs(got_dir, exist_ok=True)
    r = subprocess.run([sys.executable, fp4_run, "exec",
                        os.path.join(case_dir, "model.so"), "--entry", "linear",
                        "--input", os.path.join(case_dir, "x.npy"),
                        "--input", os.path.join(case_dir, "w.npy"),
                        "--output-dir", got_dir], capture_output=True, text=True)
    if r.returncode:
        return [f"fp4-run exec failed ({r.returncode}): {r.stderr[-2000:]}"], ""
    bad = []
    tys = meta["types"]
    got = [np.load(os.path.join(got_dir, f"result{i}.npy")) for i in range(len(tys))]
    for i in range(1, len(tys)):
        e = exp[f"result{i}"]
        g = got[i].reshape(e.shape)
        same = g.view(np.uint8) == e.view(np.uint8)
        if not same.all():
            bad.append(f"part {i} ({tys[i]}): {np.count_nonzero(g != e)} elements differ from the CPU pipeline")
    y = got[0].astype(np.float64)
    y64 = exp["y64"]
    err = np.linalg.norm(y - y64) / np.linalg.norm(y64)
    cpu_err = np.linalg.norm(exp["result0"] - y64) / np.linalg.norm(y64)
    if not err <= 1e-5:
        bad.append(f"relative Frobenius error {err:.3e} > 1e-05")
    return bad, (f"{len(tys) - 1} parts bit-exact, {len(meta['terms'])} terms, "
                 f"rel. error {err:.2e} (CPU {cpu_err:.2e}, tol 1e-05)")


# ---------------------------------------------------------------------------
# Benchmark form (weights folded: their parts are arguments).
# ---------------------------------------------------------------------------

BENCH_RECIPES = ["plain", "outlier_k1", "outlier_k2", "outlier_k4",
                 "static_channels", "residual_24", "full", "full_act"]
BENCH_SHAPES = [(1, 14336, 4096), (16, 14336, 4096), (4096, 4096, 4096)]
BENCH_CASES = [dict(name=f"bench_{r}_m{m}_n{n}_k{k}", recipe=r, m=m, n=n, k=k)
               for r in BENCH_RECIPES for (m, n, k) in BENCH_SHAPES]
BENCH_CHANNELS = (5, 70, 131, 1000)


def folded_weight(n, k, topk, seed=2027, block=32):
    """Constants as fp4-fold-constants leaves an outlier-split weight: packed
    MXFP4 codes that are +-0 at every outlier position (the split wrote +0
    there), E8M0 scales, bf16 outlier values and their i8 indices (the top
    `topk` of blocks of `block` elements), as dense_resource blobs (MLIR's
    hex form: a 4-byte alignment, then the bytes). Returns ({name: bytes},
    body lines)."""
    rng = np.random.default_rng(seed)
    blocks = k // 32
    oblocks = k // block
    codes = rng.integers(0, 256, (n, k // 2), dtype=np.uint8)
    # k distinct positions per block.
    idx = np.argsort(rng.random((n, oblocks, block)), axis=2)[:, :, :topk]
    cols = (np.arange(oblocks)[None, :, None] * block + idx).reshape(n, -1)
    rows = np.repeat(np.arange(n), cols.shape[1])
    flat = cols.reshape(-1)
    mask = np.where(flat % 2 == 1, 0x0F, 0xF0).astype(np.uint8)
    np.bitwise_and.at(codes, (rows, flat // 2), mask)
    scales = rng.integers(118, 132, (n, blocks), dtype=np.uint8)
    values = bf16_bits((rng.standard_normal((n, oblocks, topk)) * 8).astype(np.float32))
    blobs = {"bench_w_codes": codes.tobytes(), "bench_w_scales": scales.tobytes(),
             "bench_w_values": values.astype(np.uint16).tobytes(),
             "bench_w_indices": idx.astype(np.int8).tobytes()}
    t = lambda *d: "tensor<" + "x".join(str(v) for v in d) + ">"
    q = f"!fp4.tensor<{n}x{k}xf4E2M1FN, #fp4.mxfp4, axis = 1>"
    body = [f"%wc = arith.constant dense_resource<bench_w_codes> : {t(n, k // 2, 'i8')}",
            f"%ws = arith.constant dense_resource<bench_w_scales> : {t(n, blocks, 'i8')}",
            f"%qw = fp4.pack %wc, %ws : {t(n, k // 2, 'i8')}, {t(n, blocks, 'i8')} -> {q}",
            f"%wv = arith.constant dense_resource<bench_w_values> : {t(n, oblocks, topk, 'bf16')}",
            f"%wi = arith.constant dense_resource<bench_w_indices> : {t(n, oblocks, topk, 'i8')}"]
    return blobs, body


def resources(blobs):
    """The dialect_resources section holding `blobs`."""
    entries = ",\n".join(f'      {name}: "0x08000000{data.hex().upper()}"'
                          for name, data in blobs.items())
    return ("\n{-#\n  dialect_resources: {\n    builtin: {\n" + entries +
            "\n    }\n  }\n#-}\n")


# From this M the weight outliers go to the prefill kernel (its medium tile
# at 9..16 rows: ChipDescription::correctionPrefillMinM), which needs them
# proven (folded constants).
FOLDED_FROM_M = 9


def bench_mlir(case, fold_weight=None):
    """The recipe as the passes leave it after fp4-fold-constants: the
    weight-side parts are function arguments (their buffers are what the
    benchmark times), except where the plan depends on what the folded
    constants are: weight outliers on the prefill kernel (M >=
    FOLDED_FROM_M) join the product only when the compiler proves the
    quantized weight +-0 at their positions, which it checks on constants
    (FusedCorrectionChain.h), so those rows carry the weight parts as
    constants built like fp4-fold-constants' (folded_weight); `fold_weight`
    forces either form. Either way the kernels read the same buffers."""
    r, m, n, k = case["recipe"], case["m"], case["n"], case["k"]
    t = lambda *d: "tensor<" + "x".join(str(v) for v in d) + ">"
    q = lambda rows: f"!fp4.tensor<{rows}x{k}xf4E2M1FN, #fp4.mxfp4, axis = 1>"
    y = t(m, n, "f32")
    topk = {"outlier_k1": 1, "outlier_k2": 2, "outlier_k4": 4, "full": 2,
            "full_act": 2}.get(r)
    folded = bool(topk) and r != "full_act" and (
        m >= FOLDED_FROM_M if fold_weight is None else fold_weight)
    # The weight outliers' block (32 unless the case says otherwise).
    wb = case.get("weight_block", 32)
    blobs, body = folded_weight(n, k, topk, block=wb) if folded else ({}, [])
    args = [f"%x: {t(m, k, 'bf16')}"] + ([] if folded else [f"%qw: {q(n)}"])
    x_ty = t(m, k, "bf16")
    src = "%x"
    if r in ("full", "full_act"):
        body.append(f"%xr = fp4.rotate %x hadamard 32 seed 0 axis 1 : {x_ty} -> {t(m, k, 'f32')}")
        src, x_ty = "%xr", t(m, k, "f32")
    lhs_parts, rhs_parts = [], ["(%qw) : (" + q(n) + ")"]
    if topk:
        sv, si = t(m, k // 32, topk, "bf16"), t(m, k // 32, topk, "i8")
        wv, wi = t(n, k // wb, topk, "bf16"), t(n, k // wb, topk, "i8")
        body.append(f"%rest, %xv, %xi = fp4.split_outliers {src} block 32 top {topk} : {x_ty} -> {sv}, {si}")
        src = "%rest"
        lhs_parts.append(f"(%xv, %xi block 32) : ({sv}, {si})")
        if r != "full_act":  # activation-only outliers: no weight part
            if not folded:
                args += [f"%wv: {wv}", f"%wi: {wi}"]
            rhs_parts.append(f"(%wv, %wi block {wb}) : ({wv}, {wi})")
    if r == "static_channels":
        c = len(BENCH_CHANNELS)
        chans = ", ".join(str(v) for v in BENCH_CHANNELS)
        body.append(f"%rest, %xg = fp4.split_channels %x channels [{chans}] : {x_ty} -> {t(m, c, 'bf16')}")
        args.append(f"%wg: {t(n, c, 'bf16')}")
        src = "%rest"
    body.append(f"%qx = fp4.quantize {src} : {x_ty} -> {q(m)}")
    if r in ("residual_24", "full", "full_act"):
        rv, ri = t(m, k // 4, 2, "bf16"), t(m, k // 4, 2, "i8")
        body.append(f"%rv, %ri = fp4.residual {src}, %qx block 4 top 2 : {x_ty}, {q(m)} -> {rv}, {ri}")
    body.append(f"%y0 = fp4.matmul %qx, %qw : {q(m)}, {q(n)} -> {y}")
    terms = []
    # Every activation part meets every weight part (the quantized product
    # is %y0), in the order of the passes.
    act = ["(%qx) : (" + q(m) + ")"] + lhs_parts
    if r in ("residual_24", "full", "full_act"):
        act.append(f"(%rv, %ri block 4) : ({rv}, {ri})")
    for a_i, a in enumerate(act):
        for w_i, w in enumerate(rhs_parts):
            if a_i == 0 and w_i == 0:
                continue
            terms.append((a, w))
    if r == "static_channels":
        terms.append((f"(%xg) : ({t(m, len(BENCH_CHANNELS), 'bf16')})",
                      f"(%wg) : ({t(n, len(BENCH_CHANNELS), 'bf16')})"))
    acc = "%y0"
    for i, (a, w) in enumerate(terms):
        a_ops, a_ty = a.split(" : ")
        w_ops, w_ty = w.split(" : ")
        body.append(f"%y{i + 1} = fp4.correction_matmul {a_ops}, {w_ops} acc {acc} : {a_ty}, {w_ty}, {y} -> {y}")
        acc = f"%y{i + 1}"
    lines = "\n".join("  " + b for b in body)
    return (f"func.func @{case['name']}({', '.join(args)}) -> {y} {{\n{lines}\n"
            f"  return {acc} : {y}\n}}\n" + (resources(blobs) if blobs else ""))
