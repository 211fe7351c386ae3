#!/usr/bin/env python3
"""Starts a supervised job and SIGKILLs its supervisor once the job has
passed a step, as a crashed or OOM-killed supervisor would end.

  kill_supervisor.py HETERPS JOB.yaml JOBDIR STEP [FLAGS...]

Runs `HETERPS job run JOB.yaml --job-dir JOBDIR FLAGS...`; once state.json
shows step >= STEP, kills the supervisor with SIGKILL and prints whether
processes of its attempt (those whose environment names the job's heartbeat
directory) are still running. Every wait is bounded.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from attempt_processes import attempt_processes  # noqa: E402


def main():
    heterps, job, job_dir, step = sys.argv[1:5]
    # The supervisor names the directory by its real path.
    job_dir = os.path.realpath(job_dir)
    supervisor = subprocess.Popen([heterps, "job", "run", job, "--job-dir", job_dir] + sys.argv[5:])
    deadline = time.time() + 300
    while True:
        if supervisor.poll() is not None:
            sys.exit("the job ended before step %s: exit %d" % (step, supervisor.returncode))
        if time.time() > deadline:
            supervisor.kill()
            sys.exit("the job did not reach step %s in time" % step)
        try:
            with open(os.path.join(job_dir, "state.json")) as file:
                state = json.load(file)
        except (OSError, ValueError):
            state = {}
        if state.get("phase") == "running" and state.get("step", 0) >= int(step):
            break
        time.sleep(0.1)
    supervisor.send_signal(signal.SIGKILL)
    supervisor.wait()
    time.sleep(0.5)
    left = attempt_processes(os.path.join(job_dir, "heartbeats"))
    print("supervisor killed; its attempt runs on: %s" % ("yes" if left else "no"))


if __name__ == "__main__":
    main()
