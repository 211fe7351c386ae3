"""The shipped models through both surfaces, against onnxruntime."""

from __future__ import annotations

import glob

import numpy as np
import pytest

import heterps
from conftest import COMPILE, SHIPPED, assert_close, random_feeds, reference


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_bundle_matches_onnxruntime(name, compiled):
    model = SHIPPED[name]
    bundle = compiled(name)
    feeds = random_feeds(model, bundle.inputs)
    before = {name: value.copy() for name, value in feeds.items()}
    outputs = bundle.run(feeds)
    assert list(outputs) == [info.name for info in bundle.outputs]
    # Inputs are read in place, never written.
    for input_name, value in feeds.items():
        np.testing.assert_array_equal(value, before[input_name])
    expected = reference(model, feeds)
    assert set(expected) == set(outputs)
    for output, value in outputs.items():
        assert_close(value, expected[output], f"{name}:{output}")


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_inference_session_matches_onnxruntime(name, compiled, cache_dir):
    model = SHIPPED[name]
    compiled(name)  # the bundle the session must find in the cache
    session = heterps.InferenceSession(str(model.file), batch=model.batch,
                                       cache_dir=cache_dir, **COMPILE)
    assert session.bundle.from_cache
    inputs = session.get_inputs()
    assert [i.name for i in inputs] == [i.name for i in session.bundle.inputs]
    for arg, info in zip(inputs, session.bundle.inputs):
        assert arg.type.startswith("tensor(")
        assert len(arg.shape) == len(info.shape)
    feeds = random_feeds(model, session.bundle.inputs, seed=1)
    expected = reference(model, feeds)
    names = [o.name for o in session.get_outputs()]
    results = session.run(None, feeds)
    assert len(results) == len(names)
    for output, value in zip(names, results):
        assert_close(value, expected[output], f"{name}:{output}")
    # Named outputs come back in the order asked for.
    reordered = session.run(list(reversed(names)), feeds)
    for output, value in zip(reversed(names), reordered):
        assert_close(value, expected[output], f"{name}:{output}")


def test_mnist8_reference_data(compiled):
    """ONNX's own reference input/output pairs of mnist-8."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    bundle = compiled("mnist-8")
    sets = sorted(glob.glob(str(SHIPPED["mnist-8"].file.parent / "mnist-8_test_data" / "test_data_set_*")))
    assert sets
    for directory in sets:
        def load(file):
            tensor = onnx.TensorProto()
            with open(f"{directory}/{file}", "rb") as stream:
                tensor.ParseFromString(stream.read())
            return numpy_helper.to_array(tensor)

        [output] = bundle.run({bundle.inputs[0].name: load("input_0.pb")}).values()
        assert_close(output, load("output_0.pb"), directory, rtol=1e-3)


def test_batched_input_takes_any_number_of_samples(compiled):
    """The transformer block compiled at batch 4 runs 9 samples (3 micro-
    batches, the last padded) and 1, sample for sample the same."""
    bundle = compiled("transformer")
    [info] = bundle.inputs
    assert info.batched and info.shape[0] == 4 and bundle.batch == 4
    feeds = random_feeds(SHIPPED["transformer"], bundle.inputs, seed=2)
    [nine] = bundle.run(feeds).values()
    [one] = bundle.run({info.name: feeds[info.name][4:5]}).values()
    assert nine.shape[0] == 9 and one.shape[0] == 1
    np.testing.assert_array_equal(one[0], nine[4])


def test_arrays_in_and_out(compiled):
    """Any strides in; outputs are fresh arrays over the runtime's buffers."""
    bundle = compiled("mnist-mlp")
    [info] = bundle.inputs
    x = np.random.default_rng(3).uniform(0, 1, info.shape).astype(np.float32)
    [dense] = bundle.run({info.name: x}).values()
    strided = np.asfortranarray(x)
    assert not strided.flags.c_contiguous
    [again] = bundle.run({info.name: strided}).values()
    np.testing.assert_array_equal(dense, again)
    # A C-ordered array at an offset the runtime's buffers never have is
    # copied; the result is the same.
    raw = np.zeros(x.size + 1, np.float32)
    shifted = raw[1:].reshape(x.shape)
    shifted[...] = x
    assert shifted.flags.c_contiguous and shifted.ctypes.data % 16 != 0
    [moved] = bundle.run({info.name: shifted}).values()
    np.testing.assert_array_equal(dense, moved)
    # Not a copy out of a NumPy-owned buffer: the array views the runtime's.
    assert not dense.flags.owndata and dense.base is not None
    dense[...] = 0  # writable, and no other result shares it
    assert np.any(again != 0)


def test_runs_from_threads(compiled):
    """Calls from several threads (the GIL is released while stages run)
    each get their own results."""
    from concurrent.futures import ThreadPoolExecutor

    bundle = compiled("mnist-mlp")
    [info] = bundle.inputs
    rng = np.random.default_rng(4)
    xs = [rng.uniform(0, 1, info.shape).astype(np.float32) for _ in range(6)]
    alone = [bundle.run({info.name: x})[bundle.outputs[0].name] for x in xs]
    with ThreadPoolExecutor(3) as pool:
        together = list(pool.map(lambda x: bundle.run({info.name: x})[bundle.outputs[0].name], xs))
    for a, b in zip(alone, together):
        np.testing.assert_array_equal(a, b)


