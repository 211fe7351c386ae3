"""HeterPS from Python: compile ONNX models for heterogeneous clusters and run them.

Two surfaces over the same compiler and runtime (docs/Python.md):

* onnxruntime's: ``heterps.InferenceSession(model, cluster=..., batch=...)``
  with ``get_inputs()``, ``get_outputs()`` and ``run(output_names, feeds)``.
* HeterPS's own: ``heterps.compile(model, cluster, throughput=...) -> Bundle``,
  ``heterps.Bundle(path)`` (``plan``, ``inputs``, ``outputs``, ``run``),
  ``heterps.place(...)`` for the plan alone, and ``heterps.Cluster``.

Compiled bundles are cached by the model's bytes and every option, so
opening the same model twice builds its stages once. Failures of the compiler
or the runtime raise :class:`heterps.Error` (a ``RuntimeError``) with their
diagnostic text; an input of the wrong dtype or shape raises ``ValueError``
naming the input.
"""

from ._heterps import Error
from .bundle import Bundle, TensorInfo, compile, place
from .cluster import Cluster
from .plan import Plan
from .session import InferenceSession, NodeArg
from .training import Training
from ._cache import default_cache_dir

__all__ = [
    "Bundle",
    "Cluster",
    "Error",
    "InferenceSession",
    "NodeArg",
    "Plan",
    "TensorInfo",
    "Training",
    "compile",
    "default_cache_dir",
    "place",
]
