"""Models as ONNX bytes: files, bytes, onnx.ModelProto or a PyTorch module."""

from __future__ import annotations

import importlib.util
import inspect
import io
import os
import warnings
from typing import Any, Optional, Tuple


def model_bytes(model: Any, example_inputs: Any = None) -> Tuple[bytes, str]:
    """(ONNX bytes, the name diagnostics give the model)."""
    if isinstance(model, (str, os.PathLike)):
        from . import _checks

        # The name goes to the compiler (its diagnostics, external data).
        path = _checks.path("model", model)
        try:
            _checks.regular_file(path)
            with open(path, "rb") as file:
                return file.read(), path
        except OSError as error:
            from ._heterps import Error

            raise Error(f"cannot read '{path}': {error.strerror}") from None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<bytes>"
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        return model.SerializeToString(), getattr(model.graph, "name", "") or "<onnx.ModelProto>"
    if looks_like_module(model):
        return _export_torch(model, example_inputs), type(model).__name__
    raise TypeError(
        "model must be a path, ONNX bytes, an onnx.ModelProto or a "
        f"torch.nn.Module, not {type(model).__name__}")


def looks_like_module(model: Any) -> bool:
    """A torch.nn.Module, known without importing torch (a torch.Tensor is
    not one)."""
    return any(cls.__name__ == "Module" and cls.__module__.startswith("torch.nn")
               for cls in type(model).__mro__)


def _export_torch(model: Any, example_inputs: Optional[Any]) -> bytes:
    try:
        import torch
    except ImportError:
        raise ImportError(
            "compiling a PyTorch module needs torch (pip install torch); "
            "or export it to ONNX with torch.onnx.export and pass the file"
        ) from None
    if example_inputs is None:
        raise ValueError(
            "a PyTorch module needs example_inputs= (a tensor, or a tuple or "
            "list of tensors) to be exported to ONNX")
    if isinstance(example_inputs, list):
        example_inputs = tuple(example_inputs)
    elif not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    # Exported as torch.onnx exports by default, in eval mode (BatchNorm's
    # running statistics, no Dropout), and without side effects on the
    # module: the forward that counts the outputs must not update those
    # statistics or draw from torch's generators, and torch.onnx restores
    # the root's mode to every submodule.
    modes = ([(module, module.training) for module in model.modules()]
             if isinstance(model, torch.nn.Module) else [])
    devices = range(torch.cuda.device_count()) if torch.cuda.is_initialized() else []
    try:
        with torch.random.fork_rng(devices=devices):
            if modes:
                model.eval()
            return _export(model, example_inputs)
    finally:
        for module, training in modes:
            module.training = training


def _export(model: Any, example_inputs: Tuple[Any, ...]) -> bytes:
    import torch

    options = {}
    # torch 2.9+ exports through torch.export and onnxscript by default;
    # without onnxscript the TorchScript exporter still works.
    if (importlib.util.find_spec("onnxscript") is None
            and "dynamo" in inspect.signature(torch.onnx.export).parameters):
        options["dynamo"] = False
    # A symbolic leading dim on every input and output, so that `batch=`
    # binds it and a training bundle has batched outputs; a model whose
    # code fixes its batch is exported as it is. Every tensor is named and
    # batched, those inside a list argument too (the exporters flatten the
    # arguments; only the first of a list was named before 2026-12-02, and
    # the others kept a fixed batch).
    from torch.utils import _pytree

    tensors = [leaf for leaf in _pytree.tree_leaves(example_inputs)
               if isinstance(leaf, torch.Tensor)]
    names = [f"input_{i}" for i in range(len(tensors))]
    with torch.no_grad():
        results = model(*example_inputs)
    if options.get("dynamo") is False:
        count = len(results) if isinstance(results, (tuple, list)) else 1
        outputs = [f"output_{i}" for i in range(count)]
        named = dict(input_names=names, output_names=outputs)
        dynamic = dict(named, dynamic_axes={n: {0: "batch"} for n in names + outputs})
    else:
        batch = torch.export.Dim("batch")
        named = dict(input_names=names)
        dynamic = dict(named, dynamic_shapes=_pytree.tree_map(
            lambda leaf: {0: batch} if isinstance(leaf, torch.Tensor) else None,
            example_inputs))
    attempts = [named, {}]
    if _follows_the_batch(model, example_inputs, results):
        attempts.insert(0, dynamic)
    for extra in attempts:
        buffer = io.BytesIO()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                torch.onnx.export(model, example_inputs, buffer, **options, **extra)
            return buffer.getvalue()
        except Exception:
            if not extra:
                raise
    raise AssertionError("unreachable")


def _follows_the_batch(model: Any, example_inputs: Tuple[Any, ...], results: Any) -> bool:
    """Whether the module's outputs follow its inputs' leading dim: run on
    the examples twice over, every output has twice the rows of `results`
    (its outputs on the examples). A module
    whose code fixes its batch (`x.reshape(4, -1)`) does not, and is
    exported as it is: the TorchScript exporter only warned about the
    symbolic batch and wrote a graph that gave (8, 3) for 8 samples where
    the module gives (4, 6)."""
    import torch
    from torch.utils import _pytree

    def doubled(leaf: Any) -> Any:
        if isinstance(leaf, torch.Tensor) and leaf.dim() > 0:
            return torch.cat([leaf, leaf])
        return leaf

    once = _pytree.tree_leaves(results)
    try:
        with torch.no_grad():
            twice = _pytree.tree_leaves(
                model(*_pytree.tree_map(doubled, example_inputs)))
    except Exception:
        return False
    if len(once) != len(twice):
        return False
    return all(
        isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
        and a.dim() > 0 and b.shape[0] == 2 * a.shape[0]
        and b.shape[1:] == a.shape[1:]
        for a, b in zip(once, twice))
