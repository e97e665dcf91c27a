"""Checkpoint quantization: fp4-quant's checkpoint mode and
fp4.checkpoint.quantize_checkpoint on safetensors files written by the
safetensors package (bf16, f16, f32; one file and sharded with an index).

Checks the exact tensor names, dtypes and shapes of both layouts, that the
quantized bytes are the reference quantizer's (the JIT is the compiled
quantizer, fp4.reference the C++ one), that every other tensor and file is
copied byte for byte, the config.json quantization_config, the NVFP4 global
scale convention (fl32(1 / weight_global_scale) == our decode scale), the
include/exclude patterns, and that the C++ tool and the Python function
write the same tensors. Corrupt inputs: test_checkpoint_errors.py.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("safetensors")

sys.path.insert(0, os.path.dirname(__file__))
import checkpoint_util as cu  # noqa: E402

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
os.environ.setdefault("FP4_LIB_DIR", os.path.join(BUILD_DIR, "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
from fp4 import checkpoint  # noqa: E402
from fp4 import reference as ref  # noqa: E402

FP4_QUANT = os.path.join(BUILD_DIR, "bin", "fp4-quant")


def fp4_quant(*args):
    return subprocess.run([FP4_QUANT, *map(str, args)], capture_output=True,
                          text=True)


def ok(*args):
    proc = fp4_quant(*args)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny bf16 Llama folder (one file) and its f32 values."""
    rng = np.random.default_rng(7)
    tensors, values = cu.llama_like(rng)
    folder = tmp_path_factory.mktemp("model")
    cu.write_folder(folder, tensors)
    return folder, tensors, values


def is_linear(name):
    return name.endswith(cu.LINEAR_SUFFIXES)


