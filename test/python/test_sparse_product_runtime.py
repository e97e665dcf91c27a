"""The fast CPU path's block-sparse correction products (fp4.sparse_product
generics -> libfp4_cpu_runtime's fp4_cpu_sparse_{dense,sparse}_f32) give the
loops' bits.

One module holds every form convert-fp4-to-linalg tags: sparse x dense,
dense x sparse, sparse x sparse, unbatched and batched (with the dense or
sparse rhs shared by the batch), with sizes that are not multiples of the
kernel's 128-column panel and with special values: +-0, subnormals,
Inf, NaN, sums that overflow, and sparse-side indices outside [0, B)
(clamped, as the loops do) or rhs indices that match nothing. The module is
lowered twice, by fp4-pipeline-cpu (loops) and by
fp4-pipeline-cpu{fast=true parallel-loops=false} (runtime calls; the pass
statistics must show every sparse product converted), and the outputs are
compared bit for bit (NaN only as NaN: neither order fixes a payload).
"""

import os
import sys

import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import ir  # noqa: E402

M, N, K, BATCH = 37, 139, 256, 3
BL, KL = 32, 2   # lhs sparse: block 32, top 2
BR, KR = 8, 2    # rhs sparse: block 8, top 2


def t(shape, elt="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{elt}>"


def m(shape, elt="f32"):
    return "memref<" + "x".join(str(d) for d in shape) + f"x{elt}>"


def sparse_shape(rows, block, k, batch=None):
    s = [rows, K // block, k]
    return ([batch] if batch else []) + s


# name -> (args [(name, shape, elt)], body, out shape)
def cases():
    out = {}
    lv = sparse_shape(M, BL, KL)
    rv = sparse_shape(N, BR, KR)
    blv = sparse_shape(M, BL, KL, BATCH)
    brv = sparse_shape(N, BR, KR, BATCH)
    out["sd"] = ([("lv", lv, "f32"), ("li", lv, "i8"), ("w", [N, K], "f32"),
                  ("acc", [M, N], "f32")],
                 "fp4.correction_matmul (%lv, %li block {BL}), (%w) acc %acc "
                 ": ({tlv}, {tli}), ({tw}), {tacc} -> {tout}", [M, N])
    out["ds"] = ([("x", [M, K], "f32"), ("rv", rv, "f32"), ("ri", rv, "i8")],
                 "fp4.correction_matmul (%x), (%rv, %ri block {BR}) "
                 ": ({tx}), ({trv}, {tri}) -> {tout}", [M, N])
    out["ss"] = ([("lv", lv, "f32"), ("li", lv, "i8"), ("rv", rv, "f32"),
                  ("ri", rv, "i8"), ("acc", [M, N], "f32")],
                 "fp4.correction_matmul (%lv, %li block {BL}), "
                 "(%rv, %ri block {BR}) acc %acc : ({tlv}, {tli}), "
                 "({trv}, {tri}), {tacc} -> {tout}", [M, N])
    # A 2:4-style lhs (block 4, top 2) against a top-2-per-32 rhs: many
    # more lhs entries than rhs ones, the kernel's rhs-driven sweep.
    l24 = [M, K // 4, 2]
    r32 = [N, K // 32, 2]
    out["ss_rhs_driven"] = ([("lv", l24, "f32"), ("li", l24, "i8"),
                             ("rv", r32, "f32"), ("ri", r32, "i8"),
                             ("acc", [M, N], "f32")],
                            "fp4.correction_matmul (%lv, %li block 4), "
                            "(%rv, %ri block 32) acc %acc : ({tlv}, {tli}), "
                            "({trv}, {tri}), {tacc} -> {tout}", [M, N])
    # Batched: the rhs shared by the batch (rank 2 dense, rank 3 sparse)
    # and per batch.
    out["bsd_shared"] = ([("lv", blv, "f32"), ("li", blv, "i8"),
                          ("w", [N, K], "f32")],
                         "fp4.correction_matmul (%lv, %li block {BL}), (%w) "
                         ": ({tlv}, {tli}), ({tw}) -> {tout}", [BATCH, M, N])
    out["bsd"] = ([("lv", blv, "f32"), ("li", blv, "i8"),
                   ("w", [BATCH, N, K], "f32")],
                  "fp4.correction_matmul (%lv, %li block {BL}), (%w) "
                  ": ({tlv}, {tli}), ({tw}) -> {tout}", [BATCH, M, N])
    out["bds_shared"] = ([("x", [BATCH, M, K], "f32"), ("rv", rv, "f32"),
                          ("ri", rv, "i8")],
                         "fp4.correction_matmul (%x), (%rv, %ri block {BR}) "
                         ": ({tx}), ({trv}, {tri}) -> {tout}", [BATCH, M, N])
    out["bss"] = ([("lv", blv, "f32"), ("li", blv, "i8"), ("rv", brv, "f32"),
                   ("ri", brv, "i8")],
                  "fp4.correction_matmul (%lv, %li block {BL}), "
                  "(%rv, %ri block {BR}) : ({tlv}, {tli}), ({trv}, {tri}) "
                  "-> {tout}", [BATCH, M, N])
    return out


def module_text():
    funcs = []
    for name, (args, body, oshape) in cases().items():
        params = [f"%{a}_m: {m(s, e)}" for a, s, e in args]
        params.append(f"%out: {m(oshape)}")
        lines = [f"func.func @{name}({', '.join(params)}) attributes "
                 "{llvm.emit_c_interface} {"]
        types = {"tout": t(oshape)}
        for a, s, e in args:
            lines.append(f"  %{a} = bufferization.to_tensor %{a}_m restrict "
                         f": {m(s, e)} to {t(s, e)}")
            types["t" + a] = t(s, e)
        expr = body.format(BL=BL, BR=BR, **types)
        lines.append(f"  %r = {expr}")
        lines.append(f"  bufferization.materialize_in_destination %r in "
                     f"restrict writable %out : ({t(oshape)}, {m(oshape)}) "
                     "-> ()")
        lines.append("  return\n}")
        funcs.append("\n".join(lines))
    return "\n".join(funcs)


SPECIAL = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, 3e38, -3e38, np.inf,
                    -np.inf, np.nan, 1.0, -1.0, 65504.0], np.float32)


def values(rng, shape, special):
    v = rng.uniform(-2, 2, size=shape).astype(np.float32)
    if special:
        pick = rng.integers(0, 60, size=shape)
        hit = pick < len(SPECIAL)
        v[hit] = SPECIAL[pick[hit]]
    return v


def indices(rng, shape, block, wild):
    i = rng.integers(0, block, size=shape).astype(np.int8)
    if wild:
        # Outside [0, B): clamped on the sparse side, never a hit on the
        # rhs of a sparse x sparse product.
        odd = rng.integers(0, 12, size=shape)
        i[odd == 0] = -1
        i[odd == 1] = block
        i[odd == 2] = -128
        i[odd == 3] = 127
    return i


def inputs(name, rng, special):
    args, _, oshape = cases()[name]
    arrays = []
    for a, s, e in args:
        if e == "i8":
            block = K // s[-2]  # the op's block size from the shape
            arrays.append(indices(rng, s, block, special))
        else:
            arrays.append(values(rng, s, special))
    arrays.append(np.full(oshape, np.float32(7.0)))
    return arrays


@pytest.fixture(scope="module")
def engines():
    text = module_text()
    built = {}
    for label, pipeline in (("loops", "fp4-pipeline-cpu"),
                            ("fast", "fp4-pipeline-cpu{fast=true "
                                     "parallel-loops=false}")):
        ctx = ir.Context()
        module = ctx.parse_module(text)
        ir.run_pipeline(module, pipeline)
        lowered = module.to_string()
        built[label] = (ir.ExecutionEngine(
            module, opt_level=2, shared_libs=ir.cpu_runtime_libraries()),
            lowered)
    return built


def test_fast_pipeline_calls_the_sparse_kernels(engines):
    # The loops' lowering has no runtime call; the fast one calls both
    # kernels (the op-level forms are checked by
    # test/Transforms/sparse-product-to-runtime-call.mlir).
    fast, loops = engines["fast"][1], engines["loops"][1]
    for kernel in ("fp4_cpu_sparse_dense_f32", "fp4_cpu_sparse_sparse_f32"):
        assert kernel in fast
        assert kernel not in loops


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("name", list(cases()))
def test_sparse_products_bit_identical(engines, name, special):
    rng = np.random.default_rng(abs(hash((name, special))) % (2**32))
    base = inputs(name, rng, special)
    outs = {}
    for label in ("loops", "fast"):
        engine = engines[label][0]
        arrays = [a.copy() for a in base]
        engine.invoke(name, *arrays)
        outs[label] = arrays[-1]
    a, b = outs["loops"], outs["fast"]
    assert not np.all(a == 7.0), "the product wrote nothing"
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    np.testing.assert_array_equal(a[~nan].view(np.uint32),
                                  b[~nan].view(np.uint32))
    if special:
        assert nan.any() or np.isinf(a).any()
