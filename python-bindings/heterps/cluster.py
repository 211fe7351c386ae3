"""heterps.Cluster: the machines a model is placed on (docs/ClusterFormat.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np


class Cluster:
    """A cluster description: loaded from a YAML file (``Cluster.load``) or
    built from a dict with the same fields (``Cluster({...})``)."""

    def __init__(self, spec: Mapping[str, Any], name: Optional[str] = None):
        if not isinstance(spec, Mapping):
            raise TypeError("Cluster(spec) takes a dict; use Cluster.load(path) for a file")
        self._spec: Optional[Dict[str, Any]] = _plain(dict(spec), "cluster")
        # JSON is YAML: the compiler's cluster reader takes it as it is.
        self._text = json.dumps(self._spec, indent=1, sort_keys=True)
        self._path: Optional[str] = None
        self.name = name or str(spec.get("name", "cluster"))

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Cluster":
        """The cluster in a YAML file (e.g. clusters/paper.yaml), read now:
        compiles use the text read here, even if the file changes later;
        the compiler's errors name this file."""
        from . import _checks
        from ._heterps import Error

        cluster = cls.__new__(cls)
        cluster._spec = None
        # Absolute: the name it is known by stays right after os.chdir.
        cluster._path = os.path.abspath(_checks.path("path", path))

        try:
            _checks.regular_file(cluster._path)
            with open(cluster._path, "r", encoding="utf-8") as file:
                cluster._text = file.read()
        except UnicodeDecodeError as error:
            raise Error(f"cannot read cluster file '{cluster._path}': byte "
                        f"{error.start} is not UTF-8 text") from None
        except OSError as error:
            # As a model file that cannot be read (the compiler's error).
            raise Error(f"cannot read cluster file '{cluster._path}': "
                        f"{error.strerror}") from None
        cluster.name = Path(cluster._path).stem
        return cluster

    @classmethod
    def local_cpu(cls, gflops: float = 100.0, memory_gib: float = 8.0) -> "Cluster":
        """One CPU device class: this machine, for running models here."""
        return cls({
            "name": "local",
            "device_classes": [{
                "name": "cpu.local", "kind": "cpu", "peak_gflops": gflops,
                "memory_bandwidth_gbps": 20, "memory_gib": memory_gib,
                "price_per_hour": 0.1, "count": 1, "launch_overhead_us": 1,
            }],
            "links": [{"from": "cpu.local", "to": "ps", "scope": "intra",
                       "bandwidth_gbps": 10, "latency_us": 1, "key_us": 0.1}],
            "network": {"bandwidth_gbps": 1.25, "latency_us": 50},
        })

    @property
    def text(self) -> str:
        """The description as the compiler reads it (YAML or JSON)."""
        return self._text

    @property
    def spec(self) -> Optional[Dict[str, Any]]:
        """The dict this cluster was built from (None when loaded from YAML)."""
        return None if self._spec is None else json.loads(self._text)

    def file(self, directory: Path) -> str:
        """A file under `directory`/clusters holding exactly :attr:`text`,
        named by its contents: what the compile cache keys is what the
        compiler reads (for a loaded cluster, the text read by ``load``,
        not the YAML file as it may be now)."""
        from ._cache import private_copy

        return private_copy(Path(directory), "clusters", self._text.encode("utf-8"), ".yaml")

    def __repr__(self) -> str:
        origin = self._path if self._path is not None else "dict"
        return f"heterps.Cluster({self.name!r} from {origin})"


def _plain(value: Any, where: str) -> Any:
    """`value` with NumPy scalars as Python numbers, checked to be what
    JSON holds; a TypeError names where in the dict anything else is."""
    if isinstance(value, Mapping):
        plain = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: key {key!r} must be a string")
            plain[key] = _plain(item, f"{where}.{key}")
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"{where} must be a number, string, list or dict, not "
                    f"{type(value).__name__}")


ClusterLike = Union[Cluster, str, os.PathLike, Mapping[str, Any]]


def as_cluster(cluster: Optional[ClusterLike]) -> Cluster:
    if cluster is None:
        return Cluster.local_cpu()
    if isinstance(cluster, Cluster):
        return cluster
    if isinstance(cluster, Mapping):
        return Cluster(cluster)
    if isinstance(cluster, (str, os.PathLike)):
        return Cluster.load(cluster)
    raise TypeError(f"cluster must be a heterps.Cluster, a YAML path or a dict, "
                    f"not {type(cluster).__name__}")
