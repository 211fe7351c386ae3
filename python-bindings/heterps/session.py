"""heterps.InferenceSession: onnxruntime's surface over a compiled bundle."""

from __future__ import annotations

import os
from typing import Any, List, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np

from .bundle import Bundle, TensorInfo, _ordered, compile
from .cluster import Cluster, ClusterLike

# onnxruntime's names for the element types.
_ORT_TYPES = {
    "f32": "tensor(float)", "f64": "tensor(double)", "f16": "tensor(float16)",
    "bf16": "tensor(bfloat16)", "i8": "tensor(int8)", "u8": "tensor(uint8)",
    "i16": "tensor(int16)", "u16": "tensor(uint16)", "i32": "tensor(int32)",
    "u32": "tensor(uint32)", "i64": "tensor(int64)", "u64": "tensor(uint64)",
    "bool": "tensor(bool)",
}


class NodeArg(NamedTuple):
    """An input or output as onnxruntime describes it."""

    name: str
    shape: List[Union[int, str]]
    """The compiled shape; a batched dim 0 is "batch" (any number of samples)."""
    type: str
    """onnxruntime's type name, e.g. "tensor(float)"."""


def _node_arg(info: TensorInfo, any_samples: bool) -> NodeArg:
    shape: List[Union[int, str]] = list(info.shape)
    # "batch" where any number of samples runs; a model whose outputs mix
    # the samples runs its compiled batch only, which its shape then says.
    if info.batched and shape and any_samples:
        shape[0] = "batch"
    return NodeArg(info.name, shape, _ORT_TYPES[info.type])


class InferenceSession:
    """A model compiled by HeterPS, run as onnxruntime runs it::

        session = heterps.InferenceSession("model.onnx")
        [probabilities] = session.run(None, {"input": x})

    model: a path, ONNX bytes, an onnx.ModelProto or a torch.nn.Module (with
    example_inputs). cluster (default: this machine's CPU), batch (the
    micro-batch bound to a symbolic leading dim, default 1), strategy and
    throughput go to :func:`heterps.compile`, as do further keyword options;
    the compiled bundle comes from the compile cache when it is there.
    ``providers`` and ``sess_options`` are accepted for onnxruntime
    compatibility and ignored.
    """

    def __init__(self, model: Any, sess_options: Any = None,
                 providers: Optional[Sequence[Any]] = None, *,
                 cluster: ClusterLike = None, batch: int = 1,
                 strategy: str = "rl", throughput: float = 1.0,
                 cache_dir: Union[str, os.PathLike, None] = None,
                 example_inputs: Any = None, **options: Any):
        # onnxruntime's SessionOptions (or anything but what a HeterPS
        # user would pass there by mistake): a cluster given second was
        # taken for it and compiled for this machine without a word.
        if isinstance(sess_options, (str, bytes, os.PathLike, dict, Cluster)):
            raise TypeError(
                "sess_options is onnxruntime's SessionOptions, not "
                f"{type(sess_options).__name__!s}; give a cluster by name: "
                "InferenceSession(model, cluster=...)")
        self._bundle = compile(model, cluster, throughput=throughput,
                               batch=batch, strategy=strategy,
                               cache_dir=cache_dir,
                               example_inputs=example_inputs, **options)

    def __repr__(self) -> str:
        return f"heterps.InferenceSession({os.fspath(self._bundle.path)!r})"

    @property
    def bundle(self) -> Bundle:
        """The compiled bundle (HeterPS's own surface: plan, run by name)."""
        return self._bundle

    def get_inputs(self) -> List[NodeArg]:
        """The model's inputs (name, shape, type), as onnxruntime's; a batch
        that any number of samples may fill is "batch"."""
        any_samples = self._bundle.mixes_samples is None
        return [_node_arg(info, any_samples) for info in self._bundle.inputs]

    def get_outputs(self) -> List[NodeArg]:
        """The model's outputs, as get_inputs describes its inputs."""
        any_samples = self._bundle.mixes_samples is None
        return [_node_arg(info, any_samples) for info in self._bundle.outputs]

    def get_providers(self) -> List[str]:
        """["HeterPSExecutionProvider"]: the stages run as the plan places
        them, on HeterPS's own kernels."""
        return ["HeterPSExecutionProvider"]

    def run(self, output_names: Optional[Sequence[str]],
            input_feed: Mapping[str, np.ndarray],
            run_options: Any = None) -> List[np.ndarray]:
        """The outputs named (all of them for None or an empty list, as
        onnxruntime does), in that order.

        Raises ValueError for an unknown output or input name, a missing
        input, or an array of the wrong dtype or shape (naming the input);
        heterps.Error for a failure of the runtime.
        """
        self._bundle._session.check_runnable()
        names = [info.name for info in self._bundle.outputs]
        if isinstance(output_names, str):
            raise TypeError("output_names must be a list of names or None")
        requested = None if output_names is None else list(output_names)
        if not requested:
            wanted = list(range(len(names)))
        else:
            wanted = []
            for name in requested:
                if name not in names:
                    raise ValueError(f"'{name}' is not an output of the model (its outputs: "
                                     + ", ".join(repr(n) for n in names) + ")")
                wanted.append(names.index(name))
        results = self._bundle._session.run(_ordered(self._bundle.inputs, input_feed))
        return [results[index] for index in wanted]
