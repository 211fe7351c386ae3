"""Type stubs of heterps._heterps, the native half of heterps."""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

__version__: str

class Error(RuntimeError):
    """A failure of the compiler or the runtime; the message is their
    diagnostic text."""

class CompileOptions:
    """The options of `heterps compile` (docs/CLI.md)."""

    model: str
    model_bytes: Optional[bytes]
    cluster: str
    strategy: str
    profile: str
    output: str
    throughput: float
    seed: int
    batch: int
    static_batch: bool
    recurrence_unroll_limit: int
    input_shapes: List[str]
    dims: List[str]
    episodes: int
    pass_steps: int
    pass_distinct_fraction: float
    sparse_staleness: int
    native_layouts: bool
    fuse_elementwise: bool
    train: bool
    loss: str
    label: str
    train_output: str
    optimizer: str
    learning_rate: float
    momentum: float
    batch_norm: str
    def __init__(self) -> None: ...

def compile(options: CompileOptions) -> None:
    """Compiles options.model into the bundle directory options.output;
    raises Error with the compiler's diagnostics."""

def external_data_files(path: str, contents: bytes) -> List[str]:
    """The files holding the model's external data, as the importer
    resolves them (for the compile cache's key)."""

def place(options: CompileOptions) -> str:
    """The placement plan of options.model as JSON text, without building."""

# (name, shape, dtype name, NumPy dtype or None, batched)
_Spec = Tuple[str, Tuple[int, ...], str, Optional[np.dtype], bool]

class Session:
    """A compiled bundle opened for inference."""

    def __init__(self, directory: str, threads: int = 0,
                 gpu_stages_on_cpu: bool = False,
                 frames_in_flight: int = 4) -> None: ...
    @property
    def inputs(self) -> List[_Spec]: ...
    @property
    def outputs(self) -> List[_Spec]: ...
    @property
    def batch(self) -> int: ...
    @property
    def mixes_samples(self) -> Optional[str]: ...
    def stages_error(self) -> Optional[str]: ...
    @property
    def training(self) -> bool: ...
    def check_runnable(self) -> None: ...
    def run(self, inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        """One array per input, in order; one array per output. ValueError
        names an input of the wrong dtype or shape."""

class Training:
    """A training run on a thread of its own."""

    def __init__(self, directory: str, data: str, data_inputs: Dict[str, str],
                 eval: str, eval_inputs: Dict[str, str], batch: int, steps: int,
                 samples: int, log_every: int, eval_every: int, seed: int,
                 shuffle: bool, threads: int, gpu_stages_on_cpu: bool,
                 hash_buckets: int, checkpoint_dir: str, checkpoint_every: str,
                 resume: bool, dump_parameters: str,
                 pass_steps: Optional[int] = None, pass_memory: str = "",
                 pass_cache_device: Optional[str] = None,
                 sparse_staleness: Optional[int] = None,
                 ps_memory_rows: int = 0, ps_storage_dir: str = "",
                 dense_parameters_on_gpu: bool = True) -> None: ...
    def next(self) -> Optional[str]:
        """The next line of the trainer's log, None once it ended; raises
        Error with the trainer's error."""
    def stop(self) -> None:
        """Stops after the current step (and its checkpoint) and waits."""
    @property
    def summary(self) -> Dict[str, Any]: ...
