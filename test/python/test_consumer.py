"""fp4-mlir as a dependency: install the build into a temporary prefix, build
test/consumer (a separate CMake project using find_package(FP4MLIR), a C++
embedder through fp4/InitAll.h and a C embedder through the C API) against
that prefix alone, and run it, the installed fp4-opt and the installed Python
package. The steps and checks are test/consumer/run.sh.

Needs a complete build in $FP4_BUILD_DIR (default /work/main/build).
"""

import os
import subprocess

BUILD_DIR = os.environ.get("FP4_BUILD_DIR", "/work/main/build")
RUN_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "consumer", "run.sh")


def test_installed_package_consumer(tmp_path):
    assert os.path.isfile(os.path.join(BUILD_DIR, "cmake_install.cmake")), \
        f"{BUILD_DIR} is not a configured fp4-mlir build directory"
    proc = subprocess.run(
        ["bash", RUN_SH, BUILD_DIR, str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=110)
    assert proc.returncode == 0, proc.stdout
    assert "consumer test passed" in proc.stdout
