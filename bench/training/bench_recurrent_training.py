#!/usr/bin/env python3
"""Training an RNN through the recurrence kernel against the unrolled steps.

A batch-first LSTM or GRU classifier (test/Integration/Inputs/
sequence_classification.py: one recurrent layer, last state, Gemm, Softmax)
is compiled twice with `heterps compile --train --loss softmax-ce --optimizer
adam`: by default (one hps.recurrence and its adjoint, the RecurrentGrad
kernel) and with `--recurrence-unroll-limit` past the length (per-step gemms
and gates, whose adjoints are the ordinary rules). Both train the same data
with `heterps run --train`; rounds alternate between the two bundles. The
table gives compile wall time and the median samples/s over the rounds, and
the ratio kernel / unrolled. (PyTorch is the peer for training throughput in
bench_training.py; it is not installed on the machine these figures come
from.)

Usage: bench_recurrent_training.py --build build [--cells lstm,gru]
       [--steps 40,200] [--hidden 64] [--features 32] [--batch 32]
       [--train-steps 40] [--rounds 5] [--out FILE.md]
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
GENERATOR = os.path.join(PROJECT, "test", "Integration", "Inputs",
                         "sequence_classification.py")
sys.path.insert(0, os.path.join(PROJECT, "bench", "inference"))
from bench_inference import git_commit, machine_info  # noqa: E402

RATE = re.compile(r"^done: .* ([0-9.e+]+) samples/s$", re.M)


def sh(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), result.stdout, result.stderr))
    return result.stdout + result.stderr


def compile_bundle(args, heterps, model, bundle, extra):
    start = time.perf_counter()
    sh([heterps, "compile", model, "--cluster",
        os.path.join(PROJECT, "clusters", "local-cpu.yaml"), "--throughput", "1",
        "--strategy", "cpu-only", "--train", "--loss", "softmax-ce", "--optimizer", "adam",
        "--lr", "0.01", "--batch", str(args.batch), "-o", bundle] + extra)
    return time.perf_counter() - start


def train_round(args, heterps, bundle, data):
    text = sh([heterps, "run", bundle, "--train", "--data-input",
               "x=" + os.path.join(data, "x.npy"), "--data-input",
               "label=" + os.path.join(data, "label.npy"), "--batch", str(args.batch),
               "--steps", str(args.train_steps), "--log-every", str(args.train_steps)])
    match = RATE.search(text)
    if not match:
        sys.exit("no throughput in the training log:\n" + text)
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--cells", default="lstm,gru")
    parser.add_argument("--steps", default="40,200", help="sequence lengths")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--train-steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    heterps = os.path.join(os.path.abspath(args.build), "bin", "heterps")
    rows = []
    with tempfile.TemporaryDirectory(prefix="hps-rnn-train-") as work:
        for length in [int(s) for s in args.steps.split(",")]:
            data = os.path.join(work, "data%d" % length)
            sh([sys.executable, GENERATOR, "data", data, "--rows",
                str(args.batch * args.train_steps), "--steps", str(length),
                "--features", str(args.features)])
            for cell in args.cells.split(","):
                model = os.path.join(work, "%s%d.onnx" % (cell, length))
                sh([sys.executable, GENERATOR, "model", model, "--steps", str(length),
                    "--cell", cell, "--hidden", str(args.hidden),
                    "--features", str(args.features)])
                bundles = {"kernel": (os.path.join(work, "%s%d.kernel" % (cell, length)), []),
                           "unrolled": (os.path.join(work, "%s%d.unrolled" % (cell, length)),
                                        ["--recurrence-unroll-limit", str(length)])}
                compile_s = {name: compile_bundle(args, heterps, model, path, extra)
                             for name, (path, extra) in bundles.items()}
                rates = {name: [] for name in bundles}
                for name, (path, _) in bundles.items():  # warm-up
                    train_round(args, heterps, path, data)
                for _ in range(args.rounds):
                    for name, (path, _) in bundles.items():
                        rates[name].append(train_round(args, heterps, path, data))
                med = {name: statistics.median(v) for name, v in rates.items()}
                rows.append((cell, length, compile_s, med, rates))
                print("%s %d steps: kernel %.0f, unrolled %.0f samples/s (%.2fx); compile "
                      "%.1f s vs %.1f s" % (cell, length, med["kernel"], med["unrolled"],
                                            med["kernel"] / med["unrolled"],
                                            compile_s["kernel"], compile_s["unrolled"]),
                      flush=True)
    cpu, cores, flags = machine_info()
    lines = [
        "Reproduce: `python3 bench/training/bench_recurrent_training.py --build build "
        "--cells %s --steps %s --hidden %d --features %d --batch %d --train-steps %d "
        "--rounds %d`" % (args.cells, args.steps, args.hidden, args.features, args.batch,
                          args.train_steps, args.rounds),
        "",
        "%s, commit %s, %s. One %s recurrent layer (hidden %d, input %d) and a "
        "Gemm head, Adam, batch %d, %d training steps per round, medians over %d "
        "alternating rounds after a warm-up." % (
            datetime.date.today().isoformat(), git_commit(),
            "%s, %d cores (%s)" % (cpu, cores, flags),
            "/".join(c.upper() for c in args.cells.split(",")), args.hidden,
            args.features, args.batch, args.train_steps, args.rounds),
        "",
        "| cell | steps | kernel samples/s | unrolled samples/s | kernel / unrolled "
        "| compile, kernel | compile, unrolled |",
        "|---|---|---|---|---|---|---|",
    ]
    for cell, length, compile_s, med, rates in rows:
        lines.append("| %s | %d | %.0f (%s) | %.0f (%s) | %.2fx | %.1f s | %.1f s |" % (
            cell.upper(), length, med["kernel"],
            ", ".join("%.0f" % v for v in rates["kernel"]), med["unrolled"],
            ", ".join("%.0f" % v for v in rates["unrolled"]),
            med["kernel"] / med["unrolled"], compile_s["kernel"], compile_s["unrolled"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
