"""heterps.compile, heterps.place and heterps.Bundle: HeterPS's own surface."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple, Union)

import numpy as np

from . import _cache, _checks, _heterps
from ._models import looks_like_module, model_bytes
from .cluster import ClusterLike, as_cluster
from .plan import Plan, as_plan

if TYPE_CHECKING:
    from .training import Training


class TensorInfo(NamedTuple):
    """An input or output of a bundle."""

    name: str
    shape: Tuple[int, ...]
    """The compiled shape; dim 0 of a batched tensor is the micro-batch."""
    dtype: Optional[np.dtype]
    """NumPy's dtype (ml_dtypes.bfloat16 for bf16; None for bf16 where
    ml_dtypes is not installed)."""
    type: str
    """The runtime's name for the element type ("f32", "i64", ...)."""
    batched: bool
    """Dim 0 is the batch: any number of samples may be passed."""


def _infos(specs: Sequence[tuple]) -> List[TensorInfo]:
    return [TensorInfo(name, tuple(shape), dtype, type_name, batched)
            for name, shape, type_name, dtype, batched in specs]


class Bundle:
    """A compiled bundle directory, opened for running.

    ``Bundle(path)`` opens one written by ``heterps compile`` or
    :func:`heterps.compile`; a damaged bundle raises :class:`heterps.Error`.
    """

    def __init__(self, path: Union[str, os.PathLike], *, threads: int = 0,
                 gpu_stages_on_cpu: bool = False, frames_in_flight: int = 0,
                 **unknown: Any):
        for key in unknown:
            # As compile() and train() name theirs.
            raise TypeError(f"unknown Bundle option '{key}' (the options: "
                            "frames_in_flight, gpu_stages_on_cpu, threads)")
        # Absolute: plan, run (the stages load lazily) and train read the
        # directory later, after an os.chdir too.
        self.path = Path(os.path.abspath(_checks.path("path", path)))
        self._session = _heterps.Session(
            os.fspath(self.path), _checks.integer("threads", threads, 0, 4097),
            _checks.boolean("gpu_stages_on_cpu", gpu_stages_on_cpu),
            # The runtime's bound, which it checks only as the first run
            # starts the stages.
            _checks.integer("frames_in_flight", frames_in_flight, 0, 65537))
        self.inputs: List[TensorInfo] = _infos(self._session.inputs)
        self.outputs: List[TensorInfo] = _infos(self._session.outputs)
        #: True when :func:`heterps.compile` found this bundle in its cache.
        self.from_cache = False

    @property
    def batch(self) -> int:
        """The compiled micro-batch (0 when no input is batched)."""
        return self._session.batch

    @property
    def mixes_samples(self) -> Optional[str]:
        """Why a run takes exactly :attr:`batch` samples (an output mixes
        the samples of a batch: a softmax or mean over it), or None where
        any number of samples runs."""
        return self._session.mixes_samples

    @property
    def plan(self) -> Optional[Plan]:
        """The placement plan, with the fields ``heterps-translate
        --hps-to-plan`` prints (None for a model without layers); a dict
        that notebooks show as a table of stages."""
        with open(self.path / "manifest.json", "r", encoding="utf-8") as file:
            return as_plan(json.load(file).get("plan"))

    def run(self, feeds: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """Runs the model: one array per input, by name; returns one array
        per output, by name. Batched inputs may hold any number of samples.

        Raises heterps.Error for a training bundle, ValueError for a
        missing or unknown input name or an array of the wrong dtype or
        shape (naming the input; the wrong number of samples where the
        model runs whole batches only), heterps.Error for a failure of the
        runtime.
        """
        self._session.check_runnable()
        arrays = _ordered(self.inputs, feeds)
        results = self._session.run(arrays)
        return {info.name: array for info, array in zip(self.outputs, results)}

    @property
    def training(self) -> bool:
        """Whether this is a training bundle (compiled with train=True)."""
        return self._session.training

    def train(self, data: Any, **options: Any) -> "Training":
        """Trains a training bundle; iterate the result for the metrics of
        every logged step and evaluation, as they come::

            for metrics in bundle.train({"x": x, "label": y}, steps=200, log_every=50):
                print(metrics["step"], metrics["loss"])

        data: a Criteo TSV path, or a dict of input name (the label too) to
        a NumPy array or a .npy path. Options are those of ``heterps run
        --train`` (docs/CLI.md): steps or samples, batch, log_every, eval
        (like data), eval_every, seed, shuffle, threads, gpu_stages_on_cpu,
        hash_buckets, checkpoint_dir, checkpoint_every (steps, or a time such
        as "30s"), resume, dump_parameters, pass_steps (train in passes
        through the pass cache), pass_memory (the pass cache's memory bound:
        bytes, a size such as "512M", or "auto"), pass_cache_device ("host" or
        "gpu"), pass_cache_gpus (the CUDA devices of the pass cache in GPU
        memory, a shard of every pass's keys on each: [0, 1, 2, 3]),
        sparse_staleness (1: sparse updates one step late, overlapping
        the next step; pass_steps, pass_cache_device and sparse_staleness
        default to the bundle's plan), ps_memory_rows and ps_storage_dir
        (sparse rows beyond the memory budget in RocksDB),
        dense_parameters_on_gpu (False: GPU stages' dense parameters and
        gradients go through the host every step). Training runs on a
        thread of its own; leaving the loop early or Ctrl-C stops it after the current
        step. Raises heterps.Error with the trainer's message.
        """
        from .training import start

        known = [name for name in inspect.signature(start).parameters
                 if name not in ("directory", "data")]
        for key in options:
            if key not in known:
                raise TypeError(f"unknown training option '{key}' (the options: "
                                + ", ".join(known) + ")")
        return start(os.fspath(self.path), data, **options)

    def __repr__(self) -> str:
        return f"heterps.Bundle({os.fspath(self.path)!r})"


def _ordered(inputs: Sequence[TensorInfo], feeds: Mapping[str, Any]) -> List[Any]:
    if not isinstance(feeds, Mapping):
        raise TypeError(f"inputs must be a dict of name to numpy.ndarray, not "
                        f"{type(feeds).__name__}")
    names = {info.name for info in inputs}
    for name in feeds:
        if name not in names:
            raise ValueError(f"'{name}' is not an input of the model (its inputs: "
                             + ", ".join(repr(info.name) for info in inputs) + ")")
    missing = [info.name for info in inputs if info.name not in feeds]
    if missing:
        raise ValueError("no array for model input " + ", ".join(repr(n) for n in missing))
    return [feeds[info.name] for info in inputs]


# The value ranges of CompileOptions' integer fields: their C++ types
# (include/heterps/Driver/Compile.h). What a value means is the compiler's
# to check, with the command line's flag names.
_INTEGER_RANGES = {
    "seed": (0, 2 ** 64), "batch": (0, 10 ** 8 + 1),
    "recurrence_unroll_limit": (0, 2 ** 63), "episodes": (0, 2 ** 32),
    "pass_steps": (0, 2 ** 32), "sparse_staleness": (0, 2 ** 32),
    "micro_batches": (0, 2 ** 32),
}
_NOT_OPTIONS = ("model", "model_bytes", "cluster", "output")


def _set_option(options: "_heterps.CompileOptions", key: str, value: Any) -> None:
    """Sets one compile option, checked against the type of its default."""
    if key.startswith("_") or key in _NOT_OPTIONS or not hasattr(options, key):
        known = sorted(name for name in dir(options)
                       if not name.startswith("_") and name not in _NOT_OPTIONS)
        raise TypeError(f"unknown compile option '{key}' (the options: "
                        + ", ".join(known) + ")")
    default = getattr(options, key)
    if isinstance(default, bool):
        value = _checks.boolean(key, value)
    elif isinstance(default, int):
        value = _checks.integer(key, value, *_INTEGER_RANGES[key])
    elif isinstance(default, float):
        value = _checks.real(key, value)
    elif isinstance(default, list):
        value = _checks.texts(key, value)
    elif key == "profile":
        value = _checks.path(key, value)
    else:
        value = _checks.text(key, value)
    setattr(options, key, value)


class _Compile(NamedTuple):
    """What _options prepares for a compile or a placement."""

    options: "_heterps.CompileOptions"
    data: bytes
    cluster_text: str
    keyed: Dict[str, Any]
    read_files: List[str]
    read_contents: Dict[str, bytes]
    """The profile's contents, by its path as given: read once, for the
    key and (from a private copy) for the compile."""
    given_names: Dict[str, str]
    """The private copies the compiler reads, to the names the caller gave
    (for its diagnostics)."""


def _options(model: Any, cluster: ClusterLike, throughput: float, batch: int,
             strategy: str, train: bool, cache_dir: Path, example_inputs: Any,
             extra: Mapping[str, Any]) -> _Compile:
    data, name = model_bytes(model, example_inputs)
    if example_inputs is not None and not looks_like_module(model):
        raise TypeError("example_inputs is for a torch.nn.Module; this model "
                        "is " + type(model).__name__)
    resolved = as_cluster(cluster)
    options = _heterps.CompileOptions()
    options.model = name
    options.model_bytes = data
    for key, value in (("throughput", throughput), ("batch", batch),
                       ("strategy", strategy), ("train", train), *extra.items()):
        _set_option(options, key, value)
    # What decides the result, for the cache key: every option but where
    # the model and the cluster are (their contents are keyed instead),
    # and the contents of the other files the compile reads.
    keyed = {key: getattr(options, key) for key in dir(options)
             if not key.startswith("_") and key not in _NOT_OPTIONS}
    read_files = _heterps.external_data_files(name, data)
    read_contents: Dict[str, bytes] = {}
    given_names: Dict[str, str] = {}
    # The profile and the cluster are read once, here: the compiler reads
    # private copies of what the key hashes, so a file changed between the
    # two cannot put a bundle under another file's key.
    if options.profile:
        profile = options.profile
        try:
            with open(profile, "rb") as file:
                read_contents[profile] = file.read()
        except OSError as error:
            raise _heterps.Error(f"cannot read profile database '{profile}': "
                                 f"{error.strerror}") from None
        options.profile = _cache.private_copy(cache_dir, "profiles",
                                              read_contents[profile], ".json")
        given_names[options.profile] = profile
    options.cluster = resolved.file(cache_dir)
    # A cluster built from a dict is named as its JSON text (Cluster.text),
    # which the diagnostic's line and column count in.
    given_names[options.cluster] = (resolved._path if resolved._path is not None
                                    else f"<cluster {resolved.name!r} as JSON>")
    return _Compile(options, data, resolved.text, keyed, read_files, read_contents,
                    given_names)


@contextlib.contextmanager
def _as_given(given_names: Mapping[str, str]) -> Iterator[None]:
    """heterps.Error with the private copies the compiler read named as
    the caller gave them (the cluster file, the profile)."""
    try:
        yield
    except _heterps.Error as error:
        message = str(error)
        for private, given in given_names.items():
            message = message.replace(private, given)
        if message == str(error):
            raise
        raise _heterps.Error(message) from None


def compile(model: Any, cluster: ClusterLike = None, throughput: float = 1.0,
            batch: int = 0, strategy: str = "rl", train: bool = False,
            path: Union[str, os.PathLike, None] = None, *,
            cache_dir: Union[str, os.PathLike, None] = None,
            example_inputs: Any = None, **options: Any) -> Bundle:
    """Compiles a model into a bundle and opens it.

    model: a path to an ONNX file, ONNX bytes, an onnx.ModelProto or a
    torch.nn.Module (with ``example_inputs``; needs torch). cluster: a
    :class:`Cluster`, a YAML path or a dict (default: this machine's CPU).
    throughput: the target in samples/s the placement plans for. batch: the
    micro-batch bound to the inputs' symbolic leading dim (0: the model's
    own). strategy: rl, dp, brute, greedy, cpu-only or gpu-only.
    Further options are those of ``heterps compile`` (docs/CLI.md), by
    their CompileOptions names: static_batch, dims=["NAME=N"],
    input_shapes=["NAME=2x3"], seed, episodes, native_layouts,
    fuse_elementwise, recurrence_unroll_limit, profile and, with train=True,
    loss, label, train_output, optimizer, learning_rate, momentum,
    batch_norm, pass_steps, pass_distinct_fraction, sparse_staleness (step
    shapes the plan may take; training then follows the plan) and
    micro_batches (a training step's micro-batches; 0: the planner's).

    Without ``path`` the bundle lives in the compile cache (``cache_dir``,
    default :func:`heterps.default_cache_dir`) under a key of the model's
    bytes and every option, and a second compile of the same model opens it
    without building; with ``path`` it is written there.

    Raises heterps.Error with the compiler's diagnostics.
    """
    # Every argument is checked before anything is written.
    output = None if path is None else _checks.path("path", path)
    cache = _cache.resolve(cache_dir)
    prepared = _options(model, cluster, throughput, batch, strategy, train, cache,
                        example_inputs, options)
    compile_options = prepared.options
    if output is not None:
        compile_options.output = output
        with _as_given(prepared.given_names):
            _heterps.compile(compile_options)
        return Bundle(output)
    # External data is hashed here and read again by the compiler: a file
    # written between the two would put its bundle under the old key.
    read_states = _cache.file_states(prepared.read_files)
    target = cache / "bundles" / _cache.cache_key(
        prepared.data, prepared.cluster_text, prepared.keyed, prepared.read_files,
        prepared.read_contents)
    cached = _cached(target)
    if cached is not None:
        cached.from_cache = True
        return cached
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built under a name of this call's own, then put in place under the
    # cache's lock: two processes compiling the same model do not write
    # into one directory, the one that comes second opens the first one's
    # bundle, and a broken entry is replaced by one of them only.
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    compile_options.output = os.fspath(building / "bundle")
    try:
        with _as_given(prepared.given_names):
            _heterps.compile(compile_options)
        _cache.check_unchanged(read_states)
        with _cache.locked(cache):
            if _cached(target) is None:
                if os.path.lexists(target):
                    os.rename(target, building / "broken")
                os.rename(building / "bundle", target)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return Bundle(target)


def _cached(entry: Path) -> Optional[Bundle]:
    """The cache entry `entry`, opened; None where there is none or it
    would not run (a disk that filled up, a file removed or overwritten)."""
    if not entry.exists():
        return None
    try:
        bundle = Bundle(entry)
    except _heterps.Error:
        return None
    return bundle if bundle._session.stages_error() is None else None


def place(model: Any, cluster: ClusterLike = None, throughput: float = 1.0,
          strategy: str = "rl", *, batch: int = 0, train: bool = False,
          cache_dir: Union[str, os.PathLike, None] = None,
          example_inputs: Any = None, **options: Any) -> Plan:
    """The placement plan of a model on a cluster, without building it: the
    dict ``heterps-translate --hps-to-plan`` prints (same arguments as
    :func:`compile`), shown in notebooks as a table of stages. Raises
    heterps.Error with the compiler's diagnostics."""
    prepared = _options(model, cluster, throughput, batch, strategy, train,
                        _cache.resolve(cache_dir), example_inputs, options)
    with _as_given(prepared.given_names):
        return Plan(json.loads(_heterps.place(prepared.options)))
