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

import os as _os

# Training alternates OpenMP kernels with serial parameter-server and data
# work; spinning OpenMP workers steal the cores that work needs (2.5-5x
# slower steps on shared cores). The OpenMP runtime the native module links
# reads this once, when it loads (just below, unless something loaded it
# before); a user's own setting wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._heterps import Error, __version__  # noqa: E402
from .bundle import Bundle, TensorInfo, compile, place  # noqa: E402
from .cluster import Cluster  # noqa: E402
from .plan import Plan  # noqa: E402
from .session import InferenceSession, NodeArg  # noqa: E402
from .training import Training  # noqa: E402
from ._cache import default_cache_dir  # noqa: E402

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
    "__version__",
]
