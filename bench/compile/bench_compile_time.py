#!/usr/bin/env python3
"""Compile-time benchmark: `heterps compile` on recurrences.

Unrolled, RNN, LSTM and GRU make a stage of about fifteen kernels a step,
and the stage's C++ build dominates compile time; inference bundles run
them as one Recurrent kernel instead. Exports `nn.LSTM(32, 64,
num_layers=2, bidirectional=True)` + a linear layer (PyTorch from PyPI,
batch 2) at each --lengths, then times `heterps compile --strategy
cpu-only` (import to built bundle) --repeats times with this build, with
--unrolled also with this build's unrolled steps (`--recurrence-unroll-limit
1000000`), and with --baseline with another build's `heterps` (an older
commit built elsewhere). Reports the median wall time, the stage's kernel
count (manifest) and the median of `heterps run --repeat 200` of each
bundle, and checks each default bundle against onnxruntime.

With --generated the model is bench/generate_lstm_model.py's (one LSTM of
input 32, hidden 64, batch 2, + a Gemm; no PyTorch needed).

Usage: bench_compile_time.py --build build [--baseline OLD/bin/heterps]
           [--unrolled] [--generated] [--lengths 16,64,256] [--repeats 3]
           [--out FILE.md]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = os.path.join(ROOT, "clusters", "local-cpu.yaml")


def export_lstm(length, path):
    import warnings

    import torch
    # The TorchScript exporter's deprecation and batch-size notes.
    warnings.filterwarnings("ignore")

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(32, 64, num_layers=2,
                                      bidirectional=True, batch_first=True)
            self.head = torch.nn.Linear(128, 4)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(y)

    torch.manual_seed(0)
    torch.onnx.export(Model().eval(), (torch.randn(2, length, 32),), path,
                      dynamo=False, opset_version=13)


def generate_lstm(length, path):
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "bench", "generate_lstm_model.py"),
                    "--steps", str(length), "--batch", "2", "--input", "32",
                    "--hidden", "64", "-o", path],
                   check=True, stdout=subprocess.DEVNULL)


def compile_once(heterps, model, bundle, extra=()):
    start = time.monotonic()
    subprocess.run([heterps, "compile", model, "--cluster", CLUSTER,
                    "--throughput", "1", "--strategy", "cpu-only", "-o",
                    bundle, *extra], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    with open(os.path.join(bundle, "manifest.json")) as f:
        kernels = sum(s.get("kernels", 0) for s in json.load(f)["stages"])
    return seconds, kernels


def run_ms(heterps, bundle, work):
    """Median ms of `heterps run --repeat 200` on random inputs."""
    import numpy as np
    with open(os.path.join(bundle, "manifest.json")) as f:
        inputs = json.load(f)["inputs"]
    flags = []
    for spec in inputs:
        path = os.path.join(work, spec["name"].replace("/", "_") + ".npy")
        np.save(path, np.random.default_rng(0).uniform(
            -1, 1, spec["shape"]).astype(np.float32))
        flags += ["--input", f"{spec['name']}={path}"]
    out = subprocess.run([heterps, "run", bundle, *flags, "--output-dir",
                          os.path.join(work, "out"), "--repeat", "200"],
                         check=True, capture_output=True, text=True)
    median = re.search(r"median ([0-9.eE+-]+) s", out.stdout + out.stderr)
    return float(median.group(1)) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--baseline", help="another build's heterps binary")
    parser.add_argument("--generated", action="store_true",
                        help="generate_lstm_model.py's LSTM, not PyTorch's")
    parser.add_argument("--unrolled", action="store_true",
                        help="also this build with the unrolled steps")
    parser.add_argument("--lengths", default="16,64,256")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    builds = [("this build", heterps, ())]
    if args.unrolled:
        builds.append(("unrolled", heterps,
                       ("--recurrence-unroll-limit", "1000000")))
    if args.baseline:
        builds.append(("baseline", args.baseline, ()))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for length in [int(n) for n in args.lengths.split(",")]:
            model = os.path.join(work, f"lstm_{length}.onnx")
            (generate_lstm if args.generated else export_lstm)(length, model)
            row = {"length": length}
            for label, binary, extra in builds:
                times = []
                for r in range(args.repeats):
                    bundle = os.path.join(work, f"b_{length}_{label}_{r}")
                    seconds, row[label + " kernels"] = compile_once(
                        binary, model, bundle, extra)
                    times.append(seconds)
                row[label] = statistics.median(times)
                row[label + " run"] = run_ms(binary, bundle, work)
                print(f"length {length} {label}: "
                      + ", ".join(f"{t:.1f}" for t in times) + " s, run "
                      f"{row[label + ' run']:.3f} ms", flush=True)
            check = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts",
                                              "compare_with_ort.py"),
                 "--heterps", heterps, "--cluster", CLUSTER, "--strategy",
                 "cpu-only", model], capture_output=True, text=True)
            if check.returncode != 0:
                sys.exit(f"length {length}: output differs from onnxruntime:\n"
                         + check.stdout + check.stderr)
            rows.append(row)
    header = "| sequence length |"
    rule = "|---|"
    for label, _, _ in builds:
        header += f" {label}: kernels | compile (s) | run (ms) |"
        rule += "---|---|---|"
    for label, _, _ in builds[1:]:
        header += f" {label} / this build: compile | run |"
        rule += "---|---|"
    lines = [header, rule]
    for row in rows:
        line = f"| {row['length']} |"
        for label, _, _ in builds:
            line += (f" {row[label + ' kernels']} | {row[label]:.1f} |"
                     f" {row[label + ' run']:.3f} |")
        for label, _, _ in builds[1:]:
            line += (f" {row[label] / row['this build']:.1f}x |"
                     f" {row[label + ' run'] / row['this build run']:.2f}x |")
        lines.append(line)
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
