"""Times fp4-quant on a real-sized checkpoint: a bf16 safetensors folder
with `--layers` Llama-3-8B-shaped decoder layers (q/o 4096x4096, k/v
1024x4096, gate/up 14336x4096, down 4096x14336, random N(0, 0.02) weights;
5 layers = 2.18 GB in 2 shards with an index), quantized to MXFP4 and NVFP4
in the compressed-tensors layout. Prints wall time and GB/s of input per
scheme (median of --repeat runs).

    python3 bench/checkpoint_speed.py --fp4-quant build/bin/fp4-quant \
        --dir /tmp/ckpt-bench --layers 5
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test",
                                "python"))
import checkpoint_util as cu  # noqa: E402

SHAPES = {"self_attn.q_proj": (4096, 4096), "self_attn.k_proj": (1024, 4096),
          "self_attn.v_proj": (1024, 4096), "self_attn.o_proj": (4096, 4096),
          "mlp.gate_proj": (14336, 4096), "mlp.up_proj": (14336, 4096),
          "mlp.down_proj": (4096, 14336)}


def make(folder, layers, seed=0):
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    weight_map = {}
    shards = 2
    per_shard = (layers + shards - 1) // shards
    for s in range(shards):
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        tensors = {}
        for i in range(s * per_shard, min(layers, (s + 1) * per_shard)):
            for proj, shape in SHAPES.items():
                v = rng.standard_normal(shape, dtype=np.float32)
                v *= np.float32(0.02)
                tensors[f"model.layers.{i}.{proj}.weight"] = (
                    "BF16", (v.view(np.uint32) >> 16).astype(np.uint16))
            for norm in ("input_layernorm", "post_attention_layernorm"):
                tensors[f"model.layers.{i}.{norm}.weight"] = (
                    "BF16", np.full(4096, 0x3F80, np.uint16))
        cu.write(os.path.join(folder, name), tensors, {"format": "pt"})
        weight_map.update({n: name for n in tensors})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"architectures": ["LlamaForCausalLM"],
                   "hidden_size": 4096, "intermediate_size": 14336,
                   "num_hidden_layers": layers}, f)


def size_of(folder):
    return sum(os.path.getsize(os.path.join(folder, n))
               for n in os.listdir(folder) if n.endswith(".safetensors"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fp4-quant", default="build/bin/fp4-quant")
    p.add_argument("--dir", default="/tmp/fp4-ckpt-bench")
    p.add_argument("--layers", type=int, default=5)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--schemes", default="mxfp4,nvfp4")
    args = p.parse_args()
    src = os.path.join(args.dir, "bf16")
    if not os.path.exists(os.path.join(src, "model.safetensors.index.json")):
        t = time.perf_counter()
        make(src, args.layers)
        print(f"generated {src} in {time.perf_counter() - t:.1f} s")
    gb = size_of(src) / 1e9
    print(f"checkpoint: {gb:.2f} GB bf16, {args.layers} layers, "
          f"{os.cpu_count()} CPUs")
    for scheme in args.schemes.split(","):
        out = os.path.join(args.dir, scheme)
        times, summary = [], ""
        for _ in range(args.repeat):
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            proc = subprocess.run([args.fp4_quant, src, "-o", out,
                                   f"--scheme={scheme}"],
                                  capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            if proc.returncode:
                sys.exit(proc.stderr)
            summary = proc.stdout.strip()
        wall = statistics.median(times)
        print(f"{scheme}: {wall:.1f} s wall, {gb / wall:.2f} GB/s of bf16 "
              f"input, output {size_of(out) / 1e9:.2f} GB")
        print("  " + summary)
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
