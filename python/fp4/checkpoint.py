"""Quantize a safetensors checkpoint from Python, like `fp4-quant SRC -o DST`.

    from fp4 import checkpoint
    checkpoint.quantize_checkpoint("llama/", "llama-mxfp4/", scheme="mxfp4")
    checkpoint.quantize_checkpoint("llama/", "llama-nvfp4/", scheme="nvfp4",
                                   exclude=["re:.*down_proj.*"], progress=True)

Same selection rules, layouts and files as fp4-quant's checkpoint mode
(docs/Checkpoints.md): `layout="compressed-tensors"` writes the
mxfp4-pack-quantized / nvfp4-pack-quantized tensors and config.json
quantization_config that compressed-tensors and vLLM load; `layout="fp4"`
writes the component arrays of docs/ABI.md with scheme and shape in the
header's __metadata__. The numbers come from the C++ reference quantizers
(fp4.reference), which the test suite checks bit for bit against the
compiled quantizer fp4-quant runs.

The safetensors package parses and writes the files. It reads a whole shard
into memory; fp4-quant maps files instead and is the tool for large
checkpoints.
"""

import fnmatch
import json
import os
import re
import shutil
import struct
import sys
import time

import numpy as np

from . import reference

__all__ = ["quantize_checkpoint", "CheckpointError", "LAYOUTS",
           "DEFAULT_RULE"]

LAYOUTS = ("compressed-tensors", "fp4")
INDEX_NAME = "model.safetensors.index.json"
CONFIG_NAME = "config.json"
# The compressed-tensors release whose conventions the layout follows.
COMPRESSED_TENSORS_VERSION = "0.20.0"
DEFAULT_RULE = ("2-D F32/BF16/F16 *.weight tensors except embeddings "
                "(*embed*) and lm_head")

# safetensors header dtype -> (numpy dtype of the raw bytes, TensorSpec name)
_DTYPES = {
    "F64": (np.float64, "float64"), "F32": (np.float32, "float32"),
    "F16": (np.float16, "float16"), "BF16": (np.uint16, "bfloat16"),
    "I64": (np.int64, "int64"), "U64": (np.uint64, "uint64"),
    "I32": (np.int32, "int32"), "U32": (np.uint32, "uint32"),
    "I16": (np.int16, "int16"), "U16": (np.uint16, "uint16"),
    "I8": (np.int8, "int8"), "U8": (np.uint8, "uint8"),
    "BOOL": (np.bool_, "bool"), "F8_E4M3": (np.uint8, "float8_e4m3fn"),
    "F8_E5M2": (np.uint8, "float8_e5m2"),
    "F8_E8M0": (np.uint8, "float8_e8m0fnu"),
    "C64": (np.complex64, "complex64"),
}
_FLOAT_INPUTS = ("F32", "BF16", "F16")


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or quantized; the message names the
    file and the reason, like fp4-quant's `error: <file>: <reason>`."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class _Pattern:
    """A glob matched against the whole name (`*` crosses dots) or
    `re:<regex>` matched from the start like compressed-tensors' re.match."""

    def __init__(self, text):
        self.text = text
        if text.startswith("re:"):
            try:
                self._regex = re.compile(text[3:])
            except re.error as error:
                raise ValueError(f"invalid pattern '{text}': {error}") from None
        else:
            self._regex = None

    def matches(self, name):
        if self._regex is not None:
            return self._regex.match(name) is not None
        return fnmatch.fnmatchcase(name, self.text)


def _patterns(values, what):
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out = []
    for v in values:
        if not isinstance(v, str):
            raise TypeError(f"{what} patterns must be strings, got {v!r}")
        out.append(_Pattern(v))
    return out


def _is_embedding(name):
    return "embed" in name


def _default_selected(name):
    return (name.endswith(".weight") and not _is_embedding(name)
            and "lm_head" not in name)


def _module_name(name):
    return name[:-len(".weight")] if name.endswith(".weight") else name


