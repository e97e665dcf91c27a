"""The compiled CPU code, the C++ reference and the constant folder agree
bit for bit (numerics.md: "same input, same options, same bytes out").

1. fp4-quant (the CPU lowering JIT-compiled through MLIR's ExecutionEngine)
   against the C++ reference quantizers (python/fp4/reference.py over
   libFP4CAPI.so): every scheme and option, >= 10^6 values each, every
   component byte and every dequantized value.
2. `fp4-opt -fp4-fold-constants` on a module whose fp4.quantize reads a
   dense_resource constant of the same data, against fp4-quant: the folded
   constants' bytes are read back from the printed IR.

Non-finite blocks: a block (HiF4: group) holding NaN or +-Inf has a NaN scale
and unspecified codes (numerics.md 2), so there only the scale byte and the
NaN-ness of the dequantized values are compared.

Binaries come from $FP4_BUILD_DIR (default /work/main/build): bin/fp4-quant,
bin/fp4-opt and lib/libFP4CAPI.so.
"""

import concurrent.futures
import dataclasses
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
# The reference library must come from the same build as the tools.
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import reference as ref  # noqa: E402

FP4_QUANT = os.path.join(BUILD_DIR, "bin", "fp4-quant")
FP4_OPT = os.path.join(BUILD_DIR, "bin", "fp4-opt")

ROWS, COLS = 1024, 1024          # 1,048,576 values per configuration
SEGMENT = 64                     # data kinds change every 64 elements
SEED = 20240607                  # stochastic-rounding seed (any non-zero)

GRID = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
MIDS = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5], dtype=np.float64)


# ----------------------------------------------------------------------------
# Configurations
# ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Config:
    id: str
    scheme: str           # fp4-quant --scheme text
    ref_scheme: str       # python/fp4/reference.py scheme name
    options: dict         # reference options
    input_type: str = "f32"
    data: str = "wide"    # dataset, see DATASETS


def _configs():
    out = []
    for rule in ("floor", "ceil", "even", "rceil"):
        for rounding, ref_rounding in (("rne", "nearest_even"),
                                       ("half_away", "half_away"),
                                       ("stochastic", "stochastic")):
            text = f"#fp4.mxfp4<scale_rounding = {rule}, rounding = {rounding}"
            opts = dict(scale_rounding=rule, rounding=ref_rounding)
            if rounding == "stochastic":
                text += f", seed = {SEED}"
                opts["seed"] = SEED
            out.append(Config(f"mxfp4-{rule}-{rounding}", text + ">", "mxfp4",
                              opts))
    stochastic = dict(rounding="stochastic", seed=SEED)
    out += [
        Config("mxfp4-block16-even",
               "#fp4.mxfp4<block_size = 16, scale_rounding = even>", "mxfp4",
               dict(block_size=16, scale_rounding="even")),
        # NVFP4 has one scale per tensor: on the wide data nearly every block
        # underflows to a zero scale, so it mostly runs on the narrow data.
        Config("nvfp4", "#fp4.nvfp4", "nvfp4", {}, data="narrow"),
        Config("nvfp4-wide", "#fp4.nvfp4", "nvfp4", {}),
        Config("nvfp4-4over6", "#fp4.nvfp4<four_over_six = true>", "nvfp4",
               dict(four_over_six=True), data="narrow"),
        Config("nvfp4-stochastic",
               f"#fp4.nvfp4<rounding = stochastic, seed = {SEED}>", "nvfp4",
               stochastic, data="narrow"),
        Config("nvfp4-tile2d", "#fp4.nvfp4<tile2d = true>", "nvfp4",
               dict(tile2d=True), data="narrow"),
        Config("nvfp4-tile2d-4over6",
               "#fp4.nvfp4<four_over_six = true, tile2d = true>", "nvfp4",
               dict(four_over_six=True, tile2d=True), data="narrow"),
        Config("hif4", "#fp4.hif4", "hif4", {}),
        Config("hif4-narrow", "#fp4.hif4", "hif4", {}, data="narrow"),
        Config("macro", "#fp4.mxfp4_macro", "macro", {}),
        Config("macro-search8", "#fp4.mxfp4_macro<search = 8>", "macro",
               dict(search=8)),
        Config("macro-row-even",
               "#fp4.mxfp4_macro<macro_block = 0, scale_rounding = even>",
               "macro", dict(macro_block=0, scale_rounding="even")),
        Config("macro-stochastic",
               f"#fp4.mxfp4_macro<rounding = stochastic, seed = {SEED}>",
               "macro", stochastic),
        # bf16 checkpoints: the JIT extends bf16 to f32 exactly.
        Config("mxfp4-even-bf16", "#fp4.mxfp4<scale_rounding = even>", "mxfp4",
               dict(scale_rounding="even"), input_type="bf16"),
        Config("nvfp4-bf16", "#fp4.nvfp4", "nvfp4", {}, input_type="bf16",
               data="narrow"),
        Config("hif4-bf16", "#fp4.hif4", "hif4", {}, input_type="bf16"),
    ]
    return out


