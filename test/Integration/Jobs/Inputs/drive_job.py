#!/usr/bin/env python3
"""Runs a supervised job and acts on it at given steps, as an operator, an
autoscaler or a failing cluster would.

  drive_job.py HETERPS JOB.yaml JOBDIR STEP:ACTION [STEP:ACTION ...]

Starts `HETERPS job run JOB.yaml --job-dir JOBDIR` (its output goes to
stderr), and once the job's state.json shows it running at or past STEP,
carries out ACTION: `resize FLAGS` runs `HETERPS job resize JOBDIR FLAGS`
(FLAGS split on spaces) and waits for it to be applied; `shell COMMAND`
runs COMMAND with sh (e.g. killing a Slurm node); `preempt` sends the
Slurm batch job the signal Slurm sends before a time limit or a preemption
(`scancel --signal=TERM --batch JOB`). Exits with the
supervisor's exit code; every wait is bounded (10 minutes in all).
"""
import json
import os
import subprocess
import sys
import time

DEADLINE = time.time() + 600


def state(job_dir):
    try:
        with open(os.path.join(job_dir, "state.json")) as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}


def main():
    heterps, job, job_dir = sys.argv[1:4]
    plan = [(int(step), action) for step, action in
            (item.split(":", 1) for item in sys.argv[4:])]
    supervisor = subprocess.Popen([heterps, "job", "run", job, "--job-dir", job_dir])
    try:
        for step, action in plan:
            while True:
                if supervisor.poll() is not None:
                    sys.exit("the job ended before step %d: exit %d" % (step, supervisor.returncode))
                if time.time() > DEADLINE:
                    sys.exit("the job did not reach step %d in time" % step)
                current = state(job_dir)
                if current.get("phase") == "running" and current.get("step", 0) >= step:
                    break
                time.sleep(0.1)
            kind, _, rest = action.partition(" ")
            if kind == "resize":
                command = [heterps, "job", "resize", job_dir] + rest.split() + ["--wait", "300"]
            elif kind == "shell":
                command = ["sh", "-c", rest]
            elif kind == "preempt":
                engine = state(job_dir).get("engine_id", "")
                if not engine.startswith("slurm job "):
                    sys.exit("preempt: the job does not run on Slurm (%s)" % engine)
                command = ["scancel", "--signal=TERM", "--batch", engine.split()[-1]]
            else:
                sys.exit("unknown action " + action)
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            sys.stderr.write(done.stdout)
            if done.returncode != 0:
                sys.exit("%s failed" % action)
        return supervisor.wait(timeout=max(1, DEADLINE - time.time()))
    finally:
        if supervisor.poll() is None:
            supervisor.kill()


if __name__ == "__main__":
    sys.exit(main())
