# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FP4"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fp4_obj_root, "test")
# Python tests run under pytest, the consumer project under its own script.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "python", "consumer", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%fp4_lib_dir", config.fp4_lib_dir))
config.substitutions.append(("%fp4_src_root", config.fp4_src_root))
# libfp4_cuda_runtime.so and the CUDA toolkit it was built with (test/Runtime).
if getattr(config, "fp4_has_cuda_runtime", 0):
    config.available_features.add("fp4-cuda-runtime")
    config.substitutions.append(("%cuda_root", config.cuda_root))
# The ASan + UBSan build (scripts/run_sanitizers.sh).
if getattr(config, "fp4_sanitized", 0):
    config.available_features.add("sanitized")
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
                 "ASAN_SYMBOLIZER_PATH"):
        if name in os.environ:
            config.environment[name] = os.environ[name]
# An NVIDIA driver (the GPU machine): tests of the no-GPU errors skip there.
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
# Upstream mlir-opt (not fp4-opt) and the plugin that teaches it fp4
# (test/Plugin).
config.substitutions.append(
    ("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(("%fp4_plugin", config.fp4_plugin))
runner_libs = ",".join(
    os.path.join(config.mlir_lib_dir, lib)
    for lib in ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so"))
config.substitutions.append(("%mlir_runner_libs", runner_libs))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not` / `count` at the start of a RUN line are looked up on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.fp4_tools_dir, config.llvm_tools_dir]
tools = [
    "fp4-opt",
    ToolSubst("fp4-quant", unresolved="ignore"),
    ToolSubst("fp4-run", unresolved="ignore"),
    ToolSubst("mlir-runner", unresolved="ignore"),
    ToolSubst("%python", config.python_executable, unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas from the CUDA toolkit: GPU lowering tests assemble every generated
# kernel for sm_90 and check registers/spills (no GPU needed).
_ptxas_candidates = [os.path.join(getattr(config, "cuda_root", "") or "/usr/local/cuda", "bin", "ptxas"),
                     "/usr/local/cuda/bin/ptxas"]
for _ptxas in _ptxas_candidates:
    if os.path.exists(_ptxas):
        config.available_features.add("ptxas")
        config.substitutions.append(("%ptxas", _ptxas))
        config.substitutions.append(("%cuda_toolkit", os.path.dirname(os.path.dirname(_ptxas))))
        break