CONFIGS = _configs()


# ----------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------

# Exponent ranges of the data kinds (see make_data): `wide` spans the whole
# f32 range, `narrow` stays within the dynamic range one NVFP4 tensor scale
# plus E4M3 block scales cover (including blocks whose scale underflows).
DATASETS = {
    "wide": dict(binade=(-30, 30), wide=(-149, 127), tie=(-126, 120)),
    "narrow": dict(binade=(-12, 4), wide=(-30, 8), tie=(-16, 4)),
}


def make_data(rng, rows, cols, binade, wide, tie):
    """[rows, cols] float32 whose 64-element segments are, in random order:
    N(0,1) at a random binade, Laplace with an outlier, a wide exponent range
    (`wide`: subnormals up to near FLT_MAX), exact E2M1 ties and grid points
    with the segment maximum on a scale-rule boundary, zeros of both signs
    (with the odd tiny value), and rarely a NaN or +-Inf."""
    n_seg = rows * cols // SEGMENT
    shape = (n_seg, SEGMENT)
    seg = np.arange(n_seg)
    kind = rng.choice(6, n_seg, p=[0.22, 0.22, 0.2, 0.22, 0.12, 0.02])
    scale = np.exp2(rng.integers(*binade, n_seg).astype(np.float64))[:, None]
    x = np.empty(shape, dtype=np.float64)

    x[:] = rng.standard_normal(shape) * scale                        # 0
    lap = rng.laplace(size=shape) * scale                            # 1
    lap[seg, rng.integers(0, SEGMENT, n_seg)] *= 30
    x[kind == 1] = lap[kind == 1]
    spread = (rng.choice([-1.0, 1.0], shape) * rng.uniform(1, 2, shape)
              * np.exp2(rng.integers(*wide, shape).astype(np.float64)))
    x[kind == 2] = spread[kind == 2]                                 # 2
    ties = (rng.choice(np.concatenate([GRID, MIDS]), shape)
            * rng.choice([-1.0, 1.0], shape))
    ties[:, 0] = rng.choice([4.0, 6.0, 7.0, 3.5, 5.0, 7.5, 8 - 2**-20], n_seg)
    ties *= np.exp2(rng.integers(*tie, n_seg).astype(np.float64))[:, None]
    x[kind == 3] = ties[kind == 3]                                   # 3
    x = x.astype(np.float32)

    zeros = np.where(rng.random(shape) < 0.5, np.float32(0), np.float32(-0.0))
    zeros[:, 5] = np.where(rng.random(n_seg) < 0.5, np.float32(0),
                           np.float32(-1e-40))
    x[kind == 4] = zeros[kind == 4]                                  # 4
    special = np.nonzero(kind == 5)[0]                               # 5
    x[special, rng.integers(0, SEGMENT, special.size)] = rng.choice(
        np.array([np.nan, np.inf, -np.inf], dtype=np.float32), special.size)
    return x.reshape(rows, cols)


