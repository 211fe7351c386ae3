#!/usr/bin/env python3
"""Drives `heterps elastic serve` as serve-local.test needs it.

  drive_service.py [--keep-service] HETERPS STATE JOB1.yaml JOB2.yaml JOB3.yaml
      -- SERVE_FLAGS...

Starts the service on STATE, submits JOB1, submits JOB2 once JOB1 runs,
kills the service (SIGKILL) once JOB2 runs and starts it again on the same
STATE (not with --keep-service), submits JOB3, waits until every job has
ended, and stops the service (SIGTERM). The service's output goes to
stderr. Every wait is bounded; a timeout exits non-zero naming what did not
happen.
"""
import json
import os
import signal
import subprocess
import sys
import time

DEADLINE = time.time() + 480


def status(heterps, state):
    out = subprocess.run([heterps, "elastic", "status", "--state", state, "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {}
    try:
        return json.loads(out.stdout)
    except ValueError:
        return {}


def job(current, job_id):
    for entry in current.get("jobs", []):
        if entry["id"] == job_id:
            return entry
    return {}


def wait(what, predicate):
    while time.time() < DEADLINE:
        if predicate():
            return
        time.sleep(0.3)
    sys.exit("drive_service: timed out waiting for " + what)


def submit(heterps, state, path):
    out = subprocess.run([heterps, "elastic", "submit", "--state", state, path],
                         capture_output=True, text=True, check=True)
    sys.stderr.write(out.stdout + out.stderr)
    return out.stdout.split()[-1]


def stop(service, who):
    """Stops the service with SIGTERM, as a user would; bounded."""
    if service.poll() is None:
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(timeout=30)
        except subprocess.TimeoutExpired:
            service.kill()
            sys.exit(who + ": the service did not stop on SIGTERM")


def main():
    args = sys.argv[1:]
    keep = args[0] == "--keep-service"
    if keep:
        args = args[1:]
    split = args.index("--")
    heterps, state = args[0:2]
    jobs = args[2:split]
    serve = [heterps, "elastic", "serve", "--state", state] + args[split + 1:]
    service = subprocess.Popen(serve)
    try:
        first = submit(heterps, state, jobs[0])
        wait(first + " running", lambda: job(status(heterps, state), first).get("step", 0) >= 5)
        second = submit(heterps, state, jobs[1])
        wait(second + " running", lambda: job(status(heterps, state), second).get("step", 0) >= 2)
        if not keep:
            service.send_signal(signal.SIGKILL)
            service.wait()
            sys.stderr.write("drive_service: killed the service; starting it again\n")
            service = subprocess.Popen(serve)
        third = submit(heterps, state, jobs[2])
        ids = [first, second, third]

        def done():
            current = status(heterps, state)
            return all(job(current, i).get("phase") in ("succeeded", "failed", "cancelled")
                       for i in ids)
        wait("every job to end", done)
    finally:
        stop(service, "drive_service")
    sys.stderr.write("drive_service: service exit %d\n" % service.returncode)


if __name__ == "__main__":
    main()
