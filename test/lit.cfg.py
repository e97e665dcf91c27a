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
    ToolSubst("mlir-runner", unresolved="ignore"),
    ToolSubst("%python", config.python_executable, unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
