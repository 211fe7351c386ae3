"""The compile cache: keyed by the model's bytes and every option."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
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


def external_data_model(tmp_path):
    """tmp_path/m/m.onnx: y = x @ W, W (4x3 ones) in m/w.bin."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((4, 3), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    (tmp_path / "m").mkdir()
    onnx.save_model(model, str(tmp_path / "m" / "m.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="w.bin", size_threshold=0)


def test_files_the_compile_reads_are_part_of_the_key(tmp_path):
    """External weights and a profile change what a compile builds: a new
    file's contents are a new entry, not the old bundle."""
    external_data_model(tmp_path)
    x = np.ones((2, 4), np.float32)
    options = dict(cluster=str(LOCAL_CPU), throughput=1000, strategy="dp",
                   cache_dir=tmp_path / "cache")
    first = heterps.compile(tmp_path / "m" / "m.onnx", **options)
    assert first.run({"x": x})["y"].tolist() == [[4.0] * 3] * 2
    np.full((4, 3), 2.0, np.float32).tofile(tmp_path / "m" / "w.bin")
    second = heterps.compile(tmp_path / "m" / "m.onnx", **options)
    assert not second.from_cache
    assert second.run({"x": x})["y"].tolist() == [[8.0] * 3] * 2

    profile = tmp_path / "profile.json"
    profile.write_text('{"version": 1, "entries": []}')
    profiled = heterps.compile(tmp_path / "m" / "m.onnx", profile=profile, **options)
    assert not profiled.from_cache
    profile.write_text('{"version": 1, "entries": []}\n')
    assert not heterps.compile(tmp_path / "m" / "m.onnx", profile=profile, **options).from_cache


def test_external_data_written_during_the_compile_is_not_cached(tmp_path, monkeypatch):
    """The key hashes the external data, then the compiler reads it again:
    a file written in between put its bundle under the old contents' key,
    and later compiles of the old weights ran the new ones."""
    external_data_model(tmp_path)
    weights = tmp_path / "m" / "w.bin"
    compile_model = heterps.bundle._heterps.compile

    def writes_the_weights_meanwhile(options):
        np.full((4, 3), 2.0, np.float32).tofile(weights)
        compile_model(options)

    monkeypatch.setattr(heterps.bundle._heterps, "compile", writes_the_weights_meanwhile)
    options = dict(cluster=str(LOCAL_CPU), throughput=1000, strategy="dp",
                   cache_dir=tmp_path / "cache")
    with pytest.raises(heterps.Error, match=r"w\.bin' changed while the model was compiled"):
        heterps.compile(tmp_path / "m" / "m.onnx", **options)
    assert entries(tmp_path / "cache") == []
    monkeypatch.setattr(heterps.bundle._heterps, "compile", compile_model)
    x = np.ones((2, 4), np.float32)
    assert heterps.compile(tmp_path / "m" / "m.onnx", **options).run({"x": x})["y"].tolist() \
        == [[8.0] * 3] * 2


def test_a_damaged_stage_library_is_rebuilt(model, tmp_path):
    """A library cut short (a disk that filled up) would kill the process
    when loaded: opening refuses it, and the cache builds the entry anew."""
    first = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    library = next(first.path.glob("stage_*.so"))
    data = library.read_bytes()
    library.write_bytes(data[: len(data) // 2])
    with pytest.raises(heterps.Error, match=r"stage_0\.so is cut short or damaged"):
        heterps.Bundle(first.path)
    again = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert not again.from_cache and again.path == first.path
    assert heterps.Bundle(again.path).run({"image": np.zeros(again.inputs[0].shape, np.float32)})


@pytest.mark.parametrize("damage", ["removed", "zero-filled", "random bytes", "a directory"])
def test_a_stage_library_that_would_not_load_is_rebuilt(model, tmp_path, damage):
    """Opening a bundle reads its manifest and weights; its stages load on
    the first run. A cache entry whose library would not load is built
    anew, not handed back to fail every run."""
    first = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    library = next(first.path.glob("stage_*.so"))
    size = library.stat().st_size
    library.unlink()
    if damage == "zero-filled":
        library.write_bytes(bytes(size))
    elif damage == "random bytes":
        library.write_bytes(np.random.default_rng(0).bytes(size))
    elif damage == "a directory":
        library.mkdir()
    again = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert not again.from_cache and again.path == first.path
    assert again.run({"image": np.zeros(again.inputs[0].shape, np.float32)})
    assert heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path).from_cache
    assert entries(tmp_path) == [first.path.name]


_COMPILE_IN_A_PROCESS = """
import sys, heterps
bundle = heterps.compile(sys.argv[1], cluster=sys.argv[2], cache_dir=sys.argv[3])
print(bundle.path, bundle.from_cache)
"""


def test_an_entry_without_its_manifest_is_replaced_once(model, tmp_path):
    """An entry left without manifest.json (its other files there) is
    replaced; four processes compiling at once share the one new entry."""
    import os
    import subprocess
    import sys

    first = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    (first.path / "manifest.json").unlink()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    processes = [subprocess.Popen([sys.executable, "-c", _COMPILE_IN_A_PROCESS, model,
                                   str(LOCAL_CPU), str(tmp_path)],
                                  stdout=subprocess.PIPE, text=True, env=env)
                 for _ in range(4)]
    printed = [process.communicate()[0].split() for process in processes]
    assert all(process.returncode == 0 for process in processes)
    assert {path for path, _ in printed} == {str(first.path)}
    assert entries(tmp_path) == [first.path.name]
    again = heterps.compile(model, cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert again.from_cache
    assert again.run({"image": np.zeros(again.inputs[0].shape, np.float32)})


def _matmul_activation(activation: str, scale: float):
    """x -> MatMul(x, scale) -> activation: two of them differ in their
    stage code, not only in their weights."""
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.full((4, 3), scale, np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]),
         helper.make_node(activation, ["h"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_a_bundle_rebuilt_in_one_process_runs_its_new_code(tmp_path):
    """dlopen hands back a library this process loaded from the same path:
    before 2026-12-01 a second model compiled to the same `path`, or a
    cache entry rebuilt after damage, ran the first one's stage code."""
    pytest.importorskip("onnx", reason="the test models are built with onnx.helper")
    x = -np.ones((2, 4), np.float32)
    options = dict(cluster=str(LOCAL_CPU), throughput=1000, strategy="dp")
    first = heterps.compile(_matmul_activation("Relu", 1.0), path=tmp_path / "b", **options)
    assert first.run({"x": x})["y"].tolist() == [[0.0] * 3] * 2
    second = heterps.compile(_matmul_activation("Neg", 2.0), path=tmp_path / "b", **options)
    assert second.run({"x": x})["y"].tolist() == [[8.0] * 3] * 2
    assert first.run({"x": x})["y"].tolist() == [[0.0] * 3] * 2

    # A cache entry whose library went, after this process ran it: rebuilt.
    model = _matmul_activation("Relu", 1.0)
    cached = heterps.compile(model, cache_dir=tmp_path / "cache", **options)
    cached.run({"x": x})
    for library in cached.path.glob("*.so"):
        library.unlink()
    again = heterps.compile(model, cache_dir=tmp_path / "cache", **options)
    assert not again.from_cache
    assert again.run({"x": x})["y"].tolist() == [[0.0] * 3] * 2


def test_threads_writing_one_cluster_file_do_not_collide(tmp_path):
    """A dict cluster (and the default one) is written to the cache under
    its digest: before 2026-12-01 the temporary file was named after the
    process only, so threads compiling at once renamed each other's file
    away (FileNotFoundError)."""
    import threading

    cluster = heterps.Cluster.local_cpu()
    errors = []
    for trial in range(20):
        start = threading.Barrier(6)

        def write(directory=tmp_path / str(trial)):
            start.wait()
            try:
                assert Path(cluster.file(directory)).read_text() == cluster.text
            except Exception as error:  # noqa: BLE001 - collected for the assert
                errors.append(error)

        threads = [threading.Thread(target=write) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    # Only the files themselves are left, no temporary ones.
    assert {p.name for p in tmp_path.glob("*/clusters/*")} == {Path(cluster.file(tmp_path)).name}


def test_relative_paths_survive_chdir(tmp_path, monkeypatch):
    """A relative cache_dir, path, Cluster.load path or Bundle path is made
    absolute when given: before 2026-12-01 a bundle opened through one
    failed its first run and its plan after os.chdir (a notebook cell that
    changes directory), and a loaded cluster could not be compiled."""
    pytest.importorskip("onnx", reason="the test models are built with onnx.helper")
    x = -np.ones((2, 4), np.float32)
    model = _matmul_activation("Neg", 1.0)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "c.yaml").write_text(heterps.Cluster.local_cpu().text)
    monkeypatch.chdir(tmp_path)
    cluster = heterps.Cluster.load("c.yaml")
    cached = heterps.compile(model, throughput=1000, strategy="dp", cache_dir="cache")
    written = heterps.compile(model, throughput=1000, strategy="dp", path="b", cache_dir="cache")
    opened = heterps.Bundle("b")
    monkeypatch.setenv("HETERPS_CACHE_DIR", "env-cache")
    assert heterps.default_cache_dir() == tmp_path / "env-cache"
    monkeypatch.chdir(tmp_path / "elsewhere")
    for bundle in (cached, written, opened):
        assert bundle.path.is_absolute()
        assert bundle.run({"x": x})["y"].tolist() == [[4.0] * 3] * 2
        assert bundle.plan["stages"]
    again = heterps.compile(model, cluster, throughput=1000, strategy="dp",
                            cache_dir=tmp_path / "cache")
    assert again.run({"x": x})["y"].tolist() == [[4.0] * 3] * 2


def test_compiles_read_what_the_key_hashed(tmp_path, monkeypatch):
    """The key hashes a loaded cluster's text and the profile's contents;
    the compiler reads private copies of exactly those. Before 2026-12-01
    it re-read the files, so one edited in between put a bundle built for
    the new file under the old text's key, opened later for the old one."""
    pytest.importorskip("onnx", reason="the test models are built with onnx.helper")
    model = _matmul_activation("Relu", 1.0)
    text = heterps.Cluster.local_cpu().text
    path = tmp_path / "c.yaml"
    path.write_text(text.replace('"name": "local"', '"name": "old"'))
    old = heterps.Cluster.load(path)
    path.write_text(text.replace('"name": "local"', '"name": "new"'))
    options = dict(throughput=1000, strategy="dp", cache_dir=tmp_path / "cache")
    assert heterps.compile(model, old, **options).plan["cluster"] == "old"
    assert heterps.compile(model, path, **options).plan["cluster"] == "new"
    path.write_text(text.replace('"name": "local"', '"name": "old"'))
    reopened = heterps.compile(model, path, **options)
    assert reopened.from_cache and reopened.plan["cluster"] == "old"

    # A profile overwritten while the compile runs: the compile still
    # reads the contents the key hashed.
    from heterps import _heterps

    profile = tmp_path / "profile.json"
    profile.write_text('{"version": 1, "entries": []}')
    native = _heterps.compile

    def overwritten_first(compile_options):
        profile.write_text("not a profile")
        native(compile_options)

    monkeypatch.setattr(_heterps, "compile", overwritten_first)
    assert not heterps.compile(model, profile=profile, **options).from_cache
    monkeypatch.setattr(_heterps, "compile", native)
    with pytest.raises(heterps.Error, match=r"cannot read profile database '.*missing.json'"):
        heterps.compile(model, profile=tmp_path / "missing.json", **options)

    # Errors still name the files as given, not the private copies.
    path.write_text("name: broken\n")
    with pytest.raises(heterps.Error, match="^" + re.escape(f"{path}:1:1: error: ")):
        heterps.place(model, heterps.Cluster.load(path), cache_dir=tmp_path / "cache")
    with pytest.raises(heterps.Error, match=re.escape(f"error: {profile}: ")):
        heterps.place(model, profile=profile, cache_dir=tmp_path / "cache")
