"""Bundle.train: a training bundle trained from Python, metrics as they come."""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _checks, _heterps

Data = Union[str, os.PathLike, Mapping[str, Union[np.ndarray, str, os.PathLike]]]


def parse_progress(line: str) -> Optional[Dict[str, Any]]:
    """A progress line of the trainer as a dict, None for other lines:

    ``step 20/100  loss 0.4213  auc 0.7712  1.23e4 samples/s`` and
    ``eval step 100/100  auc 0.77  logloss 0.45  4096 samples  2.1e5 samples/s``.
    """
    kind = "train"
    if line.startswith("eval step "):
        kind, line = "eval", line[len("eval "):]
    if not line.startswith("step "):
        return None
    chunks = line.split("  ")
    step, _, last = chunks[0][len("step "):].partition("/")
    metrics: Dict[str, Any] = {"kind": kind, "step": int(step), "steps": int(last)}
    for chunk in chunks[1:]:
        value, _, unit = chunk.strip().partition(" ")
        if unit == "samples/s":
            metrics["samples_per_second"] = float(value)
        elif unit == "samples":
            metrics["samples"] = int(value)
        else:
            # "loss 0.42", "auc 0.77", "accuracy 0.9", "logloss 0.45"
            name, _, number = chunk.strip().partition(" ")
            metrics["log_loss" if name == "logloss" else name] = float(number)
    return metrics


class Training:
    """A training run: iterate for one dict of metrics per logged step and
    evaluation; ``summary`` once it ended; ``log`` holds every line the
    trainer wrote. Leaving the loop early (or Ctrl-C) stops training after
    the current step, checkpointing it where checkpoints are configured."""

    def __init__(self, native: "_heterps.Training", scratch: Optional[tempfile.TemporaryDirectory],
                 arrays: Optional[Dict[str, str]] = None, directory: str = ""):
        self._native = native
        self._directory = directory
        self._scratch = scratch
        self._arrays = arrays or {}
        self.log: List[str] = []

    def __repr__(self) -> str:
        state = "ended" if self._native.summary else "running"
        return f"<heterps.Training of {self._directory!r}, {state}>"

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        try:
            while True:
                try:
                    line = self._native.next()
                except _heterps.Error as error:
                    raise _heterps.Error(_named_arrays(str(error), self._arrays)) from None
                if line is None:
                    return
                self.log.append(line)
                metrics = parse_progress(line)
                if metrics is not None:
                    yield metrics
                elif line.startswith("warning: "):
                    warnings.warn(line[len("warning: "):], RuntimeWarning, stacklevel=2)
        finally:
            self._native.stop()
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch = None

    def run(self) -> Dict[str, Any]:
        """Trains to the end without looking at the metrics; the summary."""
        for _ in self:
            pass
        return self.summary

    def stop(self) -> None:
        """Stops after the current step and waits for it."""
        self._native.stop()

    @property
    def summary(self) -> Dict[str, Any]:
        """steps, samples, seconds, train_loss/auc/accuracy, eval_* (when
        evaluated), interrupted, last_checkpoint; {} before the end."""
        return self._native.summary


def _named_arrays(message: str, arrays: Mapping[str, str]) -> str:
    """`message` with the scratch files of arrays named as the caller
    knows them: "the data array 'dense'", not a flag and a temporary path."""
    for written, name in arrays.items():
        message = message.replace(written, name)
    return message


def _files(data: Optional[Data], role: str, scratch_holder: List[tempfile.TemporaryDirectory],
           arrays: Optional[Dict[str, str]] = None):
    """(Criteo TSV path, {input name: .npy path}) for `data`."""
    if data is None:
        return "", {}
    if isinstance(data, (str, os.PathLike)):
        if arrays is not None:
            # The trainer names the file's flag; here it is an argument.
            arrays[f"--{role}: "] = f"{role}: "
        return _checks.path(role, data), {}
    if not isinstance(data, Mapping):
        raise TypeError(f"{role} must be a Criteo TSV path or a dict of input name to "
                        f"numpy.ndarray or .npy path, not {type(data).__name__}")
    files = {}
    for name, value in data.items():
        if not isinstance(name, str):
            raise TypeError(f"{role} input names must be str, got {name!r} "
                            f"({type(name).__name__})")
        if isinstance(value, (str, os.PathLike)):
            files[name] = _checks.path(f"{role} input '{name}'", value)
            continue
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{role} input '{name}' must be a numpy.ndarray or a .npy path")
        # np.save would pickle the objects, which the trainer cannot read.
        if value.dtype.hasobject:
            raise ValueError(f"{role} input '{name}' holds Python objects (dtype {value.dtype}); "
                             "give an array of numbers or bools")
        # The trainer reads little-endian files; np.save keeps the order.
        if value.dtype != value.dtype.newbyteorder("<"):
            raise ValueError(f"{role} input '{name}' is big-endian (dtype "
                             f"{value.dtype.str}); give "
                             f"array.astype('{value.dtype.newbyteorder('<').str}')")
        # The trainer maps its data from .npy files (arrays larger than
        # memory train too): arrays go to a scratch file for the run.
        if not scratch_holder:
            scratch_holder.append(tempfile.TemporaryDirectory(prefix="heterps-train-"))
        path = os.path.join(scratch_holder[0].name, f"{role}-{len(files)}.npy")
        np.save(path, np.ascontiguousarray(value))
        files[name] = path
        if arrays is not None:
            # The trainer names a file after its flag, as NAME=FILE, or
            # quoted; the longest first.
            named = f"the {role} array '{name}'"
            arrays[f"--{role}-input {name}={path}: '{path}'"] = named
            arrays[f"--{role}-input {name}={path}"] = named
            arrays[f"{name}={path}"] = named
            arrays[f"'{path}'"] = named
    return "", files


