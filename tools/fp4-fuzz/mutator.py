"""IR-aware mutations of MLIR test inputs and fp4 pass pipelines.

A byte-level fuzzer mostly produces text the parser rejects on the first
line. These mutations keep the text close to IR that frontends and our own
passes produce and change the things that have broken compilers before: a
dimension (0, 1, odd, not a block multiple, huge), an element type, an
integer or float attribute, a scheme and its parameters, a pass option, a
line. A "consistent" shape mutation replaces one size everywhere it occurs,
so the IR still verifies and the mutant reaches the passes (this is how the
K = 0 division in fp4-fold-constants was found).

Everything is driven by one `random.Random`, so a (seed, input) pair always
gives the same mutant.
"""

import random
import re

# Sizes that stress block arithmetic: empty, unit, odd, around the block
# sizes (16, 32, 64, 256), and large enough to hit size limits.
SIZES = [0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 128,
         255, 256, 384, 4096, 65536, 1 << 31, 1 << 40]
ELEMENT_TYPES = ["f32", "bf16", "f16", "f64", "i8", "i32", "i64", "index",
                 "f8E4M3FN", "f4E2M1FN", "f8E8M0FNU", "i1"]
INTS = [0, 1, 2, 3, 4, -1, -2, 5, 7, 8, 15, 16, 31, 32, 33, 48, 64, 255, 256,
        257, 1 << 20, 1 << 31, (1 << 63) - 1, -(1 << 63)]
FLOATS = ["0.0", "-0.0", "0x7FC00000", "0xFF800000", "0x7F800000", "1.0e+38",
          "-1.0e+38", "1.0e-45", "6.0", "0.25", "-0.25", "0.75", "448.0",
          "1.0e+30"]
SCHEMES = ["#fp4.mxfp4", "#fp4.nvfp4", "#fp4.hif4", "#fp4.mxfp4_macro",
           "#fp4.mxfp4<block_size = 16>", "#fp4.mxfp4<block_size = 48>",
           "#fp4.mxfp4<block_size = 0>", "#fp4.mxfp4<scale_rounding = even>",
           "#fp4.mxfp4<scale_rounding = ceil>",
           "#fp4.mxfp4<scale_rounding = rceil>",
           "#fp4.nvfp4<tile2d = true>", "#fp4.nvfp4<four_over_six = true>",
           "#fp4.mxfp4_macro<macro_block = 48>",
           "#fp4.mxfp4_macro<macro_block = 0>",
           "#fp4.mxfp4_macro<macro_block = 64, search = 8>",
           "#fp4.hif4<group = 32>", "#fp4.bogus"]

# Options per pass: (valid and edge values, invalid values). Invalid values
# are picked rarely: they are rejected before any IR is touched.
PASS_OPTIONS = {
    "fp4-quantize": {
        "scheme": (["mxfp4", "nvfp4", "hif4", "mxfp4_macro",
                    "'#fp4.mxfp4<block_size = 16>'",
                    "'#fp4.mxfp4<block_size = 48>'",
                    "'#fp4.mxfp4<scale_rounding = even>'",
                    "'#fp4.mxfp4_macro<macro_block = 48>'",
                    "'#fp4.mxfp4_macro<macro_block = 0>'",
                    "'nvfp4<tile2d = true>'", "'nvfp4<four_over_six = true>'"],
                   ["bogus", "''", "'#fp4.mxfp4<block_size = 0>'"]),
        "operands": (["weights", "activations", "both"], ["none"]),
    },
    "fp4-fold-constants": {
        "max-elements": (["0", "1", "16", "4294967296"], ["-1"]),
        "fold-dequantize": (["true", "false"], []),
    },
    "fp4-outlier-fallback": {
        "k": (["1", "2", "4"], ["0", "3", "-1", "64"]),
        "block-size": (["0", "16", "32", "64"], ["1", "48", "-4"]),
        "operands": (["weights", "activations", "both"], ["x"]),
        "threshold": (["0", "6.0", "1e39"], ["-1", "nan"]),
    },
    "fp4-residual": {
        "sparsity": (["2:4", "topk"], ["1:2", "x"]),
        "k": (["0", "1", "2", "4"], ["-1", "33"]),
        "block-size": (["0", "16", "32"], ["48", "-1"]),
        "operands": (["weights", "activations", "both"], []),
    },
    "fp4-rotate": {
        "size": (["16", "32", "64", "128", "256"], ["0", "48", "-32", "512"]),
        "mode": (["randomized", "deterministic"], ["x"]),
        "seed": (["0", "7", "4294967295"], []),
    },
    "fp4-macro-scale": {
        "macro-block": (["0", "32", "64", "256", "65536"],
                        ["48", "-256", "1048576"]),
        "search": (["0", "1", "8"], ["-1", "1000"]),
    },
    "fp4-error-report": {"per-block": (["true", "false"], [])},
    "convert-fp4-to-gpu": {
        "chip": (["sm_90", "sm_100a", "sm_120a"], ["sm_75", "x"]),
        "decode-max-m": (["0", "1", "16", "64"], []),
        "decode-split-k": (["0", "1", "4"], ["3"]),
    },
}
INVALID_OPTION_RATE = 0.08

