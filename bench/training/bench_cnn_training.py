#!/usr/bin/env python3
"""Training throughput of ResNet-20 (CIFAR-10) on the CPU: HeterPS against
PyTorch.

The shipped ResNet-20 has a fixed batch of 1. HeterPS compiles it with
`--static-batch --batch B --train --loss softmax-ce --optimizer sgd` (all
stages on the CPU) and trains from .npy arrays with `heterps run --train`,
once with the default blocked layouts and once with `--native-layouts=false`;
the default bundle also runs with HETERPS_CPU_WINOGRAD=0 (oneDNN's
convolutions instead of Winograd's forward and dx).
PyTorch trains the same ONNX file converted by onnx2torch (its batch-1
Reshape made batch-generic as bench/inference does), with
CrossEntropyLoss on the logits and torch.optim.SGD at the same learning rate,
batch and thread count, on tensors held in memory. Inputs: normal images
(scaled by 0.5) and uniform labels. Each system trains `--steps` steps per
round after a warm-up; the table reports medians over `--rounds` and the
ratios to PyTorch.

Usage: bench_cnn_training.py --build build [--threads 2] [--batch 32]
       [--steps 20] [--rounds 3] [--out docs/benchmarks/cnn-training.md]
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.environ.get("MODELS") or os.path.join(PROJECT, "..", "shared", "models")
MODEL = os.path.join(MODELS, "cnn", "resnet20_cifar10_opset12.onnx")
sys.path.insert(0, os.path.join(PROJECT, "bench", "inference"))
from bench_inference import batch_variant, git_commit, machine_info  # noqa: E402


def sh(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def heterps_round(args, heterps, bundle, data, env=None):
    log = sh([heterps, "run", bundle, "--train", "--data-input",
              "input=" + data[0], "--data-input", "label=" + data[1],
              "--batch", str(args.batch), "--threads", str(args.threads),
              "--steps", str(args.steps), "--log-every", "1000000"], env)
    for line in log.splitlines():
        if line.startswith("done:"):
            # "done: N steps (...), S samples, T s, R samples/s"
            return float(line.split(",")[-1].split()[0])
    sys.exit("no summary line in:\n" + log)


def torch_round(args, model, images, labels):
    import torch
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    n = images.shape[0] // args.batch

    def step(i):
        k = i % n
        x = images[k * args.batch:(k + 1) * args.batch]
        y = labels[k * args.batch:(k + 1) * args.batch]
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()

    step(0)  # warm-up
    start = time.perf_counter()
    for i in range(args.steps):
        step(i + 1)
    return args.steps * args.batch / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--out")
    args = parser.parse_args()

    import onnx
    import torch
    from onnx2torch import convert
    torch.set_num_threads(args.threads)
    heterps = os.path.join(args.build, "bin", "heterps")
    work = tempfile.mkdtemp(prefix="hps-cnn-train-")
    rng = np.random.default_rng(0)
    rows = args.batch * 8
    images = (0.5 * rng.normal(size=(rows, 3, 32, 32))).astype(np.float32)
    labels = rng.integers(0, 10, rows).astype(np.int64)
    data = [os.path.join(work, "x.npy"), os.path.join(work, "y.npy")]
    np.save(data[0], images)
    np.save(data[1], labels)

    bundles = {}
    for name, extra in [("HeterPS", []), ("HeterPS, plain layouts", ["--native-layouts=false"])]:
        bundles[name] = os.path.join(work, "b%d" % len(bundles))
        sh([heterps, "compile", MODEL, "--cluster",
            os.path.join(PROJECT, "clusters", "local-cpu.yaml"), "--throughput", "1",
            "--strategy", "cpu-only", "--static-batch", "--batch", str(args.batch),
            "--train", "--loss", "softmax-ce", "--optimizer", "sgd",
            "--lr", str(args.lr), "-o", bundles[name]] + extra)
    variant = os.path.join(work, "variant.onnx")
    batch_variant(MODEL, variant)
    model = convert(onnx.load(variant))
    x, y = torch.from_numpy(images), torch.from_numpy(labels)

    # The default bundle once more with oneDNN's convolutions instead of
    # Winograd's (forward and dx of the 3x3 stride-1 layers).
    runs = [(name, bundle, None) for name, bundle in bundles.items()]
    runs.insert(1, ("HeterPS, HETERPS_CPU_WINOGRAD=0", bundles["HeterPS"],
                    dict(os.environ, HETERPS_CPU_WINOGRAD="0")))
    rates = {name: [] for name, _, _ in runs}
    rates["PyTorch"] = []
    for _ in range(args.rounds):
        for name, bundle, env in runs:
            rates[name].append(heterps_round(args, heterps, bundle, data, env))
        rates["PyTorch"].append(torch_round(args, model, x, y))
    medians = {name: statistics.median(v) for name, v in rates.items()}

    cpu, cores, flags = machine_info()
    lines = [
        "# ResNet-20 training on the CPU",
        "",
        "Produced by `python3 bench/training/bench_cnn_training.py %s` on %s at commit %s, "
        "PyTorch %s, on %s." % (
            " ".join(sys.argv[1:]), datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            git_commit(), torch.__version__, "%s (%d cores; %s)" % (cpu, cores, flags)),
        "",
        "Batch %d, %d threads, SGD at lr %g, softmax cross-entropy, %d steps per round "
        "after a warm-up, medians over %d rounds (see the script's docstring)." % (
            args.batch, args.threads, args.lr, args.steps, args.rounds),
        "",
        "| system | samples/s (median) | per round | ratio to PyTorch |",
        "|---|---|---|---|",
    ]
    for name, values in rates.items():
        lines.append("| %s | %.0f | %s | %.2f |" % (
            name, medians[name], ", ".join("%.0f" % v for v in values),
            medians[name] / medians["PyTorch"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
