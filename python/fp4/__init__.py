"""fp4-mlir Python package: reference quantizers over the C API."""

from . import reference  # noqa: F401
# MLIR contexts, pass pipelines and the JIT (loads the library on first use).
from . import ir  # noqa: F401
