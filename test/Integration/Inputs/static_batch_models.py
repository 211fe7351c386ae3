#!/usr/bin/env python3
"""Shipped models with a fixed batch of 1, compiled with --static-batch at
batch B, against onnxruntime running the original model one sample at a time.

  static_batch_models.py HETERPS_BIN PROJECT OUT_DIR BATCH MODEL...

For every MODEL: random inputs of B samples (floats in [-1, 1), integer ids
in [0, 50)), `heterps compile MODEL --static-batch --batch B` and `heterps
run`, every output of B samples against the B batch-1 onnxruntime results
stacked. Prints one `ok MODEL max-error E` or `FAIL MODEL: why` line per
model; exits 1 if any failed.
"""
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort


def check(heterps, project, out, batch, model):
    name = os.path.splitext(os.path.basename(model))[0]
    work = os.path.join(out, name)
    os.makedirs(work, exist_ok=True)
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds, args = {}, []
    for k, spec in enumerate(session.get_inputs()):
        shape = [batch] + [d if isinstance(d, int) else 1 for d in spec.shape[1:]]
        if "int" in spec.type:
            dtype = np.int64 if "int64" in spec.type else np.int32
            value = rng.integers(0, 50, shape).astype(dtype)
        else:
            value = rng.uniform(-1, 1, shape).astype(np.float32)
        feeds[spec.name] = value
        path = os.path.join(work, "in%d.npy" % k)
        np.save(path, value)
        args += ["--input", "%s=%s" % (spec.name, path)]
    bundle, outputs = os.path.join(work, "bundle"), os.path.join(work, "out")
    steps = [[os.path.join(heterps, "heterps"), "compile", model, "--cluster",
              os.path.join(project, "clusters", "local-cpu.yaml"), "--throughput",
              "1", "--strategy", "cpu-only", "--static-batch", "--batch",
              str(batch), "-o", bundle],
             [os.path.join(heterps, "heterps"), "run", bundle, "--output-dir",
              outputs] + args]
    for command in steps:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            return "FAIL %s: %s" % (name, done.stderr.strip().splitlines()[-1])
    worst = 0.0
    for k, spec in enumerate(session.get_outputs()):
        expected = np.concatenate([
            session.run(None, {n: v[i:i + 1] for n, v in feeds.items()})[k]
            for i in range(batch)])
        path = os.path.join(outputs, spec.name.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            return "FAIL %s: no output %s" % (name, path)
        actual = np.load(path)
        if actual.shape != expected.shape:
            return "FAIL %s: output %s has shape %s, expected %s" % (
                name, spec.name, actual.shape, expected.shape)
        error = float(np.max(np.abs(actual.astype(np.float64) - expected)))
        scale = max(1.0, float(np.max(np.abs(expected))))
        if not error <= 1e-4 * scale:
            return "FAIL %s: output %s differs by %g" % (name, spec.name, error)
        worst = max(worst, error)
    return "ok %s max-error %.3g" % (name, worst)


def main():
    heterps, project, out, batch = sys.argv[1:5]
    lines = [check(heterps, project, out, int(batch), m) for m in sys.argv[5:]]
    print("\n".join(lines))
    return 1 if any(line.startswith("FAIL") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
