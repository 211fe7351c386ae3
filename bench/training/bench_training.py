#!/usr/bin/env python3
"""Training throughput of a generated CTR model: HeterPS against PyTorch.

The same Wide & Deep CTR model (bench/generate_ctr_model.py --layout
criteo) is trained on the same synthetic Criteo data (`heterps datagen`)
with the same optimizer (Adagrad), batch and thread count:
- HeterPS: `heterps compile --train` (all stages on the CPU) and
  `heterps run --train`; its samples/s include reading the TSV file.
- PyTorch (CPU): nn.Embedding(sparse=True) tables, the same MLP,
  BCEWithLogitsLoss and torch.optim.Adagrad on tensors parsed beforehand
  (its samples/s exclude reading the data).
Each system trains `--steps` steps per round; the table reports medians
over `--rounds` and the ratio HeterPS / PyTorch.

Usage: bench_training.py --build build [--threads 2] [--batch 256]
       [--steps 400] [--rounds 3] [--out docs/benchmarks/training.md]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
FIELDS, DENSE = 26, 13


def sh(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def read_criteo(path, buckets, rows):
    """The reader's transform (runtime/data/CriteoReader.cpp): log(1 + x)
    for positive dense values, 0 for missing; a present categorical hash h
    becomes 1 + h % (buckets - 1), missing becomes 0."""
    labels = np.zeros(rows, np.float32)
    dense = np.zeros((rows, DENSE), np.float32)
    sparse = np.zeros((rows, FIELDS), np.int64)
    with open(path) as f:
        for i, line in enumerate(f):
            if i == rows:
                break
            parts = line.rstrip("\n").split("\t")
            labels[i] = float(parts[0])
            for j in range(DENSE):
                text = parts[1 + j]
                if text:
                    x = float(text)
                    dense[i, j] = np.log1p(x) if x > 0 else x
            for j in range(FIELDS):
                text = parts[1 + DENSE + j]
                if text:
                    sparse[i, j] = 1 + int(text, 16) % (buckets - 1)
    return labels, dense, sparse


def model_and_data(args, heterps, work, rows):
    """The Wide & Deep model of --hidden/--dim/--buckets and `rows` rows of
    synthetic Criteo data, written into `work`; returns both paths."""
    model = os.path.join(work, "ctr.onnx")
    sh([sys.executable, os.path.join(PROJECT, "bench", "generate_ctr_model.py"), "--layout",
        "criteo", "--hidden", args.hidden, "--dim", str(args.dim), "--buckets",
        str(args.buckets), "-o", model])
    data_file = os.path.join(work, "train.tsv")
    sh([heterps, "datagen", "ctr", "--rows", str(rows), "--seed", "1", "-o", data_file])
    return model, data_file


def torch_round(args, data, hidden, device="cpu"):
    """PyTorch's samples/s and final loss; on "cuda" the data is on the GPU
    before the clock starts and the clock stops after a synchronize."""
    import torch
    from torch import nn

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    labels, dense, sparse = (torch.from_numpy(a).to(device) for a in data)
    sparse = sparse + torch.arange(FIELDS, dtype=torch.int64, device=device) * args.buckets
    rows = FIELDS * args.buckets

    class WideDeep(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Embedding(rows, args.dim, sparse=True)
            nn.init.uniform_(self.table.weight, -0.01, 0.01)
            self.wide = nn.Embedding(rows, 1, sparse=True)
            nn.init.zeros_(self.wide.weight)
            self.wide_dense = nn.Linear(DENSE, 1, bias=False)
            nn.init.zeros_(self.wide_dense.weight)
            layers, width = [], FIELDS * args.dim + DENSE
            for out in hidden:
                layers += [nn.Linear(width, out), nn.ReLU()]
                width = out
            layers.append(nn.Linear(width, 1))
            self.deep = nn.Sequential(*layers)

        def forward(self, d, s):
            embedded = self.table(s).reshape(s.shape[0], -1)
            deep = self.deep(torch.cat([embedded, d], dim=1))
            wide = self.wide(s).sum(dim=1) + self.wide_dense(d)
            return deep + wide

    model = WideDeep().to(device)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=args.lr, initial_accumulator_value=0.1,
                                    eps=1e-8)
    loss_fn = nn.BCEWithLogitsLoss()
    n = labels.shape[0]
    losses = []
    start = time.perf_counter()
    for step in range(args.steps):
        lo = (step * args.batch) % (n - args.batch + 1)
        hi = lo + args.batch
        optimizer.zero_grad()
        loss = loss_fn(model(dense[lo:hi], sparse[lo:hi]).squeeze(1), labels[lo:hi])
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    losses = [float(x) for x in losses]  # synchronizes with the device
    seconds = time.perf_counter() - start
    return args.steps * args.batch / seconds, float(np.mean(losses[-50:]))


def heterps_round(args, heterps, bundle, data_file):
    text = sh([heterps, "run", bundle, "--train", "--data", data_file, "--steps", str(args.steps),
               "--batch", str(args.batch), "--threads", str(args.threads), "--log-every",
               str(args.steps), "--hash-buckets", str(args.buckets)])
    rate = float(re.search(r"done: .*?([0-9.e+]+) samples/s", text).group(1))
    loss = float(re.search(r"train loss ([0-9.]+)", text).group(1))
    return rate, loss


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(PROJECT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hidden", default="256,128")
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--buckets", type=int, default=10000)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", help="write the markdown table here too")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    hidden = [int(w) for w in args.hidden.split(",") if w]
    rows = args.steps * args.batch
    with tempfile.TemporaryDirectory(prefix="hps-bench-train-") as work:
        model, data_file = model_and_data(args, heterps, work, rows)
        bundle = os.path.join(work, "ctr.bundle")
        sh([heterps, "compile", model, "--cluster", os.path.join(PROJECT, "clusters", "local-cpu.yaml"),
            "--throughput", "1", "--strategy", "cpu-only", "--train", "--loss", "bce", "--optimizer",
            "adagrad", "--lr", str(args.lr), "--batch", str(args.batch), "-o", bundle])
        data = read_criteo(data_file, args.buckets, rows)
        ours, theirs, our_loss, their_loss = [], [], [], []
        for _ in range(args.rounds):  # interleaved, so both see the same noise
            rate, loss = heterps_round(args, heterps, bundle, data_file)
            ours.append(rate)
            our_loss.append(loss)
            rate, loss = torch_round(args, data, hidden)
            theirs.append(rate)
            their_loss.append(loss)
    import torch
    a, b = statistics.median(ours), statistics.median(theirs)
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}, Adagrad lr {args.lr}; batch {args.batch}, {args.threads} threads, "
        f"{args.steps} steps per round, median of {args.rounds} rounds; PyTorch {torch.__version__}.",
        "",
        "| system | samples/s | final train loss |",
        "|---|---|---|",
        f"| HeterPS (heterps run --train, CPU stages, PS in process) | {a:,.0f} | {statistics.median(our_loss):.4f} |",
        f"| PyTorch (CPU, sparse embeddings, Adagrad) | {b:,.0f} | {statistics.median(their_loss):.4f} |",
        f"| **ratio HeterPS / PyTorch** | **{a / b:.2f}** | |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# Training throughput: HeterPS vs PyTorch (CPU)\n\n")
            f.write("Reproduce: `python3 bench/training/bench_training.py --build build "
                    f"--threads {args.threads} --batch {args.batch} --steps {args.steps} "
                    f"--rounds {args.rounds} --out docs/benchmarks/training.md`\n\n")
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
