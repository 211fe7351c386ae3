#!/usr/bin/env python3
"""Long training jobs under failures: with the supervisor against without.

The peer is the job as it ran before `heterps job`: one `heterps launch`,
which ends when any rank dies (a person would have to relaunch it). Both run
the same CTR job (bench/generate_ctr_model.py --layout criteo, synthetic
Criteo data, 2 workers and 2 parameter-server shards, checkpoints every
`--checkpoint-every` steps) under the same injected failures, in one run on
this machine:

1. Real runs. For each of `--trials` jobs, failures arrive as a Poisson
   process whose mean time between failures is `--mtbf-fraction` of the
   job's length (in steps); each failure kills a random rank (a worker or a
   shard, HETERPS_FAULT kill specs) after its step. Without the supervisor a
   job fails at its first failure; with it (`heterps job run --inject ...`)
   the job restarts from its newest checkpoint. Reported: the fraction of
   jobs that fail, and from report.json the seconds lost per failure and
   the steps redone.
2. The same model extrapolated to long jobs. A job of length T with mean
   time between failures M sees N ~ Poisson(T / M) failures: without the
   supervisor it fails unless N = 0; with `max_restarts` R it fails only
   when N > R, and each failure costs the measured seconds lost (detection,
   back-off, relaunch, redone steps), scaled by the checkpoint interval.

Usage: bench_failures.py --build build [--trials 6] [--steps 60]
       [--mtbf-fraction 0.5] [--checkpoint-every 5] [--seed 1]
       [--out docs/benchmarks/jobs.md]
"""
import argparse
import json
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time

from common import BATCH, MPIRUN_ARGS, PROJECT, SHARDS, WORKERS, job_file, prepare, sh


def draw_failures(rng, steps, mtbf_steps):
    """Failure steps of a Poisson process over the job, one rank each."""
    failures, at = [], 0.0
    while True:
        at += rng.expovariate(1.0 / mtbf_steps)
        step = int(math.ceil(at))
        if step >= steps:
            return failures
        if failures and step <= failures[-1][0]:
            step = failures[-1][0] + 1
            if step >= steps:
                return failures
        role = rng.choice(["worker", "shard"])
        rank = rng.randrange(WORKERS if role == "worker" else SHARDS)
        failures.append((step, f"kill:{role}:{rank}@{step}"))


def run_without(heterps, work, steps, checkpoint_every, specs, trial):
    """The peer: one launch; the first failure ends it."""
    ckpt = os.path.join(work, f"plain-{trial}")
    env = {"HETERPS_FAULT": ";".join(specs)} if specs else {}
    start = time.time()
    result = sh([heterps, "launch", os.path.join(work, "b"), "--workers", str(WORKERS),
                 "--ps-shards", str(SHARDS)] + [f"--mpirun-arg={a}" for a in MPIRUN_ARGS] +
                ["--", "--data", os.path.join(work, "d.tsv"), "--steps", str(steps),
                 "--batch", str(BATCH), "--hash-buckets", "1000", "--checkpoint-dir", ckpt,
                 "--checkpoint-every", str(checkpoint_every)], env=env, check=False)
    return result.returncode == 0, time.time() - start


def run_with(heterps, work, job, specs, trial):
    job_dir = os.path.join(work, f"supervised-{trial}")
    cmd = [heterps, "job", "run", job, "--job-dir", job_dir]
    if specs:
        cmd += ["--inject", ";".join(specs)]
    start = time.time()
    result = sh(cmd, check=False)
    seconds = time.time() - start
    with open(os.path.join(job_dir, "report.json")) as file:
        report = json.load(file)
    return result.returncode == 0, seconds, report


