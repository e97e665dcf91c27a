"""Torch models to fp4-mlir input IR, with layer names.

    import fp4.torch
    text = fp4.torch.export(model, (input_ids, attention_mask))
    # every op is at loc("encoder.layer.3.attention.self.query"(<file:line>))
    fp4.torch.capture_calibration(model, batches, "cal.npz")

`export` runs torch-mlir's fx importer (torch.export, torch-mlir's default
decompositions, `output_type="linalg-on-tensors"`) and gives every op a name
location whose name is the torch module path of the FX node it came from
(the innermost entry of the node's `nn_module_stack`), wrapping the file:line
location torch-mlir would have given it. torch-mlir alone emits only
file:line locations (`torch/nn/modules/linear.py:134`, the same for every
Linear), so recipes (`layer` patterns), calibration keys and the error
report could not address a layer. The name is the first NameLoc found
walking the location through FusedLoc and CallSiteLoc, which is how
fp4-quantize's recipes and CalibrationData::keyFor read it. Ops of the root
module itself (a softmax written in the top-level forward) keep torch-mlir's
location, without a name.

`capture_calibration` records, with forward hooks, the input of every named
leaf module (Linear, LayerNorm, ...) over some batches into the .npz format
of docs/Calibration.md, keyed by module path (see its docstring for why the
input).

Needs torch and torch-mlir (scripts/install_torch_mlir.sh makes a cached
environment with both and a real model); importing this module without them
raises ImportError saying so. docs/Torch.md has the details.
"""

import contextlib

try:
    import torch as _torch
    from torch_mlir import fx as _fx
    from torch_mlir import ir as _tm_ir
    from torch_mlir.extras.fx_decomp_util import (
        get_decomposition_table as _get_decomposition_table)
    from torch_mlir.extras.fx_importer import ContextCache as _ContextCache
    from torch_mlir.extras.fx_importer import FxImporter as _FxImporter
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "fp4.torch needs torch and torch-mlir (bash scripts/install_torch_mlir.sh "
        f"prints a python that has both): {e}") from e

# Without CUDA, torch.cuda.is_current_stream_capturing() is False in any
# torch, but with scripts/torch_cuda_stubs.py's stub libraries (the CPU
# environments of scripts/install_*.sh) asking crashes: the stub
# cudaStreamIsCapturing writes no result. transformers asks on every eager
# forward with an attention mask (is_tracing). Answer without the driver.
if not _torch.cuda.is_available():
    _torch.cuda.is_current_stream_capturing = lambda: False

__all__ = ["export", "module_path", "capture_calibration", "named_leaves"]


