#!/usr/bin/env python3
"""Exports PyTorch models with control flow to ONNX, compiles and runs
them with heterps and compares with onnxruntime (rtol 1e-4):
- a TorchScript loop over time steps (Loop, its trip count read from the
  input's shape) with an `if` on the step number inside (an If whose
  condition is constant only once the loop is unrolled);
- a TorchScript loop appending each step's state to a list and stacking
  it (a sequence carried through the Loop, ConcatFromSequence);
- a TorchScript while loop over a counter, then torch.split and a list
  comprehension (SplitToSequence, SequenceLength driving a Loop that
  appends);
- torch.cond through torch.onnx's default (dynamo) exporter: an If on a
  condition computed from the data, both ways.

Usage: torch_control_flow.py BIN_DIR CLUSTER
"""
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnxruntime
import torch

warnings.filterwarnings("ignore")


class StepLoop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = torch.zeros_like(x[:, 0])
        for t in range(x.shape[1]):
            if t % 2 == 0:
                h = torch.tanh(self.cell(h) + x[:, t])
            else:
                h = h * 0.5 + x[:, t]
        return h


class ListLoop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = torch.zeros_like(x[:, 0])
        outs = []
        for t in range(x.shape[1]):
            h = torch.tanh(self.cell(h) + x[:, t])
            outs.append(h)
        return torch.stack(outs, 1)


class WhileSplit(torch.nn.Module):
    def forward(self, x):
        i = 0
        while i < 3:
            x = x * 2 - 1
            i += 1
        parts = torch.split(x, 2, dim=1)
        return torch.cat([p.relu() for p in parts], 1)


class Cond(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda v: self.a(v).relu(),
                          lambda v: self.b(v).sigmoid(), (x,))


def check(heterps, cluster, work, name, path, x):
    bundle, out = os.path.join(work, name + ".bundle"), os.path.join(work, name + ".out")
    x_path = os.path.join(work, name + ".x.npy")
    np.save(x_path, x)
    for args in (["compile", path, "--cluster", cluster, "--throughput", "1",
                  "--strategy", "cpu-only", "-o", bundle],
                 ["run", bundle, "--input", f"x={x_path}", "--output-dir", out]):
        step = subprocess.run([heterps] + args, capture_output=True, text=True)
        if step.returncode != 0:
            return f"{name}: FAIL ({args[0]}) {step.stderr.strip()}"
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})[0]
    ours = np.load(os.path.join(out, os.listdir(out)[0]))
    error = float(np.max(np.abs(ours - expected)))
    ok = ours.shape == expected.shape and error <= 1e-4 * max(1.0, float(np.max(np.abs(expected))))
    return f"{name}: {'ok' if ok else 'FAIL'} (max error {error:.2g})"


def main():
    heterps, cluster = os.path.join(sys.argv[1], "heterps"), sys.argv[2]
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as work:
        lines = []
        path = os.path.join(work, "step_loop.onnx")
        x = rng.standard_normal((2, 5, 8)).astype(np.float32)
        torch.onnx.export(torch.jit.script(StepLoop()), (torch.from_numpy(x),), path,
                          dynamo=False, opset_version=17, input_names=["x"])
        lines.append(check(heterps, cluster, work, "torchscript_loop_with_if", path, x))
        path = os.path.join(work, "list_loop.onnx")
        torch.onnx.export(torch.jit.script(ListLoop()), (torch.from_numpy(x),), path,
                          dynamo=False, opset_version=17, input_names=["x"])
        lines.append(check(heterps, cluster, work, "torchscript_list_append", path, x))
        path = os.path.join(work, "while_split.onnx")
        x = rng.standard_normal((2, 6)).astype(np.float32)
        torch.onnx.export(torch.jit.script(WhileSplit()), (torch.from_numpy(x),), path,
                          dynamo=False, opset_version=17, input_names=["x"])
        lines.append(check(heterps, cluster, work, "torchscript_while_split", path, x))
        path = os.path.join(work, "cond.onnx")
        x = rng.standard_normal((2, 8)).astype(np.float32)
        torch.onnx.export(Cond(), (torch.from_numpy(x),), path, dynamo=True, input_names=["x"])
        for sign, label in [(1, "then"), (-1, "else")]:
            v = (np.abs(x) * sign).astype(np.float32)
            lines.append(check(heterps, cluster, work, f"torch_cond_{label}", path, v))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
