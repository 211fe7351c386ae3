"""Fixtures: the shipped models (../shared/models, read in place), compiled
once per test session into a session-wide compile cache."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Dict

import numpy as np
import pytest

import heterps

ROOT = Path(__file__).resolve().parents[2]
# The shipped models, by their path relative to the project root.
MODELS = ROOT / ".." / "shared" / "models"
LOCAL_CPU = ROOT / "clusters" / "local-cpu.yaml"
PAPER = ROOT / "clusters" / "paper.yaml"


@dataclasses.dataclass(frozen=True)
class Model:
    path: str  # under MODELS
    batch: int = 0  # --batch; 0: the model's own
    samples: int = 0  # samples per run for a batched input (0: batch)
    max_id: int = 50  # integer inputs are drawn from [0, max_id)

    @property
    def file(self) -> Path:
        return MODELS / self.path


SHIPPED = {
    "mnist-8": Model("cnn/mnist-8.onnx"),
    "mnist-mlp": Model("mlp/mnist_mlp_onnxmlir_opset13.onnx"),
    "resnet20": Model("cnn/resnet20_cifar10_opset12.onnx"),
    "ncf": Model("recsys/ncf_neumf_movielens1m_opset7.onnx"),
    "squeezenet": Model("structure_only/light_squeezenet.onnx"),
    "transformer": Model("transformer/self_attention_block_ezkl_opset10.onnx",
                         batch=4, samples=9),
}

# How the tests compile: the same for both surfaces, so the second opens
# the first one's bundle from the cache.
COMPILE = dict(cluster=str(LOCAL_CPU), throughput=1000, strategy="dp")


def require_models() -> None:
    if not MODELS.is_dir():
        pytest.skip(f"the shipped models are not at {MODELS}")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("heterps-cache")


@pytest.fixture(scope="session")
def compiled(cache_dir):
    """compiled(name) -> the Bundle of a shipped model, compiled once."""
    bundles: Dict[str, heterps.Bundle] = {}

    def get(name: str) -> heterps.Bundle:
        require_models()
        if name not in bundles:
            model = SHIPPED[name]
            bundles[name] = heterps.compile(str(model.file), batch=model.batch,
                                            cache_dir=cache_dir, **COMPILE)
        return bundles[name]

    return get


def random_feeds(model: Model, inputs, seed: int = 0) -> Dict[str, np.ndarray]:
    """Random arrays for `inputs` (TensorInfo): floats in [-1, 1), ids in
    [0, max_id); a batched input gets model.samples samples."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in inputs:
        shape = list(info.shape)
        if info.batched and model.samples:
            shape[0] = model.samples
        if np.issubdtype(info.dtype, np.floating):
            feeds[info.name] = rng.uniform(-1, 1, shape).astype(info.dtype)
        elif info.dtype == np.bool_:
            feeds[info.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            feeds[info.name] = rng.integers(0, model.max_id, shape).astype(info.dtype)
    return feeds


def reference(model: Model, feeds: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """onnxruntime's outputs, by name; ONNX's reference evaluator for the
    models onnxruntime refuses (the transformer block's float Equal)."""
    ort = pytest.importorskip("onnxruntime")
    try:
        session = ort.InferenceSession(str(model.file), providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(None, feeds)))
    except Exception as error:  # onnxruntime's own loader errors
        if "INVALID_GRAPH" not in str(error):
            raise
        onnx = pytest.importorskip("onnx")
        from onnx.reference import ReferenceEvaluator

        evaluator = ReferenceEvaluator(onnx.load(str(model.file)))
        return dict(zip(evaluator.output_names, evaluator.run(None, feeds)))


def assert_close(ours: np.ndarray, expected: np.ndarray, name: str, rtol: float = 1e-4) -> None:
    """max|ours - expected| <= rtol * max(1, max|expected|), as
    scripts/compare_with_ort.py checks."""
    expected = np.asarray(expected)
    assert ours.shape == expected.shape, f"{name}: shape {ours.shape} != {expected.shape}"
    assert ours.dtype == expected.dtype, f"{name}: dtype {ours.dtype} != {expected.dtype}"
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=rtol * scale, err_msg=name)