def module_path(node):
    """Module path of an FX node ('encoder.layer.3.attention.self.query'),
    or None for nodes of the root module or without a module stack.

    `nn_module_stack` is ordered outermost first; its values are
    (path, qualified type name). Strict-mode export writes paths as
    `L['self'].layer[3]`: normalized to the dotted form torch's
    named_modules() uses."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    path = list(stack.values())[-1][0]
    if path.startswith("L['self']"):
        path = path[len("L['self']"):].lstrip(".")
    path = path.replace("[", ".").replace("]", "")
    return path or None


class _NamingCache(_ContextCache):
    """torch-mlir's per-context cache, whose node locations carry the module
    path as a NameLoc (the importer asks it for every node's location)."""

    __slots__ = ()

    def get_node_location(self, node):
        loc = super().get_node_location(node)
        path = module_path(node)
        if path is None:
            return loc
        if loc is None:
            loc = _tm_ir.Location.unknown(context=self._c)
        return _tm_ir.Location.name(path, childLoc=loc, context=self._c)


class _NamingImporter(_FxImporter):
    """FxImporter with a _NamingCache."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cc = _NamingCache(self._c, py_attr_tracker=self._py_attr_tracker)


def _freeze_non_persistent_buffers(program):
    """torch-mlir's import_frozen_program looks every buffer up in the
    program's state_dict, where torch.export leaves out non-persistent
    buffers (kept in `constants`): BERT's `embeddings.position_ids` fails
    with "Could not find state mapping for buffer". Add them, after the
    decompositions (whose program validation rejects them there)."""
    state = program.state_dict
    for name in program.graph_signature.non_persistent_buffers:
        if name not in state and name in program.constants:
            state[name] = program.constants[name]


def export(module, example_inputs, *, output_type="linalg-on-tensors",
           func_name="main", names=True, path=None, **export_kwargs):
    """MLIR text of `module` applied to `example_inputs` (a tuple), lowered
    by torch-mlir to `output_type` with layer names as name locations
    (names=False: torch-mlir's own locations). Weights are frozen into the
    function as dense constants (torch-mlir's import_frozen_program), which
    fp4-quantize folds. The text is printed with locations; `path` also
    writes it there. Extra keyword arguments go to
    torch_mlir.fx.export_and_import (e.g. dynamic_shapes)."""
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    module = module.eval()
    context = _tm_ir.Context()
    from torch_mlir.dialects import torch as torch_d
    torch_d.register_dialect(context)
    importer = (_NamingImporter if names else _FxImporter)(context=context)
    dynamic_shapes = export_kwargs.pop("dynamic_shapes", None)
    with _torch.no_grad():
        program = _torch.export.export(module, example_inputs,
                                       dynamic_shapes=dynamic_shapes,
                                       strict=False)
        program = program.run_decompositions(_get_decomposition_table())
        _freeze_non_persistent_buffers(program)
        lowered = _fx.export_and_import(
            program, output_type=output_type, fx_importer=importer,
            func_name=func_name, decomposition_table={}, **export_kwargs)
    text = lowered.operation.get_asm(enable_debug_info=True,
                                     large_elements_limit=None)
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text


def named_leaves(module, types=None):
    """(path, submodule) of the leaf modules of `module` (no children), or of
    those that are instances of `types` when given."""
    for name, sub in module.named_modules():
        if not name:
            continue
        if types is not None:
            if isinstance(sub, types):
                yield name, sub
        elif not any(True for _ in sub.children()):
            yield name, sub


def capture_calibration(module, batches, path=None, *, types=None,
                        max_rows=None):
    """Input activations of every named leaf module (or of those of `types`)
    over `batches` (an iterable of argument tuples), as {module path: float32
    array [rows, K]} (K = the last axis, the channel axis fp4.quantize blocks
    for a Linear's input), written with np.savez to `path` when given.

    Keyed by module path, with the module's input, because that is the key
    CalibrationData::keyFor derives for the activation a contraction
    quantizes in IR from `export`: rule 3 takes the first name location of
    the op defining the quantize input, and torch-mlir's linear first
    reshapes or transposes its input inside the Linear's own module scope,
    so that op is named after the Linear. Rows of all batches are
    concatenated; `max_rows` keeps the first rows only."""
    import numpy as np
    records = {}
    handles = []

    def hook(name):
        def record(_mod, args):
            if not args or not isinstance(args[0], _torch.Tensor):
                return
            x = args[0].detach().to(_torch.float32)
            rows = x.reshape(-1, x.shape[-1]).cpu().numpy()
            records.setdefault(name, []).append(rows)
        return record

    with contextlib.ExitStack() as stack:
        for name, sub in named_leaves(module, types):
            handles.append(sub.register_forward_pre_hook(hook(name)))
            stack.callback(handles[-1].remove)
        module.eval()
        with _torch.no_grad():
            for args in batches:
                if not isinstance(args, tuple):
                    args = (args,)
                module(*args)
    arrays = {}
    for name, parts in records.items():
        rows = np.concatenate(parts, axis=0)
        if max_rows is not None:
            rows = rows[:max_rows]
        arrays[name] = np.ascontiguousarray(rows, dtype=np.float32)
    if path is not None:
        np.savez(path, **arrays)
    return arrays
