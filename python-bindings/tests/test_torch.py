"""Models from PyTorch, through torch.onnx."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import heterps


def test_torch_module_without_torch(tmp_path, monkeypatch):
    """A PyTorch module where torch is missing: a message saying what to
    install (the object stands in for a torch.nn.Module; a None entry in
    sys.modules makes `import torch` fail as if it were not installed)."""
    monkeypatch.setitem(sys.modules, "torch", None)
    Module = type("Module", (), {"__module__": "torch.nn.modules.module"})
    Linear = type("Linear", (Module,), {"__module__": "torch.nn.modules.linear"})
    with pytest.raises(ImportError, match=r"pip install torch"):
        heterps.compile(Linear(), cache_dir=tmp_path)
    # A tensor is not a module (before 2026-12-02 it was taken for one).
    Tensor = type("Tensor", (), {"__module__": "torch"})
    with pytest.raises(TypeError, match=r"model must be a path, ONNX bytes, an "
                                        r"onnx.ModelProto or a torch.nn.Module, not Tensor"):
        heterps.compile(Tensor(), cache_dir=tmp_path)


def test_torch_module(tmp_path):
    """A PyTorch module, exported through torch.onnx, gives torch's results."""
    torch = pytest.importorskip("torch", reason="the model is a PyTorch module")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).eval()
    x = torch.randn(2, 8)
    session = heterps.InferenceSession(module, example_inputs=x, cache_dir=tmp_path)
    [arg] = session.get_inputs()
    [ours] = session.run(None, {arg.name: x.numpy()})
    expected = module(x).detach().numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


def test_torch_module_trains(tmp_path):
    """A PyTorch module is exported with a symbolic batch, so its training
    bundle has batched outputs and trains from arrays."""
    torch = pytest.importorskip("torch", reason="the model is a PyTorch module")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    bundle = heterps.compile(module, example_inputs=torch.randn(32, 8), batch=32, train=True,
                             loss="mse", optimizer="adagrad", learning_rate=0.05,
                             cache_dir=tmp_path)
    [info] = [i for i in bundle.inputs if i.name != "label"]
    assert info.batched
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2048, 8)).astype(np.float32)
    y = (x @ rng.normal(size=(8, 1))).astype(np.float32)
    losses = [m["loss"] for m in bundle.train({info.name: x, "label": y}, steps=60, log_every=20)
              if m["kind"] == "train"]
    assert len(losses) == 3 and losses[-1] < losses[0]


def test_a_module_in_train_mode_is_exported_as_it_was(tmp_path):
    """A module in train mode is exported in eval mode, as torch.onnx
    exports it, from the state it had: the call updates no BatchNorm
    statistics, draws nothing from torch's generator and leaves every
    submodule's mode as it was."""
    torch = pytest.importorskip("torch", reason="the model is a PyTorch module")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3),
                                 torch.nn.Dropout(0.5), torch.nn.Sequential(torch.nn.Linear(3, 2)))
    module[1].running_mean.fill_(0.5)
    module[3].eval()
    x = torch.randn(8, 4)
    modes = [m.training for m in module.modules()]
    norm = {name: value.clone() for name, value in module[1].state_dict().items()}
    with torch.no_grad():
        expected = module.eval()(x).numpy()
    module.train()
    module[3].eval()
    generator = torch.get_rng_state()
    session = heterps.InferenceSession(module, example_inputs=x, batch=8, cache_dir=tmp_path)
    assert torch.equal(torch.get_rng_state(), generator)
    assert [m.training for m in module.modules()] == modes
    for name, value in module[1].state_dict().items():
        assert torch.equal(value, norm[name]), name
    [ours] = session.run(None, {"input_0": x.numpy()})
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


def test_example_inputs_as_a_list(tmp_path):
    """A list of example inputs is one tensor per positional input, as a tuple."""
    torch = pytest.importorskip("torch", reason="the model is a PyTorch module")

    class Add(torch.nn.Module):
        def forward(self, a, b):
            return a + 2 * b

    a, b = torch.ones(2, 3), torch.full((2, 3), 3.0)
    bundle = heterps.compile(Add(), example_inputs=[a, b], batch=2, cache_dir=tmp_path)
    assert [info.name for info in bundle.inputs] == ["input_0", "input_1"]
    [result] = bundle.run({"input_0": a.numpy(), "input_1": b.numpy()}).values()
    assert result.tolist() == [[7.0] * 3] * 2
    assert heterps.compile(Add(), example_inputs=(a, b), batch=2, cache_dir=tmp_path).from_cache


def test_a_list_argument_batches_every_tensor(tmp_path):
    """A module taking a list (`([a, b],)`) gets a named, batched input per
    tensor (before 2026-12-02 only the first: the second kept torch's name
    and ran only at the compiled batch)."""
    torch = pytest.importorskip("torch", reason="the model is a PyTorch module")

    class Product(torch.nn.Module):
        def forward(self, xs):
            return xs[0] * xs[1]

    a, b = torch.randn(4, 3), torch.randn(4, 3)
    bundle = heterps.compile(Product(), example_inputs=([a, b],), batch=4, cache_dir=tmp_path)
    assert [(info.name, info.batched) for info in bundle.inputs] == [
        ("input_0", True), ("input_1", True)]
    x, y = a[:2].numpy(), b[:2].numpy()
    [result] = bundle.run({"input_0": x, "input_1": y}).values()
    np.testing.assert_array_equal(result, x * y)


def test_a_module_that_fixes_its_batch_is_exported_as_it_is(tmp_path):
    """A module whose code fixes its batch (reshape(4, -1)) gets no
    symbolic batch: before 2026-12-02 it was exported with one, and 8
    samples gave (8, 3) where the module gives (4, 6)."""
    torch = pytest.importorskip("torch", reason="the model is a PyTorch module")

    class Fixed(torch.nn.Module):
        def forward(self, a):
            return a.reshape(4, -1)

    x = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    bundle = heterps.compile(Fixed(), example_inputs=x, cache_dir=tmp_path)
    [info] = bundle.inputs
    assert (info.shape, info.batched) == ((4, 3), False)
    [result] = bundle.run({"input_0": x.numpy()}).values()
    np.testing.assert_array_equal(result, x.numpy())
    with pytest.raises(ValueError, match=r"input 'input_0' must be f32 4x3"):
        bundle.run({"input_0": np.zeros((8, 3), np.float32)})
