"""Console scripts of the wheel (pyproject.toml [project.scripts]): fp4-opt,
fp4-quant and fp4-run on PATH start the programs installed in fp4/bin."""

import os
import runpy
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _exec(name):
    path = os.path.join(_BIN, name)
    if not os.access(path, os.X_OK):
        sys.exit(f"{name}: error: {path} is missing from the fp4 package; "
                 "reinstall it (pip install .)")
    # Replace this process: exit status, signals and stdin/stdout are the
    # tool's own.
    os.execv(path, [name] + sys.argv[1:])


def fp4_opt():
    _exec("fp4-opt")


def fp4_quant():
    _exec("fp4-quant")


def fp4_run():
    """fp4-run is a Python script: run it in this interpreter, which has the
    installed fp4 package and numpy."""
    path = os.path.join(_BIN, "fp4-run")
    sys.argv[0] = path
    runpy.run_path(path, run_name="__main__")
