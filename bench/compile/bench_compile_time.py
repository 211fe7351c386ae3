#!/usr/bin/env python3
"""Compile-time benchmark: `heterps compile` on unrolled recurrences.

RNN, LSTM and GRU are unrolled at import, so a long sequence makes a stage
of thousands of kernels and the stage's C++ build dominates compile time.
Exports `nn.LSTM(32, 64, num_layers=2, bidirectional=True)` + a linear
layer (PyTorch from PyPI, batch 2) at each --lengths, then times `heterps
compile --strategy cpu-only` (import to built bundle) --repeats times with
this build and, with --baseline, with another build's `heterps` (an older
commit built elsewhere). Reports the median wall time and the stage's
kernel count (manifest), and checks each bundle against onnxruntime.

Usage: bench_compile_time.py --build build [--baseline OLD/bin/heterps]
           [--lengths 16,64,256] [--repeats 3] [--out FILE.md]
"""
import argparse
import json
import os
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


def compile_once(heterps, model, bundle):
    start = time.monotonic()
    subprocess.run([heterps, "compile", model, "--cluster", CLUSTER,
                    "--throughput", "1", "--strategy", "cpu-only", "-o",
                    bundle], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    with open(os.path.join(bundle, "manifest.json")) as f:
        kernels = sum(s.get("kernels", 0) for s in json.load(f)["stages"])
    return seconds, kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--baseline", help="another build's heterps binary")
    parser.add_argument("--lengths", default="16,64,256")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    builds = [("this build", heterps)]
    if args.baseline:
        builds.append(("baseline", args.baseline))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for length in [int(n) for n in args.lengths.split(",")]:
            model = os.path.join(work, f"lstm_{length}.onnx")
            export_lstm(length, model)
            row = {"length": length}
            for label, binary in builds:
                times = []
                for r in range(args.repeats):
                    bundle = os.path.join(work, f"b_{length}_{r}")
                    seconds, row["kernels"] = compile_once(binary, model,
                                                           bundle)
                    times.append(seconds)
                row[label] = statistics.median(times)
                print(f"length {length} {label}: "
                      + ", ".join(f"{t:.1f}" for t in times) + " s",
                      flush=True)
            check = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts",
                                              "compare_with_ort.py"),
                 "--heterps", heterps, "--cluster", CLUSTER, "--strategy",
                 "cpu-only", model], capture_output=True, text=True)
            if check.returncode != 0:
                sys.exit(f"length {length}: output differs from onnxruntime:\n"
                         + check.stdout + check.stderr)
            rows.append(row)
    header = "| sequence length | kernels | this build (s) |"
    rule = "|---|---|---|"
    if args.baseline:
        header += " baseline (s) | speed-up |"
        rule += "---|---|"
    lines = [header, rule]
    for row in rows:
        line = f"| {row['length']} | {row['kernels']} | {row['this build']:.1f} |"
        if args.baseline:
            line += (f" {row['baseline']:.1f} |"
                     f" {row['baseline'] / row['this build']:.1f}x |")
        lines.append(line)
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
