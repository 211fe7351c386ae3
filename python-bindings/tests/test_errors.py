"""Bad inputs and failures raise the documented exceptions."""

from __future__ import annotations

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
