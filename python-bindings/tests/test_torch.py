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
    Module = type("Linear", (), {"__module__": "torch.nn.modules.linear"})
    with pytest.raises(ImportError, match=r"pip install torch"):
        heterps.compile(Module(), cache_dir=tmp_path)


def test_torch_module(tmp_path):
    """A PyTorch module, exported through torch.onnx, gives torch's results."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).eval()
    x = torch.randn(2, 8)
    session = heterps.InferenceSession(module, example_inputs=x, cache_dir=tmp_path)
    [arg] = session.get_inputs()
    [ours] = session.run(None, {arg.name: x.numpy()})
    expected = module(x).detach().numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)