# Pipelines a mutant runs through (options are mutated on top). The NVVM
# pipeline is the slowest; `campaign` weights it down.
PIPELINES = [
    ["-fp4-quantize", "-fp4-fold-constants"],
    ["-fp4-quantize", "-fp4-outlier-fallback", "-fp4-fold-constants"],
    ["-fp4-quantize", "-fp4-residual", "-fp4-fold-constants"],
    ["-fp4-quantize", "-fp4-rotate", "-fp4-fold-constants"],
    ["-fp4-quantize", "-fp4-macro-scale", "-fp4-fold-constants"],
    ["-fp4-quantize", "-fp4-outlier-fallback", "-fp4-residual",
     "-fp4-fold-constants", "-canonicalize"],
    ["-fp4-quantize", "-fp4-error-report"],
    ["-fp4-quantize", "-fp4-fold-constants", "-fp4-pipeline-cpu"],
    ["-fp4-quantize", "-fp4-outlier-fallback", "-fp4-residual",
     "-fp4-pipeline-cpu"],
    ["-fp4-quantize", "-convert-fp4-to-linalg"],
    ["-fp4-quantize", "-convert-fp4-to-gpu"],
    ["-canonicalize", "-cse"],
    ["-fp4-quantize", "-fp4-fold-constants",
     "-fp4-pipeline-nvvm=chip=sm_90 format=isa"],
]
NVVM_PIPELINE = len(PIPELINES) - 1

_SHAPED = re.compile(r"\b(tensor|memref|vector|!fp4\.tensor)<([^<>]*?)"
                     r"(x?)([A-Za-z][\w]*)([,>])")
_DIMS = re.compile(r"(?<![\w#.])(\d+)(?=x)")
_ELEMENT = re.compile(r"(?<=x)(f32|bf16|f16|f64|i8|i32|i64|i1|index)"
                      r"(?=[>,])")
_INT_ATTR = re.compile(r"\b(block|top|axis|block_size|macro_block|search|"
                       r"k|size|group|seed|dim|dimension)(\s*=?\s*)(-?\d+)\b")
_FLOAT = re.compile(r"-?\d+\.\d+(?:e[+-]?\d+)?")
_SCHEME = re.compile(r"#fp4\.(?:mxfp4_macro|mxfp4|nvfp4|hif4)(?:<[^<>]*>)?")


def _pick_match(rng, pattern, text):
    matches = list(pattern.finditer(text))
    return rng.choice(matches) if matches else None


def _replace_span(text, span, new):
    return text[:span[0]] + new + text[span[1]:]


def mutate_shape_consistent(rng, text):
    """One size replaced everywhere it is a dimension of a shaped type."""
    dims = sorted({int(m.group(1)) for m in _DIMS.finditer(text)})
    if not dims:
        return None
    old, new = rng.choice(dims), rng.choice(SIZES)
    return re.sub(r"(?<![\w#.])%d(?=x)" % old, str(new), text)


