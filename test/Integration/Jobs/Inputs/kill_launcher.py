#!/usr/bin/env python3
"""Starts a supervised job and SIGKILLs its first attempt's `heterps
launch` once the job has passed a step, as a launcher that crashed or was
killed would end.

  kill_launcher.py HETERPS JOB.yaml JOBDIR STEP [FLAGS...]

Runs `HETERPS job run JOB.yaml --job-dir JOBDIR FLAGS...`; once state.json
shows step >= STEP, kills the launch and notes every other process of the
attempt (its environment names the job's heartbeat directory). Once the
supervisor starts attempt 2 or ends, prints which of them still run, then
waits for the job and prints its exit code. Every wait is bounded.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from attempt_processes import alive, attempt_processes  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drive_job import state  # noqa: E402


def wait_for(what, predicate, supervisor, deadline):
    while not predicate():
        if supervisor.poll() is not None:
            sys.exit("the job ended before %s: exit %d" % (what, supervisor.returncode))
        if time.time() > deadline:
            supervisor.kill()
            sys.exit("timed out waiting for " + what)
        time.sleep(0.1)


def main():
    heterps, job, job_dir, step = sys.argv[1:5]
    job_dir = os.path.realpath(job_dir)
    supervisor = subprocess.Popen([heterps, "job", "run", job, "--job-dir", job_dir] + sys.argv[5:])
    deadline = time.time() + 300
    wait_for("step " + step, lambda: state(job_dir).get("phase") == "running"
             and state(job_dir).get("step", 0) >= int(step), supervisor, deadline)
    processes = attempt_processes(os.path.join(job_dir, "heartbeats"))
    launches = [pid for pid, argv in processes.items() if len(argv) > 1 and argv[1] == b"launch"]
    if len(launches) != 1:
        sys.exit("expected one launch process, found %d" % len(launches))
    os.kill(launches[0], signal.SIGKILL)
    print("killed the launch; %d other processes of attempt 1" % (len(processes) - 1))
    # The launch's mpirun ends with it, and its ranks with mpirun: they may
    # checkpoint and stop (attempt 2 resumes), or, resumed from the hang
    # by mpirun, finish the job first.
    while state(job_dir).get("attempt", 0) < 2 and supervisor.poll() is None:
        if time.time() > deadline:
            supervisor.kill()
            sys.exit("timed out waiting for attempt 2 or the job's end")
        time.sleep(0.1)
    left = [pid for pid in processes if pid != launches[0] and alive(pid)]
    print("attempt 1 still runs once the supervisor went on: %s"
          % (" ".join(map(str, left)) if left else "nothing"))
    try:
        code = supervisor.wait(timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        supervisor.kill()
        sys.exit("the job did not end in time")
    print("job exit %d" % code)


if __name__ == "__main__":
    main()
