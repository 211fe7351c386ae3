#!/usr/bin/env python3
"""Training throughput of one CTR model over MPI against the single process.

The same Wide & Deep CTR model (bench/generate_ctr_model.py --layout
criteo) and synthetic Criteo data (`heterps datagen`), trained by:
- `heterps run --train`: one process (the reference, ratio 1);
- `heterps launch` with W data-parallel workers and S shards, synchronous,
  once with the ranks' default waiting (chosen per machine: poll briefly,
  yield, then sleep where the ranks outnumber the cores) and once with
  HETERPS_MPI_WAIT=spin (poll without pausing, as Open MPI's blocking
  calls do);
- the same job asynchronous (--consistency=async --staleness 2);
- a heterogeneous plan (paper cluster, dp: embeddings on a CPU class, the
  deep tower on a GPU class, GPU stages on the CPU here) in one process and
  with `--stage-ranks` (a rank per stage replica).
Each configuration trains `--steps` steps per round (samples/s from the
run's own `done:` line, which excludes start-up); the table reports
medians over `--rounds`, interleaved, and the ratio to the single process
of the same bundle.

With `--baseline-build DIR` the stage-ranks configuration also runs with
DIR/bin/heterps (an older build) launching the same bundle, in the same
rounds, so a change to the MPI runtime is measured against its
predecessor on one machine in one run. `--only hetero` runs just the
heterogeneous plan's configurations.

Usage: bench_mpi.py --build build [--workers 2] [--shards 2] [--batch 256]
       [--steps 200] [--rounds 3] [--baseline-build DIR] [--only hetero]
       [--out docs/benchmarks/mpi-training.md]
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
MPIRUN_ARGS = ["--mpirun-arg=--oversubscribe", "--mpirun-arg=--allow-run-as-root"]


def sh(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True,
                            env=dict(os.environ, **(env or {})))
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def rate(log):
    found = re.findall(r"done: .* ([0-9.e+]+) samples/s", log)
    if not found:
        sys.exit(f"no 'done:' line in:\n{log}")
    return float(found[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(PROJECT, "build"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-build",
                        help="also run the stage-ranks configuration with this build's heterps")
    parser.add_argument("--only", choices=["cpu", "hetero"],
                        help="run only the configurations of this bundle")
    parser.add_argument("--mpirun-arg", action="append", default=[],
                        help="passed on to mpirun (e.g. --mpirun-arg=--mca "
                             "--mpirun-arg=btl --mpirun-arg=self,tcp for loopback TCP)")
    parser.add_argument("--out")
    args = parser.parse_args()
    mpirun_args = MPIRUN_ARGS + [f"--mpirun-arg={arg}" for arg in args.mpirun_arg]
    heterps = os.path.join(args.build, "bin", "heterps")
    baseline = (os.path.join(args.baseline_build, "bin", "heterps")
                if args.baseline_build else None)
    if baseline and not os.access(baseline, os.X_OK):
        sys.exit(f"--baseline-build: no executable {baseline}")

    with tempfile.TemporaryDirectory(prefix="hps-bench-mpi-") as work:
        model = os.path.join(work, "ctr.onnx")
        sh([sys.executable, os.path.join(PROJECT, "bench", "generate_ctr_model.py"),
            "--layout", "criteo", "--hidden", "256,128", "--buckets", "1000",
            "--batch", "64", "-o", model])
        data = os.path.join(work, "train.tsv")
        sh([heterps, "datagen", "ctr", "--rows", str(args.batch * args.steps),
            "--seed", "1", "-o", data])
        bundles = {
            "cpu": ["--cluster", os.path.join(PROJECT, "clusters", "local-cpu.yaml"),
                    "--throughput", "1", "--strategy", "cpu-only"],
            "hetero": ["--cluster", os.path.join(PROJECT, "clusters", "paper.yaml"),
                       "--throughput", "1000000", "--strategy", "dp"],
        }
        for name, flags in bundles.items():
            sh([heterps, "compile", model, *flags, "--train", "--loss", "bce",
                "--optimizer", "adagrad", "--lr", "0.05", "--batch", "64",
                "-o", os.path.join(work, name)])
        train = ["--data", data, "--steps", str(args.steps), "--batch", str(args.batch),
                 "--hash-buckets", "1000", "--log-every", str(args.steps),
                 "--gpu-stages-on-cpu"]
        wide = ["--workers", str(args.workers), "--ps-shards", str(args.shards)]

        def single(bundle):
            return [heterps, "run", os.path.join(work, bundle), "--train", *train], {}

        def launch(bundle, flags, env=None, binary=heterps):
            return ([binary, "launch", os.path.join(work, bundle), *flags, *mpirun_args,
                     "--", *train], env or {})

        configs = [
            ("one process", "cpu", single("cpu")),
            (f"{args.workers} workers, {args.shards} shards, sync", "cpu",
             launch("cpu", wide)),
            (f"{args.workers} workers, {args.shards} shards, sync, HETERPS_MPI_WAIT=spin",
             "cpu", launch("cpu", wide, {"HETERPS_MPI_WAIT": "spin"})),
            (f"{args.workers} workers, {args.shards} shards, async (staleness 2)", "cpu",
             launch("cpu", wide + ["--consistency=async", "--staleness=2"])),
            ("heterogeneous plan, one process", "hetero", single("hetero")),
            ("heterogeneous plan, --stage-ranks", "hetero",
             launch("hetero", ["--stage-ranks", "--ps-shards", str(args.shards)])),
        ]
        if baseline:
            configs.append(
                ("heterogeneous plan, --stage-ranks, baseline build", "hetero",
                 launch("hetero", ["--stage-ranks", "--ps-shards", str(args.shards)],
                        binary=baseline)))
        if args.only:
            configs = [config for config in configs if config[1] == args.only]
        rates = {name: [] for name, _, _ in configs}
        for _ in range(args.rounds):
            for name, _, (cmd, env) in configs:
                rates[name].append(rate(sh(cmd, env)))

    medians = {name: statistics.median(values) for name, values in rates.items()}
    reference = {"cpu": medians.get("one process"),
                 "hetero": medians.get("heterogeneous plan, one process")}
    lines = [
        "# Training over MPI",
        "",
        "Generated by `python3 bench/training/bench_mpi.py " + " ".join(sys.argv[1:]) + "`",
        f"on {platform.machine()} with {os.cpu_count()} cores (every rank on this one",
        "machine, oversubscribed: `--oversubscribe`). Wide & Deep CTR model, hidden",
        f"256,128, 1000 buckets per field, Adagrad, batch {args.batch}, {args.steps} steps;",
        f"samples/s are medians of {args.rounds} interleaved rounds; the ratio is",
        "to the single process on the same bundle."
        + (f" The baseline build is {baseline}." if baseline else ""),
        "",
        "| configuration | samples/s | ratio |",
        "|---|---|---|",
    ]
    for name, bundle, _ in configs:
        lines.append(f"| {name} | {medians[name]:.3g} | "
                     f"{medians[name] / reference[bundle]:.2f} |")
    lines += ["", "Per-round samples/s:", ""]
    for name, _, _ in configs:
        lines.append(f"- {name}: " + ", ".join(f"{value:.3g}" for value in rates[name]))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
