"""The compile cache: bundles keyed by the model's bytes and every option."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional

from . import _heterps


def default_cache_dir() -> Path:
    """Where compiled bundles are kept: $HETERPS_CACHE_DIR, else
    $XDG_CACHE_HOME/heterps, else ~/.cache/heterps."""
    explicit = os.environ.get("HETERPS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return Path(base) / "heterps"


def _compiler_identity() -> str:
    # A rebuilt compiler may build different stages from the same model:
    # its extension's size and time are part of every key.
    stat = os.stat(_heterps.__file__)
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def cache_key(model: bytes, cluster_text: str, options: Mapping[str, Any]) -> str:
    """A hex digest of everything that decides what a compile produces."""
    digest = hashlib.sha256()
    for part in (
        _compiler_identity().encode(),
        cluster_text.encode(),
        json.dumps(dict(options), sort_keys=True, default=str).encode(),
    ):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    digest.update(model)
    return digest.hexdigest()


def resolve(cache_dir: Optional[os.PathLike | str]) -> Path:
    return Path(cache_dir) if cache_dir is not None else default_cache_dir()
