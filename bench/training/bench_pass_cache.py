#!/usr/bin/env python3
"""CPU training throughput with the pass cache (`--pass-steps`) against the
direct path, with the sparse tables in memory and on the RocksDB tier, and
PyTorch on the CPU as the peer.

One Wide & Deep CTR model (bench/generate_ctr_model.py --layout criteo) is
compiled once for the CPU and trained `--steps` steps of `--batch` on the
same synthetic Criteo data (`heterps datagen`) with `heterps run --train` in
these configurations:
- memory, direct: every row in memory, each pull and push to the server
  (what training did before the pass cache);
- memory, passes: the same with passes of `--pass-steps` steps;
- RocksDB, direct: at most R rows per table and shard in memory, the rest
  in RocksDB (--ps-memory-rows / --ps-storage-dir), for each R of
  `--memory-rows` (a pass's working set is about 10^5 rows per table);
- RocksDB, passes: the same with passes;
- memory, passes within a cap: every row in the server's memory, passes
  whose cache may hold at most SIZE (`--pass-memory`) for each SIZE of
  `--pass-memory`, so a pass ends early where its next step's rows would
  not fit: the table is larger than the cache, as a table larger than GPU
  memory is for the HBM tier.
All must log the same loss at every step, to the last digit (checked:
the benchmark stops otherwise). The planner's prices of the same shapes
follow: the model compiled with `--pass-steps` (offering passes, at the
distinct share of keys the in-memory passes reported) gives the plan's
`step_shapes`, whose direct and passes throughputs the table sets beside
the measured ones (docs/Planning.md, "Step shapes"). PyTorch trains the same model on the same
data in the same rounds (bench_training.torch_train: nn.Embedding sparse
tables in memory, Adagrad, data parsed beforehand). The table gives the
median samples/s over `--rounds` rounds (configurations interleaved within
a round) and the ratios.

Usage: bench_pass_cache.py --build build [--threads 2] [--batch 1024]
       [--steps 120] [--pass-steps 32] [--memory-rows 2000,20000]
       [--pass-memory 16M,64M] [--rounds 3]
       [--out docs/benchmarks/training.md]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_training  # noqa: E402  (sh, model_and_data, compile_bundle, ...)

# Per configuration: (passes, fewest steps, most steps, distinct rows in %
# of the keys) of its last run.
pass_counts = {}

def configs(memory_rows, pass_memory):
    """(memory rows per shard or 0 for every row in memory, passes: False for
    the direct path, True for passes, or the cache's memory cap)."""
    return ([(rows, passes) for rows in [0] + memory_rows for passes in (False, True)] +
            [(0, cap) for cap in pass_memory])


def label(rows, passes):
    tier = "in memory" if rows == 0 else f"RocksDB, {rows} rows per shard in memory"
    if isinstance(passes, str):
        return f"{tier}, passes in a cache of at most {passes}"
    return f"{tier}, {'passes' if passes else 'direct'}"


def train(args, heterps, bundle, data_file, work, rows, passes):
    """One run: samples/s and the per-step loss log's text."""
    loss_log = os.path.join(work, "loss.txt")
    cmd = [heterps, "run", bundle, "--train", "--data", data_file, "--steps", str(args.steps),
           "--batch", str(args.batch), "--threads", str(args.threads), "--log-every",
           str(args.steps), "--hash-buckets", str(args.buckets), "--loss-log", loss_log]
    storage = os.path.join(work, "rocksdb")
    if rows:
        shutil.rmtree(storage, ignore_errors=True)
        cmd += ["--ps-memory-rows", str(rows), "--ps-storage-dir", storage]
    if passes:
        cmd += ["--pass-steps", str(args.pass_steps)]
    if isinstance(passes, str):
        cmd += ["--pass-memory", passes]
    text = bench_training.sh(cmd)
    rate = float(re.search(r"done: .*?([0-9.e+]+) samples/s", text).group(1))
    counts = re.search(r"passes: ([0-9]+), of ([0-9]+) to ([0-9]+) steps; "
                       r"distinct rows ([0-9.]+)% of the keys", text)
    if counts:
        pass_counts[(rows, passes)] = counts.groups()
    with open(loss_log) as f:
        losses = f.read()
    os.remove(loss_log)
    shutil.rmtree(storage, ignore_errors=True)
    return rate, losses


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_training.add_run_arguments(parser, steps=120)
    parser.add_argument("--pass-steps", type=int, default=32)
    parser.add_argument("--memory-rows", default="2000,20000",
                        help="rows per table and shard kept in memory on the RocksDB tier "
                             "(comma-separated: one pair of configurations each)")
    parser.add_argument("--pass-memory", default="16M,64M",
                        help="memory caps of the pass cache over tables in memory "
                             "(comma-separated: one configuration each)")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    hidden = [int(w) for w in args.hidden.split(",") if w]
    rows = args.steps * args.batch
    memory_rows = [int(r) for r in args.memory_rows.split(",") if r]
    all_configs = configs(memory_rows, [c for c in args.pass_memory.split(",") if c])
    rates = {config: [] for config in all_configs}
    torch_rates = []
    with tempfile.TemporaryDirectory(prefix="hps-bench-pass-") as work:
        model, data_file = bench_training.model_and_data(args, heterps, work, rows)
        bundle = bench_training.compile_bundle(args, heterps, model,
                                               os.path.join(work, "ctr.bundle"), "adagrad", args.lr)
        data = bench_training.read_criteo(data_file, args.buckets, rows)
        reference = None
        for _ in range(args.rounds):
            for rows, passes in all_configs:
                rate, losses = train(args, heterps, bundle, data_file, work, rows, passes)
                if reference is None:
                    reference = losses
                elif losses != reference:
                    sys.exit(f"{label(rows, passes)}: the per-step losses differ from the "
                             "direct path's")
                rates[(rows, passes)].append(rate)
            torch_rates.append(bench_training.torch_round(args, data, hidden)[0])
            print("round: " + ", ".join(f"{label(*c)} {rates[c][-1]:.0f}" for c in all_configs) +
                  f", PyTorch {torch_rates[-1]:.0f}", file=sys.stderr, flush=True)
        median = {config: statistics.median(values) for config, values in rates.items()}
        priced = priced_shapes(args, heterps, model, work, median)
    torch_median = statistics.median(torch_rates)
    base = median[(0, False)]
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}, Adagrad lr {args.lr}; batch {args.batch}, {args.steps} steps, passes of "
        f"{args.pass_steps} steps; median of {args.rounds} rounds. "
        + bench_training.provenance(args.build, args.threads) + ".",
        "",
        "| configuration | samples/s | vs in memory, direct | vs the same tier, direct "
        "| vs PyTorch (CPU) |",
        "|---|---|---|---|---|",
    ]
    for rows, passes in all_configs:
        rate = median[(rows, passes)]
        lines.append(f"| {label(rows, passes)} | {rate:,.0f} | x{rate / base:.2f} | "
                     f"x{rate / median[(rows, False)]:.2f} | x{rate / torch_median:.2f} |")
    lines.append(f"| PyTorch (CPU, sparse nn.Embedding, in memory) | {torch_median:,.0f} | "
                 f"x{torch_median / base:.2f} | | x1.00 |")
    lines += ["", "Every configuration logged the same loss at every step (9 digits)."]
    capped = [c for c in all_configs if isinstance(c[1], str)]
    if capped:
        lines += ["", "Passes under a memory cap (the run's `passes:` line): " + "; ".join(
            f"{c[1]}: {pass_counts[c][0]} passes of {pass_counts[c][1]} to {pass_counts[c][2]} "
            "steps" for c in capped) + f" (uncapped: {pass_counts[(0, True)][0]} passes)."]
    lines += ["", *priced]
    bench_training.publish(lines, args.out, "pass-cache")


def priced_shapes(args, heterps, model, work, median):
    """The planner's throughputs of the direct step and of passes over
    rows in memory, against the measured ones."""
    distinct = float(pass_counts[(0, True)][3]) / 100
    bundle = os.path.join(work, "priced.bundle")
    bench_training.compile_bundle(args, heterps, model, bundle, "adagrad", args.lr,
                                  ["--pass-steps", str(args.pass_steps),
                                   "--pass-distinct-fraction", f"{distinct:.4f}"])
    with open(os.path.join(bundle, "manifest.json")) as f:
        shapes = {s["pass_steps"]: s["throughput"]
                  for s in json.load(f)["plan"]["step_shapes"] if s["sparse_staleness"] == 0}
    predicted = shapes[args.pass_steps] / shapes[0]
    measured = median[(0, True)] / median[(0, False)]
    return [
        f"The planner's prices (clusters/local-cpu.yaml, distinct rows {distinct:.1%} of a "
        "pass's keys as measured): direct "
        f"{shapes[0]:,.0f} samples/s, passes {shapes[args.pass_steps]:,.0f}: passes at "
        f"x{predicted:.2f} the direct step, measured x{measured:.2f} (in memory)."]


if __name__ == "__main__":
    main()