def mutate_shape_one(rng, text):
    m = _pick_match(rng, _DIMS, text)
    if not m:
        return None
    new = rng.choice(SIZES + ["?"])
    return _replace_span(text, m.span(1), str(new))


def mutate_element_type(rng, text):
    m = _pick_match(rng, _ELEMENT, text)
    if not m:
        return None
    new = rng.choice(ELEMENT_TYPES)
    if rng.random() < 0.8:  # everywhere: the IR stays consistent
        return re.sub(r"(?<=x)%s(?=[>,])" % re.escape(m.group(1)), new, text)
    return _replace_span(text, m.span(1), new)


def mutate_int_attribute(rng, text):
    m = _pick_match(rng, _INT_ATTR, text)
    if not m:
        return None
    return _replace_span(text, m.span(3), str(rng.choice(INTS)))


def mutate_float(rng, text):
    m = _pick_match(rng, _FLOAT, text)
    if not m:
        return None
    return _replace_span(text, m.span(), rng.choice(FLOATS))


def mutate_scheme(rng, text):
    m = _pick_match(rng, _SCHEME, text)
    if not m:
        return None
    new = rng.choice(SCHEMES)
    if rng.random() < 0.5:
        return text.replace(m.group(0), new)
    return _replace_span(text, m.span(), new)


def _lines(text):
    return text.split("\n")


def mutate_delete_line(rng, text):
    lines = _lines(text)
    if len(lines) < 2:
        return None
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def mutate_duplicate_line(rng, text):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "\n".join(lines)


def mutate_swap_lines(rng, text):
    lines = _lines(text)
    if len(lines) < 2:
        return None
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def mutate_truncate(rng, text):
    if len(text) < 2:
        return None
    return text[:rng.randrange(1, len(text))]


# Weights: the shape and attribute mutations reach passes; the structural
# ones mostly test the parser and verifiers.
TEXT_MUTATIONS = [
    (mutate_shape_consistent, 10), (mutate_shape_one, 1),
    (mutate_element_type, 3), (mutate_int_attribute, 4), (mutate_float, 4),
    (mutate_scheme, 5), (mutate_delete_line, 0.5),
    (mutate_duplicate_line, 0.5), (mutate_swap_lines, 0.5),
    (mutate_truncate, 0.5),
]


def mutate_text(rng, text, rounds=None):
    """`text` with 1-3 mutations applied; returns (text, [mutation names])."""
    names = []
    rounds = rounds or rng.choice([1, 1, 1, 1, 2, 2, 3])
    functions = [f for f, _ in TEXT_MUTATIONS]
    weights = [w for _, w in TEXT_MUTATIONS]
    for _ in range(rounds):
        for _attempt in range(4):
            f = rng.choices(functions, weights)[0]
            result = f(rng, text)
            if result is not None and result != text:
                text = result
                names.append(f.__name__.replace("mutate_", ""))
                break
    return text, names


def _with_options(rng, flag):
    """`flag` (e.g. -fp4-rotate) with 0-2 random options of that pass."""
    name = flag.lstrip("-").split("=")[0]
    options = PASS_OPTIONS.get(name)
    if not options or rng.random() < 0.4:
        return flag
    keys = rng.sample(sorted(options), k=min(len(options), rng.choice([1, 2])))

    def value(key):
        valid, invalid = options[key]
        if invalid and rng.random() < INVALID_OPTION_RATE:
            return rng.choice(invalid)
        return rng.choice(valid)

    given = " ".join(f"{k}={value(k)}" for k in keys)
    return f"-{name}={given}" if "=" not in flag else f"{flag} {given}"


def mutate_pipeline(rng, pipeline):
    """Pass flags with random options; sometimes a pass dropped."""
    flags = [_with_options(rng, f) for f in pipeline]
    if len(flags) > 1 and rng.random() < 0.1:
        del flags[rng.randrange(len(flags))]
    return flags
