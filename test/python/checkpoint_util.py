"""Small safetensors checkpoints for the checkpoint tests, written with the
safetensors package (the reference implementation our C++ parser is checked
against), and readers of what fp4-quant writes."""

import json
import os

import numpy as np

from safetensors import TensorSpec, deserialize, safe_open, serialize_file

# header dtype -> TensorSpec dtype name
SPEC = {"F32": "float32", "F16": "float16", "BF16": "bfloat16",
        "I64": "int64", "U8": "uint8", "F8_E4M3": "float8_e4m3fn",
        "U32": "uint32", "I32": "int32"}


def bf16_bits(x):
    """Round-to-nearest-even f32 -> bf16 bits (uint16)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(
        np.float32)


def encode(values, dtype):
    """(numpy array holding the file bytes) of f32 `values` as `dtype`."""
    if dtype == "BF16":
        return bf16_bits(values)
    if dtype == "F16":
        return np.asarray(values, np.float16)
    if dtype == "F32":
        return np.asarray(values, np.float32)
    return np.asarray(values)


def as_f32(array, dtype):
    """The exact f32 values of file bytes of `dtype`."""
    if dtype == "BF16":
        return bf16_to_f32(array)
    return np.asarray(array).astype(np.float32)


def write(path, tensors, metadata=None):
    """tensors: {name: (dtype, numpy array of the stored bytes)}."""
    keep, specs = [], {}
    for name, (dtype, array) in tensors.items():
        array = np.ascontiguousarray(array)
        keep.append(array)
        specs[name] = TensorSpec(dtype=SPEC[dtype], shape=list(array.shape),
                                 data_ptr=array.ctypes.data,
                                 data_len=array.nbytes)
    serialize_file(specs, str(path), metadata=metadata)


def read(path):
    """{name: (dtype, shape, raw bytes)} and the metadata."""
    with open(path, "rb") as f:
        data = f.read()
    out = {name: (info["dtype"], list(info["shape"]), info["data"])
           for name, info in deserialize(data)}
    with safe_open(str(path), framework="np") as f:
        meta = f.metadata() or {}
    return out, meta


def raw(entry, np_dtype):
    dtype, shape, data = entry
    return np.frombuffer(data, np_dtype).reshape(shape)


def llama_like(rng, hidden=64, inter=128, vocab=96, layers=2, dtype="BF16"):
    """{name: (dtype, stored array), f32 values} of a tiny Llama: embeddings,
    per layer q/k/v/o + gate/up/down Linear weights and two norms, final norm,
    lm_head, plus an int tensor (never quantized)."""
    tensors, values = {}, {}

    def add(name, shape, dt=dtype, scale=0.05):
        v = (rng.standard_normal(shape) * scale).astype(np.float32)
        stored = encode(v, dt)
        tensors[name] = (dt, stored)
        values[name] = as_f32(stored, dt)

    add("model.embed_tokens.weight", (vocab, hidden))
    for i in range(layers):
        p = f"model.layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            add(p + f"self_attn.{proj}.weight", (hidden, hidden))
        add(p + "mlp.gate_proj.weight", (inter, hidden))
        add(p + "mlp.up_proj.weight", (inter, hidden))
        add(p + "mlp.down_proj.weight", (hidden, inter))
        add(p + "input_layernorm.weight", (hidden,), scale=1.0)
        add(p + "post_attention_layernorm.weight", (hidden,), scale=1.0)
    add("model.norm.weight", (hidden,), scale=1.0)
    add("lm_head.weight", (vocab, hidden))
    tensors["model.rotary.inv_freq_index"] = ("I64", np.arange(8, dtype=np.int64))
    return tensors, values


LINEAR_SUFFIXES = ("q_proj.weight", "k_proj.weight", "v_proj.weight",
                   "o_proj.weight", "gate_proj.weight", "up_proj.weight",
                   "down_proj.weight")


def write_folder(folder, tensors, shards=1, config=None):
    """A model folder: one model.safetensors, or `shards` files plus
    model.safetensors.index.json, and a config.json."""
    os.makedirs(folder, exist_ok=True)
    names = list(tensors)
    if shards == 1:
        write(os.path.join(folder, "model.safetensors"), tensors,
              {"format": "pt"})
    else:
        weight_map = {}
        for s in range(shards):
            part = names[s::shards]
            shard = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            write(os.path.join(folder, shard),
                  {n: tensors[n] for n in part}, {"format": "pt"})
            weight_map.update({n: shard for n in part})
        with open(os.path.join(folder, "model.safetensors.index.json"),
                  "w") as f:
            json.dump({"metadata": {"total_size": 0},
                       "weight_map": weight_map}, f)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config or {"architectures": ["LlamaForCausalLM"],
                             "hidden_size": 64}, f)
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        f.write('{"version": "1.0"}')


def read_folder(folder):
    """All tensors of an output folder: {name: entry}, {name: metadata}."""
    tensors, metas = {}, {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".safetensors"):
            t, m = read(os.path.join(folder, name))
            tensors.update(t)
            for k in t:
                metas[k] = m
    return tensors, metas
