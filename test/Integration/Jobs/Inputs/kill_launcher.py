#!/usr/bin/env python3
"""Starts a supervised job and SIGKILLs its first attempt's `heterps
launch` once the job has passed a step, as a launcher that crashed or was
killed would end; the ranks it started live on in process groups of their
own.

  kill_launcher.py HETERPS JOB.yaml JOBDIR STEP [FLAGS...]

Runs `HETERPS job run JOB.yaml --job-dir JOBDIR FLAGS...`; once state.json
shows step >= STEP, kills the launch and notes every other process of the
attempt (its environment names the job's heartbeat directory). Once the
supervisor starts attempt 2, prints which of them still run, then waits for
the job and prints its exit code. Every wait is bounded.
"""
import json
import os
import signal
import subprocess
import sys
import time


def attempt_processes(heartbeats):
    entry = ("HETERPS_HEARTBEAT_DIR=" + heartbeats).encode()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as file:
                if entry not in file.read().split(b"\0"):
                    continue
            with open("/proc/%s/cmdline" % name, "rb") as file:
                found[int(name)] = file.read().split(b"\0")
        except OSError:
            pass
    return found


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def read_state(job_dir):
    try:
        with open(os.path.join(job_dir, "state.json")) as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}


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
    wait_for("step " + step, lambda: read_state(job_dir).get("phase") == "running"
             and read_state(job_dir).get("step", 0) >= int(step), supervisor, deadline)
    processes = attempt_processes(os.path.join(job_dir, "heartbeats"))
    launches = [pid for pid, argv in processes.items() if len(argv) > 1 and argv[1] == b"launch"]
    if len(launches) != 1:
        sys.exit("expected one launch process, found %d" % len(launches))
    os.kill(launches[0], signal.SIGKILL)
    print("killed the launch; %d other processes of attempt 1" % (len(processes) - 1))
    wait_for("attempt 2", lambda: read_state(job_dir).get("attempt", 0) >= 2, supervisor, deadline)
    left = [pid for pid in processes if pid != launches[0] and alive(pid)]
    print("attempt 1 still runs at attempt 2: %s" % (" ".join(map(str, left)) if left else "nothing"))
    try:
        code = supervisor.wait(timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        supervisor.kill()
        sys.exit("the job did not end in time")
    print("job exit %d" % code)


if __name__ == "__main__":
    main()