def test_a_forked_child_runs_after_its_parent_did(compiled):
    """A process forked after a run (a multiprocessing or DataLoader worker)
    runs bundles too: before 2026-12-02 the parent's main thread had run
    the stages' creation kernels, whose OpenMP team the child lacks, and
    the child's first run waited for it forever."""
    import os
    import signal

    bundle = compiled("mnist-8")
    [info] = bundle.inputs
    x = np.random.default_rng(5).uniform(0, 1, info.shape).astype(np.float32)
    expected = bundle.run({info.name: x})[bundle.outputs[0].name]
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only for the parent's result
        status = 1
        try:
            signal.alarm(120)  # a hang ends the child, not the test run
            # A bundle opened here, and the parent's (its stage threads
            # stayed in the parent: new ones are made here).
            again = heterps.Bundle(bundle.path).run({info.name: x})
            inherited = bundle.run({info.name: x})
            name = bundle.outputs[0].name
            status = 0 if (np.array_equal(again[name], expected) and
                           np.array_equal(inherited[name], expected)) else 2
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert not os.WIFSIGNALED(status), f"the child died of signal {os.WTERMSIG(status)}"
    assert os.WEXITSTATUS(status) == 0, "the child's run gave another result"


def test_bf16_arrays_are_ml_dtypes(tmp_path):
    """bf16 inputs and outputs are ml_dtypes.bfloat16 arrays (before
    2026-12-02 a bf16 model could not be run from Python)."""
    ml_dtypes = pytest.importorskip(
        "ml_dtypes", reason="bf16 arrays are ml_dtypes.bfloat16 (onnx installs it)")
    pytest.importorskip("onnx", reason="the test model is built with onnx.helper")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, ["N", 5])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, ["N", 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    bundle = heterps.compile(model, batch=2, strategy="dp", cache_dir=tmp_path)
    assert bundle.inputs[0].dtype == np.dtype(ml_dtypes.bfloat16)
    x = np.arange(-3.5, 3.5, 0.5, dtype=np.float32).reshape(7, 2)[:, :1] * np.ones(5, np.float32)
    y = bundle.run({"x": x.astype(ml_dtypes.bfloat16)})["y"]
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.astype(np.float32), 2 * x)  # exact in bf16
    with pytest.raises(ValueError, match=r"input 'x' must have dtype bfloat16"):
        bundle.run({"x": x})


def test_no_samples_still_compute_outputs_without_a_batch(tmp_path):
    """A run on 0 samples gives an output without a batch its value, as
    onnxruntime does (before 2026-12-02 it came back zero-filled)."""
    pytest.importorskip("onnx", reason="the test model is built with onnx.helper")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]),
         helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 6
    bundle = heterps.compile(model, batch=2, strategy="dp", cache_dir=tmp_path)
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    outputs = bundle.run({"x": np.zeros((0, 4), np.float32), "w": w})
    assert outputs["y"].shape == (0, 3)
    assert outputs["s"] == w.sum()


def test_per_sample_models_take_any_number_of_samples(tmp_path):
    """A matrix times a vector and a ConvTranspose keep each sample apart:
    7 samples at a compiled batch of 3 match onnxruntime (before
    2026-12-02 both were taken to mix the samples and refused 7)."""
    pytest.importorskip("onnx", reason="the test models are built with onnx.helper")
    ort = pytest.importorskip("onnxruntime", reason="the reference is onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    info = helper.make_tensor_value_info
    graphs = [
        (helper.make_graph(
            [helper.make_node("MatMul", ["X", "v"], ["Y"])], "matvec",
            [info("X", TensorProto.FLOAT, ["N", 6])], [info("Y", TensorProto.FLOAT, ["N"])],
            [numpy_helper.from_array(rng.normal(size=6).astype(np.float32), "v")]), (7, 6)),
        (helper.make_graph(
            [helper.make_node("ConvTranspose", ["X", "w"], ["Y"], strides=[2, 2],
                              pads=[1, 1, 1, 1], output_padding=[1, 1])], "convT",
            [info("X", TensorProto.FLOAT, ["N", 2, 4, 4])],
            [info("Y", TensorProto.FLOAT, ["N", 3, 8, 8])],
            [numpy_helper.from_array(rng.normal(size=(2, 3, 3, 3)).astype(np.float32), "w")]),
         (7, 2, 4, 4)),
    ]
    for graph, shape in graphs:
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        bundle = heterps.compile(model, batch=3, strategy="dp", cache_dir=tmp_path)
        assert bundle.mixes_samples is None, graph.name
        x = rng.normal(size=shape).astype(np.float32)
        expected = ort.InferenceSession(model.SerializeToString()).run(None, {"X": x})[0]
        np.testing.assert_allclose(bundle.run({"X": x})["Y"], expected, rtol=1e-5, atol=1e-5)
