"""The compile cache: keyed by the model's bytes and every option."""

from __future__ import annotations

from pathlib import Path

import pytest

import heterps
from conftest import LOCAL_CPU, SHIPPED, require_models


@pytest.fixture
def model() -> str:
    require_models()
    return str(SHIPPED["mnist-mlp"].file)


def entries(cache: Path):
    return sorted(p.name for p in (cache / "bundles").iterdir())


def test_second_compile_is_a_hit(model, tmp_path):
    first = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert not first.from_cache
    second = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert second.from_cache and second.path == first.path
    # The same bytes, given as bytes: the same entry.
    third = heterps.compile(Path(model).read_bytes(), cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert third.from_cache and third.path == first.path
    assert len(entries(tmp_path)) == 1


def test_every_option_is_part_of_the_key(model, tmp_path):
    base = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    other = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path,
                            fuse_elementwise=False)
    assert not other.from_cache and other.path != base.path
    # The cluster's contents count, not its path: a dict with another
    # device is another entry.
    moved = heterps.compile(model, cluster=heterps.Cluster.local_cpu(gflops=50), cache_dir=tmp_path)
    assert not moved.from_cache
    again = heterps.compile(model, cluster=heterps.Cluster.local_cpu(gflops=50), cache_dir=tmp_path)
    assert again.from_cache and again.path == moved.path
    assert len(entries(tmp_path)) == 3


def test_cache_dir_from_the_environment(model, tmp_path, monkeypatch):
    monkeypatch.setenv("HETERPS_CACHE_DIR", str(tmp_path / "env"))
    assert heterps.default_cache_dir() == tmp_path / "env"
    bundle = heterps.compile(model, cluster=str(LOCAL_CPU))
    assert Path(bundle.path).parent == tmp_path / "env" / "bundles"


def test_explicit_path_bypasses_the_cache(model, tmp_path):
    bundle = heterps.compile(model, cluster=str(LOCAL_CPU), path=tmp_path / "b",
                             cache_dir=tmp_path / "cache")
    assert bundle.path == tmp_path / "b" and (tmp_path / "b" / "manifest.json").exists()
    assert not (tmp_path / "cache" / "bundles").exists()
    reopened = heterps.Bundle(tmp_path / "b")
    assert reopened.inputs == bundle.inputs and reopened.outputs == bundle.outputs


def test_concurrent_compiles_share_one_entry(model, tmp_path):
    """Two compiles of one model at once (the GIL is released while they
    run): each builds apart, one entry stays, both open it."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        bundles = list(pool.map(
            lambda _: heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path), range(2)))
    assert bundles[0].path == bundles[1].path
    assert entries(tmp_path) == [bundles[0].path.name]
