"""Runs inside the compressed-tensors environment
(scripts/install_compressed_tensors.sh), not under pytest: loads a
checkpoint folder written by fp4-quant / fp4.checkpoint with
compressed-tensors' own config parser and decompressors and saves every
decompressed weight (float32 copies of the bf16 tensors compressed-tensors
returns) to an .npz, plus what it parsed, for test_compressed_tensors.py.

    python ct_decompress.py CHECKPOINT_DIR OUT.npz [CHECKPOINT_DIR OUT.npz ...]

(several pairs in one process: importing torch and its CUDA libraries
takes most of the time.)
"""

import json
import os
import sys

import numpy as np
import torch
from compressed_tensors.compressors import BaseCompressor
from compressed_tensors.quantization import (QuantizationConfig,
                                            QuantizationStatus)
from compressed_tensors.quantization.quant_scheme import preset_name_to_scheme
from safetensors.torch import load_file


def main(folder, out):
    config = json.load(open(os.path.join(folder, "config.json")))
    qc = QuantizationConfig.model_validate(config["quantization_config"])
    scheme = qc.config_groups["group_0"]
    preset = "NVFP4A16" if qc.format == "nvfp4-pack-quantized" else "MXFP4A16"
    expected = preset_name_to_scheme(preset, ["Linear"])
    compressor = BaseCompressor.get_value_from_registry(qc.format)

    state = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".safetensors"):
            state.update(load_file(os.path.join(folder, name)))
    modules = sorted(n[:-len(".weight_packed")] for n in state
                     if n.endswith(".weight_packed"))
    arrays = {}
    for module in modules:
        local = {k[len(module) + 1:]: v for k, v in state.items()
                 if k.startswith(module + ".") and "." not in
                 k[len(module) + 1:]}
        weight = compressor.decompress(local, scheme)["weight"]
        arrays["w:" + module] = weight.float().numpy()
        arrays["dtype:" + module] = np.array(str(weight.dtype))
        arrays["scale_dtype:" + module] = np.array(
            str(local["weight_scale"].dtype))
    report = {
        "format": qc.format,
        "compressor": type(compressor).__name__ if not isinstance(
            compressor, type) else compressor.__name__,
        # What compressed-tensors itself would write for its preset
        # (model_dump drops the zp_dtype of symmetric schemes, as its
        # serializer does).
        "weights_match_preset": (scheme.weights.model_dump() ==
                                 expected.weights.model_dump()),
        "weights": scheme.weights.model_dump(),
        "input_activations": scheme.input_activations is None,
        "targets": scheme.targets,
        "ignore": qc.ignore,
        "status_compressed": (qc.quantization_status ==
                              QuantizationStatus.COMPRESSED),
        "torch": torch.__version__,
    }
    arrays["report"] = np.array(json.dumps(report))
    np.savez(out, **arrays)


if __name__ == "__main__":
    pairs = sys.argv[1:]
    for i in range(0, len(pairs) - 1, 2):
        main(pairs[i], pairs[i + 1])
