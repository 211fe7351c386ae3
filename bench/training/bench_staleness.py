#!/usr/bin/env python3
"""CPU training throughput and accuracy with sparse updates one step late
(`heterps run --train --sparse-staleness 1`) against the synchronous path,
with the step's kernels on every core and on all cores but one.

One Wide & Deep CTR model (bench/generate_ctr_model.py --layout criteo) is
compiled once for the CPU and trained `--steps` steps of `--batch` on the
same synthetic Criteo data both ways, the configurations interleaved within
each of `--rounds` rounds, for each kernel thread count of
`--thread-counts` (the held-back update runs on a thread of its own: with
a core left free it overlaps the step, as it overlaps GPU stages on a
machine with a GPU); the table gives the median samples/s, the ratio,
and the eval AUC and log-loss on held-out rows (the same every round: the
runs are deterministic). The peer is the synchronous path: staleness changes
the math (step t pulls rows updated through step t - 2), so the losses
differ and the AUC says what that costs.

Usage: bench_staleness.py --build build [--thread-counts 1,2] [--batch 1024]
       [--steps 300] [--rounds 3] [--out docs/benchmarks/training.md]
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_training  # noqa: E402  (model_and_data, compile_bundle, heterps_train, ...)

CONFIGS = {"synchronous": [], "sparse staleness 1": ["--sparse-staleness", "1"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_training.add_run_arguments(parser, steps=300)
    parser.add_argument("--thread-counts", default="1,2",
                        help="kernel threads of the runs (comma-separated; --threads is unused)")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    thread_counts = [int(t) for t in args.thread_counts.split(",") if t]
    runs = [(threads, name) for threads in thread_counts for name in CONFIGS]
    results = {run: [] for run in runs}
    with tempfile.TemporaryDirectory(prefix="hps-bench-stale-") as work:
        model, data_file = bench_training.model_and_data(args, heterps, work,
                                                         args.steps * args.batch)
        eval_file = os.path.join(work, "eval.tsv")
        truth = bench_training.datagen(heterps, eval_file, 20000, 2)
        bundle = bench_training.compile_bundle(args, heterps, model,
                                               os.path.join(work, "ctr.bundle"), "adagrad", args.lr)
        for _ in range(args.rounds):
            for threads, name in runs:
                args.threads = threads
                results[(threads, name)].append(bench_training.heterps_train(
                    args, heterps, bundle, data_file, eval_file=eval_file,
                    extra=CONFIGS[name]))
            print("round: " + ", ".join(f"{name} ({threads}) {result[-1]['rate']:.0f}"
                                        for (threads, name), result in results.items()),
                  file=sys.stderr, flush=True)
    rate = {run: statistics.median(r["rate"] for r in result)
            for run, result in results.items()}
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}, Adagrad lr {args.lr}; batch {args.batch}, {args.steps} steps, cpu-only "
        f"plan; median of {args.rounds} rounds; eval on 20,000 held-out rows (ground-truth AUC "
        f"{truth:.4f}). " + bench_training.provenance(args.build, max(thread_counts)) + ".",
        "",
        "| configuration | kernel threads | samples/s | vs synchronous, same threads "
        "| eval AUC | eval log-loss |",
        "|---|---|---|---|---|---|",
    ]
    for (threads, name), result in results.items():
        ratio = rate[(threads, name)] / rate[(threads, "synchronous")]
        lines.append(f"| {name} | {threads} | {rate[(threads, name)]:,.0f} | x{ratio:.2f} | "
                     f"{result[-1]['auc']:.4f} | {result[-1]['logloss']:.4f} |")
    bench_training.publish(lines, args.out, "sparse-staleness")


if __name__ == "__main__":
    main()
