"""fp4-mlir Python package: reference quantizers over the C API."""


def _version():
    """Installed (wheel or cmake --install): fp4/_version.py, written by CMake
    from the VERSION file. The source tree on sys.path: that VERSION file
    itself. A copy of the package alone (e.g. carried to the GPU machine)
    still imports, with an unknown version."""
    try:
        from ._version import __version__ as version
        return version
    except ImportError:
        pass
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "VERSION")
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "0+unknown"


__version__ = _version()

from . import reference  # noqa: F401,E402
# MLIR contexts, pass pipelines and the JIT (loads the library on first use).
from . import ir  # noqa: F401,E402
