"""fp4-mlir Python package: reference quantizers over the C API."""

try:
    # Installed (wheel or cmake --install): written by CMake from VERSION.
    from ._version import __version__
except ImportError:
    # The source tree on sys.path: read the repository's VERSION file, the
    # one place the version is written.
    import os as _os

    with open(_os.path.join(_os.path.dirname(__file__), "..", "..",
                            "VERSION")) as _f:
        __version__ = _f.read().strip()
    del _os, _f

from . import reference  # noqa: F401,E402
# MLIR contexts, pass pipelines and the JIT (loads the library on first use).
from . import ir  # noqa: F401,E402
