"""The compile cache: bundles keyed by the model's bytes and every option."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Optional, Sequence, Tuple

from . import _checks, _heterps


def default_cache_dir() -> Path:
    """Where compiled bundles are kept: $HETERPS_CACHE_DIR, else
    $XDG_CACHE_HOME/heterps, else ~/.cache/heterps; made absolute, so that
    bundles opened from it keep working after os.chdir."""
    explicit = os.environ.get("HETERPS_CACHE_DIR")
    if explicit:
        return Path(os.path.abspath(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return Path(os.path.abspath(base)) / "heterps"


def _compiler_identity() -> str:
    # A rebuilt compiler may build different stages from the same model:
    # its extension's size and time are part of every key.
    stat = os.stat(_heterps.__file__)
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _file_digest(path: str) -> bytes:
    """The contents' digest of a file a compile reads; a missing one keys
    as missing (the compile itself then reports it)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return b"missing"
    return digest.digest()


def file_states(paths: Sequence[str]) -> Dict[str, Optional[Tuple[int, int, int]]]:
    """What tells whether a file changed (inode, size, modification time),
    per path; None for a missing one. Taken before the key hashes the
    files, and compared after the compile read them again."""
    states: Dict[str, Optional[Tuple[int, int, int]]] = {}
    for path in paths:
        try:
            stat = os.stat(path)
            states[path] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        except OSError:
            states[path] = None
    return states


def check_unchanged(states: Mapping[str, Optional[Tuple[int, int, int]]]) -> None:
    """heterps.Error naming a file that changed since `states` were taken:
    the bundle may hold other contents than its key hashed."""
    for path, state in file_states(list(states)).items():
        if state != states[path]:
            raise _heterps.Error(
                f"'{path}' changed while the model was compiled (the compile "
                f"reads it after the cache key hashed it); nothing was cached: "
                f"compile again once it is written")


def cache_key(model: bytes, cluster_text: str, options: Mapping[str, Any],
              read_files: Sequence[str] = (),
              read_contents: Mapping[str, bytes] = {}) -> str:
    """A hex digest of everything that decides what a compile produces:
    the model, the cluster, the options and the contents of the other
    files the compile reads (`read_files`: external data, read here;
    `read_contents`: a profile, by its path, as read once for both the key
    and the compile)."""
    digest = hashlib.sha256()
    parts = [
        _compiler_identity().encode(),
        cluster_text.encode(),
        json.dumps(dict(options), sort_keys=True, default=str).encode(),
    ]
    for path in read_files:
        parts += [os.fsencode(path), _file_digest(path)]
    for path, contents in read_contents.items():
        parts += [os.fsencode(path), hashlib.sha256(contents).digest()]
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    digest.update(model)
    return digest.hexdigest()


def resolve(cache_dir: Optional[os.PathLike | str]) -> Path:
    if cache_dir is None:
        return default_cache_dir()
    # Absolute as given: a relative one would move with os.chdir, and the
    # bundles opened from it with it.
    path = Path(os.path.abspath(_checks.path("cache_dir", cache_dir)))
    if path.exists() and not path.is_dir():
        raise ValueError(f"cache_dir '{path}' is not a directory")
    return path


def private_copy(directory: Path, kind: str, contents: bytes, suffix: str) -> str:
    """A file under `directory`/`kind` holding `contents`, named by their
    digest: the compile reads exactly what its key hashed, however the
    file they came from changes meanwhile. Written whole under a name of
    this call's own and renamed into place, so threads and processes that
    write the same one at once do not collide."""
    name = hashlib.sha256(contents).hexdigest()[:24] + suffix
    path = directory / kind / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            with open(temporary, "xb") as file:
                file.write(contents)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    return os.fspath(path)


@contextlib.contextmanager
def locked(cache: Path) -> Iterator[None]:
    """Holds the cache's lock: putting an entry in place (or a broken one
    aside) is one step for every process that compiles into `cache`."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "bundles.lock", "a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        yield
