#!/usr/bin/env python3
"""CPU training throughput and accuracy with sparse updates one step late
(`heterps run --train --sparse-staleness 1`) against the synchronous path.

One Wide & Deep CTR model (bench/generate_ctr_model.py --layout criteo) is
compiled once for the CPU and trained `--steps` steps of `--batch` on the
same synthetic Criteo data both ways, the configurations interleaved within
each of `--rounds` rounds; the table gives the median samples/s, the ratio,
and the eval AUC and log-loss on held-out rows (the same every round: the
runs are deterministic). The peer is the synchronous path: staleness changes
the math (step t pulls rows updated through step t - 2), so the losses
differ and the AUC says what that costs.

Usage: bench_staleness.py --build build [--threads 2] [--batch 1024]
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
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    results = {name: [] for name in CONFIGS}
    with tempfile.TemporaryDirectory(prefix="hps-bench-stale-") as work:
        model, data_file = bench_training.model_and_data(args, heterps, work,
                                                         args.steps * args.batch)
        eval_file = os.path.join(work, "eval.tsv")
        truth = bench_training.datagen(heterps, eval_file, 20000, 2)
        bundle = bench_training.compile_bundle(args, heterps, model,
                                               os.path.join(work, "ctr.bundle"), "adagrad", args.lr)
        for _ in range(args.rounds):
            for name, flags in CONFIGS.items():
                results[name].append(bench_training.heterps_train(
                    args, heterps, bundle, data_file, eval_file=eval_file, extra=flags))
            print("round: " + ", ".join(f"{name} {runs[-1]['rate']:.0f}"
                                        for name, runs in results.items()),
                  file=sys.stderr, flush=True)
    base = statistics.median(r["rate"] for r in results["synchronous"])
    lines = [
        f"Wide & Deep CTR model: 26 fields x {args.buckets} buckets x dim {args.dim}, MLP "
        f"{args.hidden}, Adagrad lr {args.lr}; batch {args.batch}, {args.steps} steps, cpu-only "
        f"plan; median of {args.rounds} rounds; eval on 20,000 held-out rows (ground-truth AUC "
        f"{truth:.4f}). " + bench_training.provenance(args.build, args.threads) + ".",
        "",
        "| configuration | samples/s | vs synchronous | eval AUC | eval log-loss |",
        "|---|---|---|---|---|",
    ]
    for name, runs in results.items():
        rate = statistics.median(r["rate"] for r in runs)
        lines.append(f"| {name} | {rate:,.0f} | x{rate / base:.2f} | {runs[-1]['auc']:.4f} | "
                     f"{runs[-1]['logloss']:.4f} |")
    bench_training.publish(lines, args.out, "sparse-staleness")


if __name__ == "__main__":
    main()