def poisson_tail(mean, more_than):
    """P(N > more_than) for N ~ Poisson(mean)."""
    cdf, term = 0.0, math.exp(-mean)
    for n in range(more_than + 1):
        cdf += term
        term *= mean / (n + 1)
    return max(0.0, 1.0 - cdf)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(PROJECT, "build"))
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--mtbf-fraction", type=float, default=0.5)
    parser.add_argument("--checkpoint-every", type=int, default=5)
    parser.add_argument("--max-restarts", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-failures-") as work:
        prepare(heterps, work)
        job = job_file(work, steps=args.steps, checkpoint_every=args.checkpoint_every,
                       max_restarts=args.max_restarts)
        clean_ok, clean_seconds, _ = run_with(heterps, work, job, [], "clean")
        if not clean_ok:
            sys.exit("the job without failures failed")
        rows, lost, redone = [], [], []
        failed_without = failed_with = failures_in_all = 0
        for trial in range(args.trials):
            failures = draw_failures(rng, args.steps, args.mtbf_fraction * args.steps)
            specs = [spec for _, spec in failures]
            ok_without, seconds_without = run_without(heterps, work, args.steps,
                                                      args.checkpoint_every, specs, trial)
            ok_with, seconds_with, report = run_with(heterps, work, job, specs, trial)
            failed_without += not ok_without
            failed_with += not ok_with
            failures_in_all += len(failures)
            for failure in report["failures"]:
                lost.append(failure["seconds_lost"])
                redone.append(failure["steps_redone"])
            rows.append((trial, ", ".join(specs) or "none", ok_without, ok_with,
                         report["restarts"], report["steps_redone"],
                         report["seconds_lost"], seconds_with))
            print(f"trial {trial}: {len(failures)} failures; without: "
                  f"{'ok' if ok_without else 'FAILED'}; with: "
                  f"{'ok' if ok_with else 'FAILED'} ({report['restarts']} restarts, "
                  f"{report['seconds_lost']:.1f} s lost)", flush=True)

    per_failure = statistics.median(lost) if lost else 0.0
    step_seconds = clean_seconds / args.steps
    lines = []
    lines.append(f"Machine: {platform.processor() or platform.machine()}, "
                 f"{os.cpu_count()} cores; CTR job of {args.steps} steps "
                 f"({WORKERS} workers, {SHARDS} shards, batch {BATCH}), checkpoints every "
                 f"{args.checkpoint_every} steps, mean time between failures "
                 f"{args.mtbf_fraction:g} x the job's length; {args.trials} jobs, seed "
                 f"{args.seed}; without failures the supervised job takes "
                 f"{clean_seconds:.1f} s.\n")
    lines.append("| job | injected failures | without supervisor | with supervisor | "
                 "restarts | steps redone | seconds lost | job seconds |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for trial, specs, ok_without, ok_with, restarts, steps_redone, seconds_lost, seconds in rows:
        lines.append(f"| {trial} | {specs} | {'finished' if ok_without else 'failed'} | "
                     f"{'finished' if ok_with else 'failed'} | {restarts} | {steps_redone} | "
                     f"{seconds_lost:.1f} | {seconds:.1f} |")
    lines.append("")
    lines.append(f"Jobs failed: **{failed_without}/{args.trials}** without the supervisor, "
                 f"**{failed_with}/{args.trials}** with it ({failures_in_all} failures in all). "
                 f"Per failure: median {per_failure:.1f} s lost "
                 f"({statistics.median(redone) if redone else 0:g} steps redone; "
                 f"one step takes {step_seconds:.2f} s here).\n")
    lines.append("Extrapolated to long jobs (N ~ Poisson(T / MTBF) failures; a failure "
                 "costs the measured fixed part plus half a checkpoint interval of "
                 "redone work; checkpoints every 30 min):\n")
    lines.append("| job length / MTBF | failed without | failed with, max_restarts 3 | "
                 f"failed with, max_restarts {args.max_restarts} | expected time lost "
                 "(10 h job) |")
    lines.append("|---|---|---|---|---|")
    fixed_cost = max(0.0, per_failure - (statistics.median(redone) if redone else 0) * step_seconds)
    for ratio in (0.1, 0.25, 0.5, 1.0, 2.0):
        without = 1 - math.exp(-ratio)
        with3 = poisson_tail(ratio, 3)
        with_r = poisson_tail(ratio, args.max_restarts)
        lost_hours = ratio * (fixed_cost / 3600 + 0.25)
        lines.append(f"| {ratio:g} | {100 * without:.1f}% | {100 * with3:.3f}% | "
                     f"{100 * with_r:.2g}% | {lost_hours:.2f} h ({100 * lost_hours / 10:.1f}%) |")
    lines.append("")
    lines.append("Paddle's elastic training reports 34.49% fewer failed long jobs; "
                 "here no job fails while restarts remain.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
