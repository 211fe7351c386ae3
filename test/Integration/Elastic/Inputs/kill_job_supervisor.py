#!/usr/bin/env python3
"""Drives `heterps elastic serve` through the loss of a job's supervisor.

  kill_job_supervisor.py HETERPS STATE JOB.yaml STEP -- SERVE_FLAGS...

Starts the service on STATE, submits JOB, and once the job has passed STEP
SIGKILLs its supervisor (`heterps job run`, the pid in its job directory's
supervisor.lock), as the out-of-memory killer would. Waits until the job
has ended, prints its phase and whether any process of its first attempt
(its environment names the job's heartbeat directory) outlived the
supervisor's loss, and stops the service (SIGTERM). The service's output
goes to stderr. Every wait is bounded.
"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drive_service import job, status, stop, submit, wait  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from attempt_processes import alive, attempt_processes  # noqa: E402


def main():
    args = sys.argv[1:]
    split = args.index("--")
    heterps, state, job_file, step = args[0:4]
    service = subprocess.Popen([heterps, "elastic", "serve", "--state", state] + args[split + 1:])
    try:
        job_id = submit(heterps, state, job_file)
        wait(job_id + " at step " + step,
             lambda: job(status(heterps, state), job_id).get("step", 0) >= int(step))
        job_dir = os.path.realpath(os.path.join(state, "jobs", job_id))
        with open(os.path.join(job_dir, "supervisor.lock")) as file:
            supervisor = int(file.read().split()[0])
        first = [pid for pid in attempt_processes(os.path.join(job_dir, "heartbeats"))
                 if pid != supervisor]
        os.kill(supervisor, signal.SIGKILL)
        sys.stderr.write("kill_job_supervisor: killed supervisor %d; %d processes of its attempt\n"
                         % (supervisor, len(first)))
        wait(job_id + " to end",
             lambda: job(status(heterps, state), job_id).get("phase") in ("succeeded", "failed", "cancelled"))
        left = [pid for pid in first if alive(pid)]
        print("%s: %s" % (job_id, job(status(heterps, state), job_id).get("phase")))
        print("first attempt outlived its supervisor: %s" % ("yes" if left else "no"))
    finally:
        stop(service, "kill_job_supervisor")


if __name__ == "__main__":
    main()
