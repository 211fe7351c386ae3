#!/usr/bin/env python3
"""The cost of resizing a running CTR job, which the autoscaler charges.

A supervised CTR job (bench/generate_ctr_model.py --layout criteo, 2 shards)
is resized `--resizes` times while it trains, alternating between 2 and 3
workers (and, every other time, batch 512 and 1024), each time once it has
trained `--gap` more steps. The supervisor times each resize (report.json):
from the request to the ranks' exit (checkpoint at the next step boundary and
stop), from there to the next attempt's first heartbeat (start: mpirun, MPI
init, bundle load, the shards reading the checkpoint), and to its first
finished step. The peer is the step itself: the table gives each cost in
steps of the running job, measured in the same run.

With --backend slurm (the local cluster of scripts/slurm/cluster.sh) the job
runs as a Slurm batch job that each resize requeues, and the peer is Slurm
itself: the same run times a trivial batch job requeued the way the
supervisor does it, with Slurm's default eligibility and with the
supervisor's StartTime=now+2 (docs/Jobs.md).

Usage: bench_resize.py --build build [--resizes 6] [--gap 100]
       [--backend mpirun|slurm] [--out docs/benchmarks/jobs-resize.md]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from common import job_file, prepare


def wait_for_step(job_dir, step, supervisor, deadline):
    while time.time() < deadline:
        if supervisor.poll() is not None:
            sys.exit("the job ended early")
        try:
            with open(os.path.join(job_dir, "state.json")) as file:
                state = json.load(file)
            if state.get("phase") == "running" and state.get("step", 0) >= step:
                return state["step"]
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    sys.exit("timed out")


def requeue_latency(start_time, tasks):
    """Seconds from `scontrol release` of a requeued trivial batch job to its
    running again; with `start_time`, the update also sets StartTime."""
    script = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)
    script.write("#!/bin/bash\nsleep 1\n")
    script.close()
    job = subprocess.run(["sbatch", "--parsable", "--requeue", "-n", "2", "-o", "/dev/null",
                          script.name], capture_output=True, text=True, check=True).stdout
    job = job.strip().split(";")[0]

    def state():
        out = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True,
                             text=True).stdout
        return next((w.split("=", 1)[1] for w in out.split() if w.startswith("JobState=")), "")

    deadline = time.time() + 120
    while state() != "COMPLETED" and time.time() < deadline:
        time.sleep(0.2)
    subprocess.run(["scontrol", "requeuehold", job], check=True, capture_output=True)
    update = ["scontrol", "update", "JobId=" + job, "NumTasks=" + str(tasks)]
    if start_time:
        update.append("StartTime=now+2")
    subprocess.run(update, check=True, capture_output=True)
    begin = time.time()
    subprocess.run(["scontrol", "release", job], check=True, capture_output=True)
    while state() == "PENDING" and time.time() < deadline:
        time.sleep(0.1)
    seconds = time.time() - begin
    subprocess.run(["scancel", job], capture_output=True)
    os.unlink(script.name)
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    parser.add_argument("--resizes", type=int, default=6)
    parser.add_argument("--gap", type=int, default=100)
    parser.add_argument("--backend", choices=["mpirun", "slurm"], default="mpirun")
    parser.add_argument("--out")
    args = parser.parse_args()
    heterps = os.path.join(args.build, "bin", "heterps")
    steps = (args.resizes + 2) * args.gap * 2
    with tempfile.TemporaryDirectory(prefix="bench-resize-") as work:
        prepare(heterps, work)
        job = job_file(work, steps=steps, checkpoint_every=1000, max_restarts=0,
                       workers=(2, 1, 3), batch=(512, 512, 1024), name="resize",
                       backend=args.backend)
        job_dir = os.path.join(work, "job")
        log = open(os.path.join(work, "supervisor.log"), "w")
        supervisor = subprocess.Popen([heterps, "job", "run", job, "--job-dir", job_dir],
                                      stderr=log)
        deadline = time.time() + 1800
        step = 0
        for index in range(args.resizes):
            step = wait_for_step(job_dir, step + args.gap, supervisor, deadline)
            workers = 3 if index % 2 == 0 else 2
            batch = 1024 if index % 4 == 0 else 512
            subprocess.run([heterps, "job", "resize", job_dir, "--workers", str(workers),
                            "--batch", str(batch), "--wait", "600"], check=True,
                           stdout=subprocess.DEVNULL)
        if supervisor.wait(timeout=max(1, deadline - time.time())) != 0:
            sys.exit("the job failed; see " + log.name)
        with open(os.path.join(job_dir, "report.json")) as file:
            report = json.load(file)
    resizes = report["resizes"]
    step_seconds = statistics.median(
        [(a["ended_at"] - a["started_at"]) / max(1, a["end_step"] - a["start_step"])
         for a in report["attempts"]])
    def med(key):
        return statistics.median(r[key] for r in resizes)
    lines = [f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores. "
             f"CTR job (hidden 32, 26 x 1000 buckets, micro-batch 64), 2 shards, "
             f"{len(resizes)} resizes between 2 and 3 workers and batch 512 and 1024; "
             f"medians. A step (attempt wall time / steps, start-up included) takes "
             f"{step_seconds:.2f} s here.\n",
             "| part | seconds (median) | min | max | in steps |",
             "|---|---|---|---|---|"]
    for key, name in (("stop_seconds", "checkpoint and stop"),
                      ("start_seconds", "start (launch to first heartbeat)"),
                      ("first_step_seconds", "first step"),
                      ("total_seconds", "total")):
        values = [r[key] for r in resizes]
        lines.append(f"| {name} | {med(key):.2f} | {min(values):.2f} | {max(values):.2f} | "
                     f"{med(key) / step_seconds:.1f} |")
    if args.backend == "slurm":
        default = [requeue_latency(False, 3) for _ in range(3)]
        ours = [requeue_latency(True, 3) for _ in range(3)]
        lines += ["", "Slurm itself, the same run: a trivial batch job requeued as the "
                  "supervisor does (requeuehold, update NumTasks, release), seconds from "
                  "the release to running again, median of 3:", "",
                  "| requeue | seconds (median) | min | max |", "|---|---|---|---|",
                  f"| Slurm's default (eligible after BatchStartTimeout) | "
                  f"{statistics.median(default):.2f} | {min(default):.2f} | {max(default):.2f} |",
                  f"| with StartTime=now+2 (the supervisor's) | {statistics.median(ours):.2f} | "
                  f"{min(ours):.2f} | {max(ours):.2f} |",
                  "", f"Ratio default / ours: {statistics.median(default) / statistics.median(ours):.1f}x."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
