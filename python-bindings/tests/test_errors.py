"""Bad inputs and failures raise the documented exceptions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import heterps
from conftest import COMPILE, LOCAL_CPU, SHIPPED


def test_error_is_a_runtime_error():
    assert issubclass(heterps.Error, RuntimeError)


@pytest.fixture(scope="module")
def mlp(compiled):
    bundle = compiled("mnist-mlp")
    [info] = bundle.inputs
    return bundle, info


def test_wrong_dtype_names_the_input(mlp):
    bundle, info = mlp
    with pytest.raises(ValueError, match=r"input 'image' must have dtype float32.*float64"):
        bundle.run({info.name: np.zeros(info.shape, np.float64)})


def test_wrong_shape_names_the_input(mlp):
    bundle, info = mlp
    with pytest.raises(ValueError, match=r"'image'"):
        bundle.run({info.name: np.zeros((1, 28, 28), np.float32)})
    with pytest.raises(ValueError, match=r"'image'"):
        bundle.run({info.name: np.zeros((1, 1, 28, 27), np.float32)})


def test_not_an_array_names_the_input(mlp):
    bundle, info = mlp
    with pytest.raises(ValueError, match=r"input 'image' must be a numpy.ndarray, not list"):
        bundle.run({info.name: [[0.0]]})


def test_missing_and_unknown_inputs(mlp):
    bundle, info = mlp
    with pytest.raises(ValueError, match=r"no array for model input 'image'"):
        bundle.run({})
    with pytest.raises(ValueError, match=r"'pixels' is not an input of the model"):
        bundle.run({info.name: np.zeros(info.shape, np.float32), "pixels": np.zeros(1)})


def test_batched_input_shape_error_names_the_input(compiled):
    bundle = compiled("transformer")
    [info] = bundle.inputs
    shape = list(info.shape)
    shape[-1] += 1
    with pytest.raises(ValueError, match=repr(info.name)):
        bundle.run({info.name: np.zeros(shape, np.float32)})


def test_session_unknown_output(compiled, cache_dir):
    compiled("mnist-mlp")
    session = heterps.InferenceSession(str(SHIPPED["mnist-mlp"].file), batch=0,
                                       cache_dir=cache_dir, **COMPILE)
    x = np.zeros(session.bundle.inputs[0].shape, np.float32)
    with pytest.raises(ValueError, match=r"'logits' is not an output of the model"):
        session.run(["logits"], {"image": x})
    with pytest.raises(ValueError, match=r"input 'image' must have dtype"):
        session.run(None, {"image": x.astype(np.int64)})


def test_version_and_reprs(compiled, cache_dir):
    """heterps.__version__ is the tools' --version (CMake's project()); the
    session and a training run say what they are."""
    import re
    import subprocess

    tool = Path(heterps.__file__).resolve().parents[2] / "bin" / "heterps"
    printed = subprocess.run([str(tool), "--version"], capture_output=True, text=True).stdout
    assert re.fullmatch(r"\d+\.\d+\.\d+", heterps.__version__)
    assert printed.startswith(f"HeterPS {heterps.__version__} (built on LLVM and MLIR ")
    compiled("mnist-mlp")
    session = heterps.InferenceSession(str(SHIPPED["mnist-mlp"].file), batch=0,
                                       cache_dir=cache_dir, **COMPILE)
    assert repr(session) == f"heterps.InferenceSession({str(session.bundle.path)!r})"
    assert session.get_inputs.__doc__ and session.get_providers.__doc__


def test_session_cluster_given_second_is_refused(tmp_path):
    # The second argument is onnxruntime's sess_options: a cluster there
    # compiled for this machine without a word.
    with pytest.raises(TypeError, match=r"give a cluster by name"):
        heterps.InferenceSession(str(SHIPPED["mnist-mlp"].file),
                                 str(LOCAL_CPU), cache_dir=tmp_path)


def test_compile_error_carries_the_diagnostics(tmp_path):
    with pytest.raises(heterps.Error, match=r"<bytes>") as caught:
        heterps.compile(b"not an onnx model", cluster=str(LOCAL_CPU), cache_dir=tmp_path)
    assert "error" in str(caught.value)
    # Nothing half-built is left in the cache.
    assert not list((tmp_path / "bundles").glob("*"))


def test_compile_missing_file(tmp_path):
    with pytest.raises(heterps.Error, match=r"cannot read '.*missing.onnx'"):
        heterps.compile(str(tmp_path / "missing.onnx"), cluster=str(LOCAL_CPU), cache_dir=tmp_path)


def test_compile_bad_options(tmp_path):
    model = str(SHIPPED["mnist-mlp"].file)
    with pytest.raises(heterps.Error, match=r"--loss is only meaningful with --train"):
        heterps.compile(model, cluster=str(LOCAL_CPU), loss="bce", cache_dir=tmp_path)
    with pytest.raises(heterps.Error, match=r"strateg"):
        heterps.place(model, str(LOCAL_CPU), 1000, "fastest", cache_dir=tmp_path)
    with pytest.raises(TypeError, match=r"unknown compile option 'turbo'"):
        heterps.compile(model, cluster=str(LOCAL_CPU), turbo=True, cache_dir=tmp_path)


def test_bad_cluster_is_reported(tmp_path):
    with pytest.raises(heterps.Error, match=r"device_classes|device class"):
        heterps.place(str(SHIPPED["mnist-mlp"].file), {"name": "empty"}, cache_dir=tmp_path)


def test_bundle_that_is_not_one(tmp_path):
    with pytest.raises(heterps.Error, match=r"manifest.json"):
        heterps.Bundle(tmp_path)


def test_model_of_unknown_type(tmp_path):
    with pytest.raises(TypeError, match=r"model must be a path"):
        heterps.compile(42, cache_dir=tmp_path)


def test_compile_options_are_typed_and_named(tmp_path):
    """pybind11 and int() would coerce 3.5 to 3 and "no" to True, or fail
    without naming the option: every option is checked by its name."""
    model = str(SHIPPED["mnist-mlp"].file)
    cases = [
        (dict(batch=3.5), TypeError, r"batch must be an integer, got 3\.5"),
        (dict(batch="4"), TypeError, r"batch must be an integer"),
        (dict(batch=True), TypeError, r"batch must be an integer, got True"),
        (dict(batch=-1), ValueError, r"batch=-1 is outside \[0, "),
        (dict(throughput="1e3"), TypeError, r"throughput must be a number"),
        (dict(throughput=float("inf")), ValueError, r"throughput must be finite"),
        (dict(train="no"), TypeError, r"train must be True or False, got 'no'"),
        (dict(static_batch=2), TypeError, r"static_batch must be True or False"),
        (dict(seed=-1), ValueError, r"seed=-1 is outside \[0, "),
        (dict(episodes=2.5), TypeError, r"episodes must be an integer"),
        (dict(strategy=5), TypeError, r"strategy must be a string, got 5"),
        (dict(dims="N=4"), TypeError, r"dims must be a list of strings"),
        (dict(input_shapes=[4]), TypeError, r"input_shapes must be a list of strings"),
        (dict(learning_rate="0.1"), TypeError, r"learning_rate must be a number"),
        (dict(profile=123), TypeError, r"profile must be a path"),
        (dict(path=5), TypeError, r"path must be a path"),
        (dict(cache_dir=5), TypeError, r"cache_dir must be a path"),
        (dict(__class__=1), TypeError, r"unknown compile option '__class__'"),
        (dict(example_inputs=1), TypeError, r"example_inputs is for a torch.nn.Module"),
    ]
    for options, error, message in cases:
        options.setdefault("cache_dir", tmp_path)
        with pytest.raises(error, match=message):
            heterps.compile(model, cluster=str(LOCAL_CPU), **options)
    # What only training reads, without train=True: the compiler's error.
    with pytest.raises(heterps.Error, match=r"--optimizer needs --train"):
        heterps.place(model, str(LOCAL_CPU), 1000, "dp", optimizer="sgd", cache_dir=tmp_path)
    with pytest.raises(heterps.Error, match=r"dim 'N' is bound twice"):
        heterps.place(model, str(LOCAL_CPU), 1000, "dp", dims=["N=4", "N=8"], cache_dir=tmp_path)


def test_bundle_options_are_typed_and_named(compiled):
    bundle = compiled("mnist-mlp")
    for options, error, message in [
            (dict(threads=3.5), TypeError, r"threads must be an integer"),
            (dict(threads=True), TypeError, r"threads must be an integer"),
            (dict(frames_in_flight=2 ** 31), ValueError, r"frames_in_flight=2147483648 is outside"),
            # The runtime's bound, refused on opening rather than at the first run.
            (dict(frames_in_flight=65537), ValueError, r"frames_in_flight=65537 is outside \[0, 65537\)"),
            (dict(gpu_stages_on_cpu="no"), TypeError, r"gpu_stages_on_cpu must be True or False")]:
        with pytest.raises(error, match=message):
            heterps.Bundle(bundle.path, **options)


def test_cluster_dicts_and_files(tmp_path):
    """NumPy numbers are numbers; anything JSON cannot hold is named where
    it is; a file that is not UTF-8 is named."""
    spec = heterps.Cluster.local_cpu().spec
    spec["device_classes"][0]["count"] = np.int64(1)
    spec["device_classes"][0]["peak_gflops"] = np.float32(50)
    assert heterps.Cluster(spec).spec["device_classes"][0]["count"] == 1
    spec["device_classes"][0]["count"] = object()
    with pytest.raises(TypeError, match=r"cluster.device_classes\[0\].count must be a number"):
        heterps.Cluster(spec)
    with pytest.raises(TypeError, match=r"cluster: key 3 must be a string"):
        heterps.Cluster({3: "x"})
    (tmp_path / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    with pytest.raises(heterps.Error, match=r"cannot read cluster file '.*latin1.yaml': byte 9 is not UTF-8"):
        heterps.Cluster.load(tmp_path / "latin1.yaml")
    # A missing file is the compiler's error, as a missing model is.
    with pytest.raises(heterps.Error, match=r"cannot read cluster file '.*missing.yaml': No such file"):
        heterps.Cluster.load(tmp_path / "missing.yaml")
    with pytest.raises(heterps.Error, match=r"cannot read cluster file '.*missing.yaml'"):
        heterps.place(str(SHIPPED["mnist-mlp"].file), str(tmp_path / "missing.yaml"),
                      cache_dir=tmp_path)


def test_batched_inputs_that_disagree_are_both_named(tmp_path):
    pytest.importorskip("onnx", reason="the test model is built with onnx.helper")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 3]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = heterps.InferenceSession(model, batch=2, cache_dir=tmp_path)
    feeds = {"a": np.zeros((4, 3), np.float32), "b": np.zeros((3, 3), np.float32)}
    message = r"batched inputs disagree on the number of samples: 'a' holds 4, 'b' holds 3"
    with pytest.raises(ValueError, match=message):
        session.run(None, feeds)
    with pytest.raises(ValueError, match=message):
        session.bundle.run(feeds)


def test_a_model_that_mixes_samples_shows_its_batch(tmp_path):
    """An output that mixes the samples of a batch (a mean over it) runs
    the compiled batch only: the session's shapes give that number, not
    "batch", and the bundle says why; a model that keeps them apart takes
    any number."""
    pytest.importorskip("onnx", reason="the test model is built with onnx.helper")
    from onnx import TensorProto, helper

    def session(nodes, shape):
        graph = helper.make_graph(
            nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        return heterps.InferenceSession(model, batch=2, cache_dir=tmp_path)

    mixing = session([helper.make_node("ReduceMean", ["x"], ["y"], axes=[0])], [1, 4])
    assert mixing.get_inputs()[0].shape == [2, 4]
    assert "output 'y'" in mixing.bundle.mixes_samples
    # The number of samples is part of the shape: ValueError, as for any
    # other wrong shape (heterps.Error before 2026-12-02).
    with pytest.raises(ValueError, match=r"output 'y' mixes the samples of a batch .*"
                                         r"feed 2 samples, not 3"):
        mixing.run(None, {"x": np.zeros((3, 4), np.float32)})
    apart = session([helper.make_node("Relu", ["x"], ["y"])], ["N", 4])
    assert apart.get_inputs()[0].shape == ["batch", 4]
    assert apart.bundle.mixes_samples is None


def test_unknown_bundle_option_names_the_known_ones(compiled):
    """As compile() and train() do: Python's own TypeError for an
    unexpected keyword argument listed no options."""
    bundle = compiled("mnist-mlp")
    with pytest.raises(TypeError, match=r"unknown Bundle option 'bogus' \(the options: "
                                        r"frames_in_flight, gpu_stages_on_cpu, threads\)"):
        heterps.Bundle(bundle.path, bogus=1)


def test_session_empty_output_names_means_all(compiled, cache_dir):
    """onnxruntime runs every output for an empty output_names list, as
    for None; before 2026-12-01 this returned []."""
    compiled("mnist-mlp")
    session = heterps.InferenceSession(str(SHIPPED["mnist-mlp"].file), batch=0,
                                       cache_dir=cache_dir, **COMPILE)
    x = np.zeros(session.bundle.inputs[0].shape, np.float32)
    everything = session.run(None, {"image": x})
    for names in ([], ()):
        results = session.run(names, {"image": x})
        assert len(results) == len(everything) == len(session.get_outputs())
        for result, expected in zip(results, everything):
            np.testing.assert_array_equal(result, expected)


def test_non_utf8_paths_are_named(tmp_path):
    """A path whose name is not UTF-8 (legal on Linux) cannot reach the
    compiler or runtime: before 2026-12-01 pybind11 refused it as
    "incompatible function arguments", naming nothing, after clusters/
    was written into the cache directory."""
    import os

    model = str(SHIPPED["mnist-mlp"].file)
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")
    cache = tmp_path / "cache"
    for arguments, name in [(dict(model=odd, cache_dir=cache), "model"),
                            (dict(model=model, cache_dir=odd), "cache_dir"),
                            (dict(model=model, cache_dir=cache, path=odd), "path"),
                            (dict(model=model, cache_dir=cache, profile=odd), "profile")]:
        with pytest.raises(ValueError, match=rf"^{name} must be a UTF-8 path"):
            heterps.compile(cluster=heterps.Cluster.local_cpu(), **arguments)
    with pytest.raises(ValueError, match=r"^path must be a UTF-8 path"):
        heterps.Bundle(odd)
    assert list(tmp_path.iterdir()) == []


def test_messages_that_are_not_utf8_are_heterps_errors(tmp_path):
    """A diagnostic quoting bytes that are not UTF-8 (a node's name, a
    damaged manifest) raised UnicodeDecodeError, which the compile cache
    does not take for a broken entry: every compile of the model failed."""
    pytest.importorskip("onnx", reason="the test models are built with onnx.helper")
    from onnx import TensorProto, helper

    def relu(op="Relu", name="ZZZZ"):
        graph = helper.make_graph(
            [helper.make_node(op, ["x"], ["y"], name=name)], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        return model.SerializeToString()

    bad = relu("NoSuchOp").replace(b"ZZZZ", b"Z\xffZZ")
    with pytest.raises(heterps.Error, match=r"node 'Z\\xffZZ'"):
        heterps.compile(bad, batch=4, cache_dir=tmp_path)
    bundle = heterps.compile(relu(), batch=4, cache_dir=tmp_path)
    (bundle.path / "manifest.json").write_bytes(b'{"model": "\xff"}')
    with pytest.raises(heterps.Error, match="manifest.json is not valid JSON"):
        heterps.Bundle(bundle.path)
    again = heterps.compile(relu(), batch=4, cache_dir=tmp_path)
    assert not again.from_cache
    assert again.run({"x": -np.ones((4, 4), np.float32)})["y"].max() == 0


def test_a_fifo_is_not_read(tmp_path):
    """A model or cluster path naming a FIFO or a device is refused: opened,
    a FIFO blocked until a writer came (before 2026-12-02)."""
    import os

    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    with pytest.raises(heterps.Error, match=r"cannot read '.*model.onnx': not a regular file"):
        heterps.compile(str(fifo), cache_dir=tmp_path)
    with pytest.raises(heterps.Error, match=r"cannot read cluster file '.*model.onnx': "
                                            r"not a regular file"):
        heterps.Cluster.load(fifo)
    with pytest.raises(heterps.Error, match=r"cannot read '/dev/zero': not a regular file"):
        heterps.compile("/dev/zero", cache_dir=tmp_path)