def _read_shard(path):
    """[(name, dtype, shape, bytes)] in file order and the metadata."""
    from safetensors import SafetensorError, deserialize, safe_open
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as error:
        raise CheckpointError(path, f"cannot read: {error.strerror}") from None
    try:
        tensors = deserialize(data)
        with safe_open(path, framework="np") as f:
            metadata = f.metadata() or {}
    except (SafetensorError, Exception) as error:  # noqa: B014
        raise CheckpointError(path, f"not a valid safetensors file: {error}")\
            from None
    # File order (by data offset), as fp4-quant processes them; the package
    # has validated the header, so reading the offsets back is safe.
    (n,) = struct.unpack("<Q", data[:8])
    offsets = {k: v["data_offsets"][0] for k, v in
               json.loads(data[8:8 + n]).items() if k != "__metadata__"}
    tensors = sorted(tensors, key=lambda item: offsets[item[0]])
    out = []
    for name, info in tensors:
        if info["dtype"] not in _DTYPES:
            raise CheckpointError(path, f"tensor '{name}' has unsupported "
                                        f"dtype '{info['dtype']}'")
        out.append((name, info["dtype"], list(info["shape"]), info["data"]))
    return out, dict(metadata)


def _to_f32(dtype, shape, data):
    raw = np.frombuffer(data, dtype=_DTYPES[dtype][0]).reshape(shape)
    if dtype == "BF16":
        # bf16 is the top half of an f32: widening is exact.
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32)