def to_bf16_bits(x):
    """Round-to-nearest-even f32 -> bf16 bits (the checkpoint format)."""
    rounded = ref.round_to_bf16(x)
    return (rounded.view(np.uint32) >> 16).astype(np.uint16)


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# ----------------------------------------------------------------------------
# Running the tools
# ----------------------------------------------------------------------------

def run_fp4_quant(input_path, rows, cols, scheme, input_type, prefix):
    cmd = [FP4_QUANT, input_path, "--rows", str(rows), "--cols", str(cols),
           f"--input-type={input_type}", f"--scheme={scheme}", "-o", prefix,
           "--dequantize"]
    return subprocess.run(cmd, capture_output=True, text=True)


def read_jit_outputs(prefix, ref_scheme, rows, cols, options):
    """The component files of one fp4-quant run as reference-shaped arrays."""
    def load(name, dtype):
        return np.fromfile(f"{prefix}.{name}.bin", dtype=dtype)

    out = {"codes": load("codes", np.uint8).reshape(rows, cols // 2),
           "dequantized": load("dequantized.f32", np.float32).reshape(rows, cols)}
    if ref_scheme == "hif4":
        out["scales"] = load("metadata", np.uint32).reshape(rows, -1)
    else:
        # With 16x16 tiles too: one byte per 16 elements of a row, the
        # tile's byte repeated in its 16 rows (docs/ABI.md).
        out["scales"] = load("scales", np.uint8).reshape(rows, -1)
    if ref_scheme == "nvfp4":
        out["tensor_scale"] = load("tensor_scale", np.float32)
    if ref_scheme == "macro":
        out["factors"] = load("factors", np.uint16).reshape(rows, -1)
    return out


def nonfinite_blocks(x, ref_scheme, options):
    """Boolean [rows, cols] mask: the element's finest scale block (HiF4:
    group; NVFP4 tile2d: 16x16 tile) holds a NaN or +-Inf."""
    rows, cols = x.shape
    bad = ~np.isfinite(x)
    if ref_scheme == "nvfp4" and options.get("tile2d"):
        tiles = bad.reshape(rows // 16, 16, cols // 16, 16).any(axis=(1, 3))
        return np.repeat(np.repeat(tiles, 16, axis=0), 16, axis=1)
    block = {"mxfp4": options.get("block_size", 32), "nvfp4": 16,
             "hif4": 64, "macro": 32}[ref_scheme]
    blocks = bad.reshape(rows, cols // block, block).any(axis=2)
    return np.repeat(blocks, block, axis=1)


def assert_same_bytes(name, got, want, mask=None):
    """got == want elementwise (where mask is true), with a readable diff."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    diff = got != want
    if mask is not None:
        diff &= mask
    if diff.any():
        idx = np.argwhere(diff)
        first = tuple(idx[0])
        raise AssertionError(
            f"{name}: {len(idx)} of {diff.size} differ; first at {first}: "
            f"jit {got[first]!r} reference {want[first]!r}")


def compare_with_reference(x, jit, ref_scheme, options):
    q = ref.quantize(x, ref_scheme, **options)
    bad = nonfinite_blocks(x, ref_scheme, options)

    codes = ref.unpack_codes(jit["codes"])
    assert_same_bytes("codes", codes, ref.unpack_codes(q.codes), mask=~bad)

    ref_scales = q.scales
    if ref_scheme == "nvfp4" and options.get("tile2d"):
        tiles = jit["scales"][::16]
        assert_same_bytes("tile scales repeated over the tile's rows",
                          jit["scales"], np.repeat(tiles, 16, axis=0))
    if ref_scheme == "hif4":
        # A NaN group: only its E6M2 byte (0xFF) is specified.
        group_bad = bad[:, ::64]
        assert np.all(ref_scales[group_bad] & 0xFF == 0xFF)
        assert_same_bytes("metadata", jit["scales"], ref_scales,
                          mask=~group_bad)
        assert_same_bytes("metadata E6M2 byte", jit["scales"] & 0xFF,
                          ref_scales & 0xFF)
    else:
        assert_same_bytes("scales", jit["scales"], ref_scales)
    if ref_scheme == "nvfp4":
        assert_same_bytes("tensor_scale", jit["tensor_scale"].view(np.uint32),
                          np.array([q.tensor_scale], np.float32).view(np.uint32))
    if ref_scheme == "macro":
        assert_same_bytes("factors", jit["factors"], q.aux)

    want = ref.dequantize(q)
    got = jit["dequantized"]
    both_nan = np.isnan(got) & np.isnan(want)
    assert_same_bytes("dequantized NaN-ness", np.isnan(got), np.isnan(want))
    assert_same_bytes("dequantized bits", got.view(np.uint32),
                      want.view(np.uint32), mask=~both_nan)
    assert np.isnan(want[bad]).all(), "reference: non-finite block not NaN"


# ----------------------------------------------------------------------------
# 1. JIT vs reference
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="fp4-jit-") as d:
        yield d


@pytest.fixture(scope="module")
def data(workdir):
    """{(dataset, input type): (values as the quantizer sees them, path)}."""
    out = {}
    for i, (name, ranges) in enumerate(sorted(DATASETS.items())):
        x = make_data(np.random.default_rng(7 + i), ROWS, COLS, **ranges)
        path = os.path.join(workdir, f"{name}.f32")
        x.tofile(path)
        out[name, "f32"] = (x, path)
        bits = to_bf16_bits(x)
        path = os.path.join(workdir, f"{name}.bf16")
        bits.tofile(path)
        out[name, "bf16"] = (bf16_bits_to_f32(bits), path)
    return out


@pytest.fixture(scope="module")
def jit_runs(data, workdir):
    """Runs fp4-quant for every configuration up front, two at a time (the
    JIT compile is single-threaded), so the tests below only compare."""
    assert os.path.exists(FP4_QUANT), f"{FP4_QUANT} not built"

    def one(cfg):
        prefix = os.path.join(workdir, cfg.id)
        _, path = data[cfg.data, cfg.input_type]
        return cfg.id, (prefix, run_fp4_quant(path, ROWS, COLS, cfg.scheme,
                                              cfg.input_type, prefix))

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, CONFIGS))


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.id for c in CONFIGS])
def test_jit_matches_reference(cfg, data, jit_runs):
    values, _ = data[cfg.data, cfg.input_type]
    prefix, proc = jit_runs[cfg.id]
    assert proc.returncode == 0, (
        f"fp4-quant --scheme='{cfg.scheme}' failed:\n{proc.stderr}")
    jit = read_jit_outputs(prefix, cfg.ref_scheme, ROWS, COLS, cfg.options)
    compare_with_reference(values, jit, cfg.ref_scheme, cfg.options)


def test_data_covers_the_cases(data):
    """The mixture really holds what the comparison claims to cover."""
    x = data["wide", "f32"][0]
    assert x.size >= 10**6
    finite = x[np.isfinite(x)]
    assert np.isnan(x).any() and np.isposinf(x).any() and np.isneginf(x).any()
    assert (finite == 0).sum() > 10**4 and np.signbit(finite[finite == 0]).any()
    tiny = np.abs(finite[finite != 0]).min()
    assert tiny < np.finfo(np.float32).tiny            # subnormals
    assert np.abs(finite).max() > 2.0**126             # near FLT_MAX
    # E2M1 ties at a power-of-two scale: 1.25, 1.75, 2.5, 3.5 and 5 times
    # 2^k have significand 0.625 or 0.875 (random draws almost never do).
    m, _ = np.frexp(np.abs(finite[finite != 0]).astype(np.float64))
    assert np.isin(m, [0.625, 0.875]).sum() > 10**4


# ----------------------------------------------------------------------------
# 2. Constant folder vs JIT
# ----------------------------------------------------------------------------

FOLD_ROWS, FOLD_COLS = 64, 512
FOLD_CONFIGS = [c for c in CONFIGS if c.id in (
    "mxfp4-floor-rne", "mxfp4-even-stochastic", "mxfp4-rceil-half_away",
    "nvfp4", "nvfp4-4over6", "nvfp4-tile2d", "hif4", "macro",
    "macro-search8")]

_ELEMENT_DTYPES = {"i8": np.uint8, "i32": np.uint32, "bf16": np.uint16,
                   "f32": np.uint32, "f16": np.uint16}


def _tensor_type(shape, elt):
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{elt}>" if dims else f"tensor<{elt}>"


def component_types(scheme, rows, cols, options):
    """(name, mlir element type, shape) of each component, docs/ABI.md."""
    codes = ("codes", "i8", (rows, cols // 2))
    if scheme == "mxfp4":
        return [codes, ("scales", "i8", (rows, cols // 32))]
    if scheme == "nvfp4":
        return [codes, ("scales", "i8", (rows, cols // 16)),
                ("tensor_scale", "f32", ())]
    if scheme == "hif4":
        return [codes, ("metadata", "i32", (rows, cols // 64))]
    macro = options.get("macro_block", 256) or cols
    return [codes, ("scales", "i8", (rows, cols // 32)),
            ("factors", "bf16", (rows, cols // macro))]


def folding_module(scheme_text, elt_type, comps, rows, cols, blob_hex):
    qtype = (f"!fp4.tensor<{rows}x{cols}x{elt_type}, {scheme_text}, "
             f"axis = 1>")
    types = [_tensor_type(shape, elt) for _, elt, shape in comps]
    results = ", ".join(f"%c#{i}" for i in range(len(comps)))
    return f"""
func.func @folded() -> ({", ".join(types)}) {{
  %w = arith.constant dense_resource<fp4_quant_input> : tensor<{rows}x{cols}xf32>
  %q = fp4.quantize %w : tensor<{rows}x{cols}xf32> -> {qtype}
  %c:{len(comps)} = fp4.unpack %q : {qtype} -> {", ".join(types)}
  return {results} : {", ".join(types)}
}}
{{-#
  dialect_resources: {{
    builtin: {{
      fp4_quant_input: "0x04000000{blob_hex}"
    }}
  }}
#-}}
"""


_CONST_RE = re.compile(
    r"^\s*(%[\w#]+) = arith\.constant (dense_resource<([\w.$-]+)>|dense<(.*)>)"
    r" : tensor<([^>]*)>\s*$")
_RETURN_RE = re.compile(r"^\s*(?:func\.)?return (.*) : .*$")
_RESOURCE_RE = re.compile(r'^\s*"?([\w.$-]+)"?: "0x([0-9A-Fa-f]*)",?\s*$')


def _element_bits(text, elt):
    """One printed scalar (int, float, or 0x-hex bits) -> its bit pattern."""
    dtype = _ELEMENT_DTYPES[elt]
    if text.startswith("0x"):
        return np.array([int(text, 16)], dtype=np.uint64).astype(dtype)
    if elt in ("i8", "i32"):
        return np.array([int(text)], dtype=np.int64).astype(dtype)
    value = np.array([float(text)], dtype=np.float64)
    if elt == "f32":
        return value.astype(np.float32).view(np.uint32)
    if elt == "f16":
        return value.astype(np.float16).view(np.uint16)
    # bf16: the printed value is exact in bf16, so truncating the f32 is exact.
    return (value.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def parse_folded(ir):
    """Returns the bit arrays of the values `return`ed by @folded, from
    arith.constant dense / dense_resource ops and the resource section."""
    consts, resources, returned = {}, {}, None
    for line in ir.splitlines():
        if m := _CONST_RE.match(line):
            consts[m.group(1)] = (m.group(3), m.group(4), m.group(5))
        elif m := _RETURN_RE.match(line):
            returned = [v.strip() for v in m.group(1).split(",")]
        elif m := _RESOURCE_RE.match(line):
            resources[m.group(1)] = bytes.fromhex(m.group(2))
    assert returned is not None, "no return in the folded module:\n" + ir
    arrays = []
    for value in returned:
        assert value in consts, (
            f"{value} is not a constant after folding:\n{ir}")
        resource, dense, type_text = consts[value]
        *dims, elt = type_text.split("x")
        shape = tuple(int(d) for d in dims)
        dtype = _ELEMENT_DTYPES[elt]
        if resource is not None:
            blob = resources[resource]
            # A blob starts with its alignment (u32 LE), then the raw data.
            arr = np.frombuffer(blob[4:], dtype=dtype).copy()
        elif dense.startswith('"0x'):
            arr = np.frombuffer(bytes.fromhex(dense[3:-1]), dtype=dtype).copy()
        elif dense.startswith("["):
            items = dense.replace("[", " ").replace("]", " ").split(",")
            arr = np.concatenate([_element_bits(t.strip(), elt)
                                  for t in items])
        else:
            arr = _element_bits(dense.strip(), elt)
        count = int(np.prod(shape, dtype=np.int64))
        if arr.size == 1 and count != 1:
            arr = np.repeat(arr, count)                 # splat
        arrays.append(arr.reshape(shape))
    return arrays


@pytest.fixture(scope="module")
def fold_data(workdir):
    """{dataset: (values, path)}, FOLD_ROWS x FOLD_COLS each."""
    out = {}
    for i, (name, ranges) in enumerate(sorted(DATASETS.items())):
        x = make_data(np.random.default_rng(11 + i), FOLD_ROWS, FOLD_COLS,
                      **ranges)
        path = os.path.join(workdir, f"fold-{name}.f32")
        x.tofile(path)
        out[name] = (x, path)
    return out


@pytest.mark.parametrize("cfg", FOLD_CONFIGS, ids=[c.id for c in FOLD_CONFIGS])
def test_folder_matches_jit(cfg, fold_data, workdir):
    cid, text, ref_scheme, options = (cfg.id, cfg.scheme, cfg.ref_scheme,
                                      cfg.options)
    x, path = fold_data[cfg.data]
    rows, cols = x.shape
    assert os.path.exists(FP4_OPT), f"{FP4_OPT} not built"

    elt_type = "!fp4.s1p2" if ref_scheme == "hif4" else "f4E2M1FN"
    comps = component_types(ref_scheme, rows, cols, options)
    module = folding_module(text, elt_type, comps, rows, cols,
                            x.tobytes().hex().upper())
    proc = subprocess.run(
        [FP4_OPT, "-", "-fp4-fold-constants", "-canonicalize",
         "--mlir-print-elementsattrs-with-hex-if-larger=1"],
        input=module, capture_output=True, text=True)
    assert proc.returncode == 0, f"fp4-opt failed:\n{proc.stderr}"
    assert "fp4.quantize" not in proc.stdout, "the quantize was not folded"
    folded = parse_folded(proc.stdout)

    prefix = os.path.join(workdir, "fold-" + cid)
    jit_proc = run_fp4_quant(path, rows, cols, text, "f32", prefix)
    assert jit_proc.returncode == 0, jit_proc.stderr

    bad = nonfinite_blocks(x, ref_scheme, options)
    for (name, _, shape), got in zip(comps, folded):
        dtype = got.dtype
        jit = np.fromfile(f"{prefix}.{name}.bin", dtype=dtype).reshape(shape)
        if name == "codes":
            assert_same_bytes("folded codes", ref.unpack_codes(got),
                              ref.unpack_codes(jit), mask=~bad)
        elif name == "metadata":
            group_bad = bad[:, ::64]
            assert_same_bytes("folded metadata", got, jit, mask=~group_bad)
            assert_same_bytes("folded E6M2 bytes", got & 0xFF, jit & 0xFF)
        else:
            assert_same_bytes("folded " + name, got, jit)