def _optional_path(name: str, value: Any) -> str:
    return "" if value is None else _checks.path(name, value)


def _count_or_text(name: str, value: Any) -> str:
    """A count (an int) or a size or time written out ("512M", "30s")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(_checks.integer(name, value))


def start(directory: str, data: Data, *, steps: int = 0, samples: int = 0,
          batch: int = 0, log_every: int = 100, eval: Optional[Data] = None,
          eval_every: int = 0, seed: int = 1, shuffle: bool = False, threads: int = 0,
          gpu_stages_on_cpu: bool = False, hash_buckets: int = 0,
          checkpoint_dir: Union[str, os.PathLike, None] = None,
          checkpoint_every: Union[int, str, None] = None, resume: bool = False,
          dump_parameters: Union[str, os.PathLike, None] = None,
          pass_steps: Optional[int] = None,
          pass_memory: Union[int, str, None] = None,
          pass_cache_device: Optional[str] = None,
          sparse_staleness: Optional[int] = None,
          ps_memory_rows: int = 0,
          ps_storage_dir: Union[str, os.PathLike, None] = None,
          dense_parameters_on_gpu: bool = True,
          pass_cache_gpus: Optional[Sequence[int]] = None) -> Training:
    scratch: List[tempfile.TemporaryDirectory] = []
    arrays: Dict[str, str] = {}
    try:
        data_file, data_inputs = _files(data, "data", scratch, arrays)
        eval_file, eval_inputs = _files(eval, "eval", scratch, arrays)
        native = _heterps.Training(
            directory, data_file, data_inputs, eval_file, eval_inputs,
            _checks.integer("batch", batch),
            _checks.integer("steps", steps),
            _checks.integer("samples", samples),
            _checks.integer("log_every", log_every),
            _checks.integer("eval_every", eval_every),
            _checks.integer("seed", seed, 0, 2 ** 64),
            _checks.boolean("shuffle", shuffle),
            _checks.integer("threads", threads, 0, 4097),
            _checks.boolean("gpu_stages_on_cpu", gpu_stages_on_cpu),
            _checks.integer("hash_buckets", hash_buckets),
            _optional_path("checkpoint_dir", checkpoint_dir),
            _count_or_text("checkpoint_every", checkpoint_every),
            _checks.boolean("resume", resume),
            _optional_path("dump_parameters", dump_parameters),
            None if pass_steps is None else _checks.integer("pass_steps", pass_steps),
            _count_or_text("pass_memory", pass_memory),
            None if pass_cache_device is None
            else _checks.text("pass_cache_device", pass_cache_device),
            None if sparse_staleness is None
            else _checks.integer("sparse_staleness", sparse_staleness, -(2 ** 31), 2 ** 31),
            _checks.integer("ps_memory_rows", ps_memory_rows),
            _optional_path("ps_storage_dir", ps_storage_dir),
            _checks.boolean("dense_parameters_on_gpu", dense_parameters_on_gpu),
            None if pass_cache_gpus is None
            else _checks.integers("pass_cache_gpus", pass_cache_gpus, 0, 10000))
    except _heterps.Error as error:
        for directory_ in scratch:
            directory_.cleanup()
        raise _heterps.Error(_named_arrays(str(error), arrays)) from None
    except BaseException:
        for directory_ in scratch:
            directory_.cleanup()
        raise
    return Training(native, scratch[0] if scratch else None, arrays, directory)