def _resolve(src):
    """(folder, index path or None, [shard names], weight_map, index meta,
    copy the folder's other files)."""
    src = os.fspath(src)
    if not os.path.exists(src):
        raise CheckpointError(src, "no such file or folder")
    if os.path.isdir(src):
        index = os.path.join(src, INDEX_NAME)
        if not os.path.exists(index):
            shards = sorted(n for n in os.listdir(src)
                            if n.endswith(".safetensors"))
            if not shards:
                raise CheckpointError(src, "no .safetensors file and no "
                                           f"{INDEX_NAME} in this folder")
            return src, None, shards, {}, {}, True
        folder = src
    elif src.endswith(".json"):
        index, folder = src, os.path.dirname(src) or "."
    else:
        return os.path.dirname(src) or ".", None, [os.path.basename(src)], \
            {}, {}, False
    try:
        with open(index) as f:
            root = json.load(f)
    except (OSError, ValueError) as error:
        raise CheckpointError(index, f"bad JSON: {error}") from None
    weight_map = root.get("weight_map") if isinstance(root, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise CheckpointError(index, 'no "weight_map" object (not a '
                                     'safetensors index?)')
    for name, shard in weight_map.items():
        if not isinstance(shard, str) or not shard or "/" in shard:
            raise CheckpointError(index, f"weight_map entry of '{name}' is "
                                         "not a file name in the index's "
                                         "folder")
    meta = {k: v for k, v in (root.get("metadata") or {}).items()
            if k != "total_size"}
    return folder, index, sorted(set(weight_map.values())), weight_map, \
        meta, True


def _scheme_attribute(scheme, options):
    """The scheme as fp4-quant prints it (defaults elided)."""
    defaults = {"block_size": 32, "scale_rounding": "floor",
                "rounding": "nearest_even", "seed": 0,
                "four_over_six": False, "tile2d": False, "macro_block": 256,
                "search": 0}
    names = {"rounding": {"nearest_even": "rne"}}
    parts = []
    for key, value in options.items():
        if defaults.get(key) == value:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        value = names.get(key, {}).get(value, value)
        parts.append(f"{key} = {value}")
    return f"#fp4.{scheme}" + (f"<{', '.join(parts)}>" if parts else "")


def _quantization_config(nvfp4, ignore):
    """config.json quantization_config: compressed-tensors' NVFP4A16 /
    MXFP4A16 presets (weights only; activations stay in 16 bits)."""
    fmt = "nvfp4-pack-quantized" if nvfp4 else "mxfp4-pack-quantized"
    weights = {"num_bits": 4, "type": "float", "symmetric": True,
               "group_size": 16 if nvfp4 else 32,
               "strategy": "tensor_group" if nvfp4 else "group",
               "dynamic": False,
               "scale_dtype": "torch.float8_e4m3fn" if nvfp4 else
               "torch.uint8"}
    return {
        "config_groups": {"group_0": {
            "targets": ["Linear"], "weights": weights,
            "input_activations": None, "output_activations": None,
            "format": fmt}},
        "format": fmt, "global_compression_ratio": None,
        "ignore": sorted(ignore), "kv_cache_scheme": None,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed", "sparsity_config": {},
        "transform_config": {}, "version": COMPRESSED_TENSORS_VERSION,
    }


def reciprocal_witness(g_dec):
    """The f32 G with fl32(1 / G) == g_dec bit for bit, closest to 1/g_dec:
    the encode-side global scale compressed-tensors stores, chosen so that
    the reciprocal vLLM takes gives back exactly our decode scale."""
    g_dec = np.float32(g_dec)
    start = np.float32(1) / g_dec
    for k in range(17):
        for direction in (np.float32(np.inf), np.float32(0)):
            g = start
            for _ in range(k):
                g = np.nextafter(g, direction, dtype=np.float32)
            with np.errstate(over="ignore", divide="ignore"):
                back = np.float32(1) / g
            if np.isfinite(g) and g > 0 and \
                    back.view(np.uint32) == g_dec.view(np.uint32):
                return g
    return None


def quantize_checkpoint(src, dst, scheme="mxfp4", include=None, exclude=None,
                        layout="compressed-tensors", progress=False,
                        **options):
    """Quantizes the checkpoint `src` (a .safetensors file, a
    model.safetensors.index.json or a folder with either) into the folder
    `dst`.

    scheme: "mxfp4", "nvfp4", "hif4" or "mxfp4_macro" (the CLI's names),
    with fp4.reference.quantize options (scale_rounding="even",
    four_over_six=True, ...). include / exclude: glob or "re:" patterns (a
    string or a list); without include, DEFAULT_RULE selects the tensors.
    layout: "compressed-tensors" (MXFP4 with block 32 or NVFP4) or "fp4".
    progress: print `[i/n] name RxC dtype s GB/s` per tensor on stderr.

    Returns {"quantized": [names], "copied": [names], "files": [paths]}.
    Raises ValueError (CheckpointError naming the file) on any problem,
    before writing anything."""
    scheme = reference.canonical_scheme(scheme)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; valid layouts: "
                         f"{', '.join(LAYOUTS)}")
    nvfp4 = scheme == "nvfp4"
    if layout == "compressed-tensors" and not (
            nvfp4 or (scheme == "mxfp4" and
                      options.get("block_size", 32) == 32)):
        raise ValueError(
            "layout 'compressed-tensors' holds mxfp4 with block_size 32 "
            "(mxfp4-pack-quantized) or nvfp4 (nvfp4-pack-quantized), not "
            f"{_scheme_attribute(scheme, options)}; use layout='fp4'")
    include_p = _patterns(include, "include")
    exclude_p = _patterns(exclude, "exclude")
    reference.make_params(scheme, **options)  # rejects bad options early
    multiple = reference.axis_multiple(scheme, **options)
    attribute = _scheme_attribute(scheme, options)

    folder, index, shard_names, weight_map, index_meta, is_folder = \
        _resolve(src)
    shards = []
    for shard in shard_names:
        path = os.path.join(folder, shard)
        shards.append(_read_shard(path) + (path,))
    if index is not None:
        found = {name: shard for shard, (tensors, _, _) in
                 zip(shard_names, shards) for name, *_ in tensors}
        for name, shard in weight_map.items():
            if found.get(name) != shard:
                raise CheckpointError(index, f"tensor '{name}' is mapped to "
                                             f"'{shard}', which does not "
                                             "contain it")

    # Selection (the rules of fp4-quant, Checkpoint.cpp).
    plans, ignore = [], []
    for tensors, _, path in shards:
        plan = []
        for name, dtype, shape, _ in tensors:
            floating = dtype in _FLOAT_INPUTS
            if include_p:
                selected = any(p.matches(name) for p in include_p)
            else:
                selected = (len(shape) == 2 and floating and
                            _default_selected(name))
            if selected and any(p.matches(name) for p in exclude_p):
                selected = False
            if selected:
                dims = "x".join(map(str, shape)) or "scalar"
                if len(shape) != 2 or not floating:
                    raise CheckpointError(
                        path, f"tensor '{name}' ({dtype} {dims}) matches "
                              "include but only 2-D F32, BF16 or F16 "
                              "tensors can be quantized")
                if shape[1] % multiple or shape[0] == 0:
                    why = (f"tensor '{name}' ({dims}) has {shape[1]} columns,"
                           f" not a positive multiple of {multiple}, the "
                           f"block structure of {attribute}")
                    if include_p:
                        raise CheckpointError(path, why)
                    print(f"fp4.checkpoint: warning: {path}: {why}; left "
                          "unquantized", file=sys.stderr)
                    selected = False
            if (not selected and len(shape) == 2 and floating and
                    name.endswith(".weight") and not _is_embedding(name)):
                ignore.append(_module_name(name))
            plan.append(selected)
        plans.append(plan)
    total = sum(map(sum, plans))
    if total == 0:
        raise CheckpointError(os.fspath(src), "no tensor to quantize (the "
                              f"default selects {DEFAULT_RULE}; see include)")

    dst = os.fspath(dst)
    os.makedirs(dst, exist_ok=True)
    if os.path.samefile(dst, folder):
        raise CheckpointError(dst, "the output folder is the checkpoint's "
                                   "own folder; choose another one")

    from safetensors import TensorSpec, serialize_file
    result = {"quantized": [], "copied": [], "files": []}
    out_map, out_bytes, done = {}, 0, 0
    for shard, (tensors, metadata, path), plan in zip(shard_names, shards,
                                                      plans):
        out = {}  # name -> (TensorSpec dtype, shape, contiguous array)
        metadata = dict(metadata)
        if layout == "compressed-tensors":
            metadata["format"] = "pt"  # transformers refuses other formats
        else:
            metadata["fp4.layout"] = "fp4-mlir-abi/1"
        for (name, dtype, shape, data), selected in zip(tensors, plan):
            if not selected:
                out[name] = (_DTYPES[dtype][1], shape,
                             np.frombuffer(data, np.uint8))
                result["copied"].append(name)
                continue
            start = time.perf_counter()
            x = _to_f32(dtype, shape, data)
            q = reference.quantize(x, scheme, **options)
            seconds = time.perf_counter() - start
            rows, cols = shape
            if layout == "compressed-tensors":
                base = _module_name(name)
                out[base + ".weight_packed"] = ("uint8", [rows, cols // 2],
                                                q.codes)
                out[base + ".weight_scale"] = (
                    "float8_e4m3fn" if nvfp4 else "uint8",
                    list(q.scales.shape), q.scales)
                if nvfp4:
                    g = reciprocal_witness(q.tensor_scale)
                    if g is None:
                        raise CheckpointError(
                            path, f"tensor '{name}': no f32 global scale has"
                                  f" the reciprocal {q.tensor_scale:e}")
                    out[base + ".weight_global_scale"] = (
                        "float32", [1], np.array([g], np.float32))
            else:
                parts = reference.components(q)
                for cname, (spec, array) in parts.items():
                    out[f"{name}.{cname}"] = (spec, list(array.shape), array)
                metadata["fp4:" + name] = json.dumps({
                    "scheme": attribute, "shape": [rows, cols], "axis": 1,
                    "dtype": dtype,
                    "components": [f"{name}.{c}" for c in parts]},
                    separators=(",", ":"), sort_keys=True)
            done += 1
            result["quantized"].append(name)
            if progress:
                rate = x.size * np.dtype(_DTYPES[dtype][0]).itemsize / \
                    max(seconds, 1e-9) / 1e9
                print(f"[{done}/{total}] {name} {rows}x{cols} {dtype} "
                      f"{seconds:.2f} s {rate:.2f} GB/s", file=sys.stderr,
                      flush=True)
        specs = {}
        for name, (spec, shape, array) in out.items():
            array = np.ascontiguousarray(array)
            out[name] = (spec, shape, array)
            specs[name] = TensorSpec(dtype=spec, shape=shape,
                                     data_ptr=array.ctypes.data,
                                     data_len=array.nbytes)
            out_bytes += array.nbytes
            out_map[name] = shard
        target = os.path.join(dst, shard)
        serialize_file(specs, target, metadata=metadata)
        result["files"].append(target)

    if index is not None:
        with open(os.path.join(dst, INDEX_NAME), "w") as f:
            json.dump({"metadata": {**index_meta, "total_size": out_bytes},
                       "weight_map": dict(sorted(out_map.items()))}, f,
                      indent=2)
    config_in = os.path.join(folder, CONFIG_NAME)
    if layout == "compressed-tensors":
        config = {}
        if os.path.exists(config_in):
            try:
                with open(config_in) as f:
                    config = json.load(f)
            except ValueError as error:
                raise CheckpointError(config_in, f"bad JSON: {error}") \
                    from None
        config["quantization_config"] = _quantization_config(nvfp4, ignore)
        with open(os.path.join(dst, CONFIG_NAME), "w") as f:
            json.dump(config, f, indent=2)
    if is_folder:
        for entry in os.scandir(folder):
            if (entry.name.endswith(".safetensors") or
                    entry.name == INDEX_NAME or not entry.is_file() or
                    (layout == "compressed-tensors" and
                     entry.name == CONFIG_NAME)):
                continue
            shutil.copyfile(entry.path, os.path.join(dst, entry.name))
    return result