def test_mxfp4_compressed_tensors_layout(model, tmp_path):
    src, tensors, values = model
    out = tmp_path / "out"
    proc = ok(src, "-o", out, "--scheme=mxfp4")
    assert "quantized 14 tensors with #fp4.mxfp4 (compressed-tensors layout)" \
        in proc.stdout
    got, metas = cu.read_folder(out)
    expected_names = set()
    for name, (dtype, stored) in tensors.items():
        if is_linear(name):
            base = name[:-len(".weight")]
            expected_names |= {base + ".weight_packed", base + ".weight_scale"}
            rows, cols = stored.shape
            q = ref.quantize(values[name], "mxfp4")
            assert got[base + ".weight_packed"][:2] == ("U8", [rows, cols // 2])
            assert got[base + ".weight_scale"][:2] == ("U8", [rows, cols // 32])
            np.testing.assert_array_equal(
                cu.raw(got[base + ".weight_packed"], np.uint8), q.codes)
            np.testing.assert_array_equal(
                cu.raw(got[base + ".weight_scale"], np.uint8), q.scales)
        else:
            # Embeddings, lm_head, norms and the int tensor: unchanged.
            expected_names.add(name)
            assert got[name][0] == dtype
            assert got[name][2] == stored.tobytes(), name
    assert set(got) == expected_names
    assert metas["lm_head.weight"]["format"] == "pt"
    config = json.load(open(out / "config.json"))
    assert config["architectures"] == ["LlamaForCausalLM"]  # kept
    qc = config["quantization_config"]
    assert qc["quant_method"] == "compressed-tensors"
    assert qc["format"] == "mxfp4-pack-quantized"
    assert qc["quantization_status"] == "compressed"
    group = qc["config_groups"]["group_0"]
    assert group["targets"] == ["Linear"]
    assert group["format"] == "mxfp4-pack-quantized"
    assert group["input_activations"] is None
    assert group["weights"] == {
        "num_bits": 4, "type": "float", "symmetric": True, "group_size": 32,
        "strategy": "group", "dynamic": False, "scale_dtype": "torch.uint8"}
    assert qc["ignore"] == ["lm_head"]
    # Other files of the folder are copied.
    assert open(out / "tokenizer.json").read() == '{"version": "1.0"}'


def test_nvfp4_compressed_tensors_layout(model, tmp_path):
    src, tensors, values = model
    out = tmp_path / "out"
    ok(src, "-o", out, "--scheme=nvfp4")
    got, _ = cu.read_folder(out)
    for name in tensors:
        if not is_linear(name):
            continue
        base = name[:-len(".weight")]
        rows, cols = tensors[name][1].shape
        q = ref.quantize(values[name], "nvfp4")
        assert got[base + ".weight_scale"][:2] == ("F8_E4M3",
                                                   [rows, cols // 16])
        assert got[base + ".weight_global_scale"][:2] == ("F32", [1])
        np.testing.assert_array_equal(
            cu.raw(got[base + ".weight_packed"], np.uint8), q.codes)
        np.testing.assert_array_equal(
            cu.raw(got[base + ".weight_scale"], np.uint8), q.scales)
        g = cu.raw(got[base + ".weight_global_scale"], np.float32)[0]
        # vLLM and the kernels use 1 / weight_global_scale as the decode
        # scale: it must be ours bit for bit.
        assert (np.float32(1) / g).view(np.uint32) == \
            np.float32(q.tensor_scale).view(np.uint32)
    qc = json.load(open(out / "config.json"))["quantization_config"]
    assert qc["format"] == "nvfp4-pack-quantized"
    assert qc["config_groups"]["group_0"]["weights"] == {
        "num_bits": 4, "type": "float", "symmetric": True, "group_size": 16,
        "strategy": "tensor_group", "dynamic": False,
        "scale_dtype": "torch.float8_e4m3fn"}


@pytest.mark.parametrize("scheme,components", [
    ("mxfp4", {"codes": "U8", "scales": "U8"}),
    ("nvfp4", {"codes": "U8", "scales": "F8_E4M3", "tensor_scale": "F32"}),
    ("hif4", {"codes": "U8", "metadata": "U32"}),
    ("mxfp4_macro", {"codes": "U8", "scales": "U8", "factors": "BF16"}),
])
@pytest.mark.parametrize("dtype", ["F32", "BF16", "F16"])
def test_fp4_layout(tmp_path, scheme, components, dtype):
    rng = np.random.default_rng(3)
    v = rng.standard_normal((32, 256)).astype(np.float32)
    stored = cu.encode(v, dtype)
    src = tmp_path / "w.safetensors"
    cu.write(src, {"layer.weight": (dtype, stored),
                   "layer.bias": ("F32", np.ones(32, np.float32))})
    out = tmp_path / "out"
    ok(src, "-o", out, f"--scheme={scheme}", "--layout=fp4")
    got, meta = cu.read(out / "w.safetensors")
    q = ref.quantize(cu.as_f32(stored, dtype), scheme)
    want = ref.components(q)
    assert set(got) == {"layer.bias"} | {f"layer.weight.{c}"
                                         for c in components}
    for c, st_dtype in components.items():
        entry = got[f"layer.weight.{c}"]
        assert entry[0] == st_dtype
        spec, array = want[c]
        assert entry[1] == list(array.shape), c
        assert entry[2] == np.ascontiguousarray(array).tobytes(), c
    info = json.loads(meta["fp4:layer.weight"])
    assert info == {"scheme": f"#fp4.{scheme}", "shape": [32, 256],
                    "axis": 1, "dtype": dtype,
                    "components": [f"layer.weight.{c}" for c in components]}
    assert meta["fp4.layout"] == "fp4-mlir-abi/1"
    # No config.json is invented for the fp4 layout of a lone file.
    assert not (out / "config.json").exists()


def test_sharded_checkpoint(tmp_path):
    rng = np.random.default_rng(11)
    tensors, values = cu.llama_like(rng, dtype="F16")
    src = tmp_path / "src"
    cu.write_folder(src, tensors, shards=3)
    out = tmp_path / "out"
    ok(src, "-o", out, "--scheme=nvfp4")
    index = json.load(open(out / "model.safetensors.index.json"))
    in_index = json.load(open(src / "model.safetensors.index.json"))
    got, _ = cu.read_folder(out)
    assert set(index["weight_map"]) == set(got)
    total = 0
    for shard in sorted(set(index["weight_map"].values())):
        t, _ = cu.read(out / shard)
        total += sum(len(e[2]) for e in t.values())
        for name in t:
            assert index["weight_map"][name] == shard
    assert index["metadata"]["total_size"] == total
    # Every quantized tensor stays in the shard its weight was in.
    for name, shard in in_index["weight_map"].items():
        if is_linear(name):
            assert index["weight_map"][name[:-7] + ".weight_packed"] == shard
            q = ref.quantize(values[name], "nvfp4")
            np.testing.assert_array_equal(
                cu.raw(got[name[:-7] + ".weight_packed"], np.uint8), q.codes)
        else:
            assert index["weight_map"][name] == shard
    # The index file itself as the source gives the same result.
    out2 = tmp_path / "out2"
    ok(src / "model.safetensors.index.json", "-o", out2, "--scheme=nvfp4")
    got2, _ = cu.read_folder(out2)
    assert got2 == got


@pytest.mark.parametrize("flags,quantized", [
    # Globs match the whole name, `*` crosses dots.
    (["--include=*mlp.*"], {"gate_proj", "up_proj", "down_proj"}),
    (["--exclude=*down_proj*"], {"q_proj", "k_proj", "v_proj", "o_proj",
                                 "gate_proj", "up_proj"}),
    # re: patterns match from the start (re.match, as compressed-tensors).
    (["--include=re:.*layers\\.0\\..*_proj\\.weight"],
     {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
      "down_proj"}),
    (["--include=*proj.weight,lm_head.weight", "--exclude=re:.*self_attn"],
     {"gate_proj", "up_proj", "down_proj", "lm_head"}),
])
def test_include_exclude(model, tmp_path, flags, quantized):
    src, tensors, _ = model
    out = tmp_path / "out"
    ok(src, "-o", out, *flags)
    got, _ = cu.read_folder(out)
    packed = {n[:-len(".weight_packed")] for n in got
              if n.endswith(".weight_packed")}
    kinds = {n.split(".")[-1] for n in packed}
    assert kinds == quantized
    if "--include=re:" in flags[0]:
        assert all(n.startswith("model.layers.0.") for n in packed)
    ignore = json.load(open(out / "config.json"))["quantization_config"][
        "ignore"]
    # Linear layers left alone are listed for vLLM; embeddings are not.
    for name in tensors:
        if name.endswith(".weight") and tensors[name][1].ndim == 2 and \
                "embed" not in name:
            assert (name[:-7] in ignore) == (name[:-7] not in packed)


def test_python_writes_what_the_tool_writes(model, tmp_path):
    src, _, _ = model
    for layout, scheme, cli, options in [
            ("compressed-tensors", "mxfp4", "mxfp4", {}),
            ("compressed-tensors", "nvfp4", "nvfp4<four_over_six = true>",
             {"four_over_six": True}),
            ("fp4", "hif4", "hif4", {}),
            ("fp4", "mxfp4_macro", "mxfp4_macro<macro_block = 64>",
             {"macro_block": 64})]:
        a, b = tmp_path / f"cli-{scheme}", tmp_path / f"py-{scheme}"
        ok(src, "-o", a, f"--scheme={cli}", f"--layout={layout}",
           "--exclude=*o_proj*")
        result = checkpoint.quantize_checkpoint(src, b, scheme=scheme,
                                                layout=layout,
                                                exclude="*o_proj*", **options)
        assert len(result["quantized"]) == 12
        ta, ma = cu.read_folder(a)
        tb, mb = cu.read_folder(b)
        assert ta == tb, (layout, scheme)
        assert ma == mb
        assert sorted(os.listdir(a)) == sorted(os.listdir(b))
        if layout == "compressed-tensors":
            assert json.load(open(a / "config.json")) == \
                json.load(open(b / "config.json"))


def test_python_scheme_options_and_errors(model, tmp_path):
    src, tensors, values = model
    out = tmp_path / "even"
    checkpoint.quantize_checkpoint(src, out, scheme="mxfp4",
                                   scale_rounding="even")
    got, _ = cu.read_folder(out)
    name = "model.layers.1.mlp.up_proj"
    q = ref.quantize(values[name + ".weight"], "mxfp4", scale_rounding="even")
    np.testing.assert_array_equal(cu.raw(got[name + ".weight_scale"],
                                         np.uint8), q.scales)
    with pytest.raises(ValueError, match="valid schemes: mxfp4, nvfp4, hif4, "
                                         "mxfp4_macro"):
        checkpoint.quantize_checkpoint(src, tmp_path / "x", scheme="mxfp5")
    with pytest.raises(ValueError, match="valid layouts: compressed-tensors, "
                                         "fp4"):
        checkpoint.quantize_checkpoint(src, tmp_path / "x", layout="gguf")
    with pytest.raises(ValueError, match="use layout='fp4'"):
        checkpoint.quantize_checkpoint(src, tmp_path / "x", scheme="hif4")
    with pytest.raises(checkpoint.CheckpointError, match="no tensor to "
                                                         "quantize"):
        checkpoint.quantize_checkpoint(src, tmp_path / "x",
                                       include="nothing*")
    with pytest.raises(checkpoint.CheckpointError,
                       match="'model.norm.weight' .* only 2-D"):
        checkpoint.quantize_checkpoint(src, tmp_path / "x",
                                       include="model.norm.weight")
    with pytest.raises(checkpoint.CheckpointError, match="own folder"):
        checkpoint.quantize_checkpoint(src, src)


def test_default_leaves_unfit_shapes_with_a_warning(tmp_path):
    src = tmp_path / "w.safetensors"
    cu.write(src, {"a.weight": ("F32", np.ones((4, 64), np.float32)),
                   "b.weight": ("F32", np.ones((4, 48), np.float32))})
    proc = ok(src, "-o", tmp_path / "out")
    assert "b.weight' (4x48) has 48 columns, not a positive multiple of 32" \
        in proc.stderr
    got, _ = cu.read(tmp_path / "out" / "w.safetensors")
    assert set(got) == {"a.weight_packed", "a.weight_scale", "b.weight"}
    # Named explicitly, the same tensor is an error.
    proc = fp4_quant(src, "-o", tmp_path / "out2", "--include=b.weight")
    assert proc.returncode == 1
    assert "has 48 columns" in proc.stderr
