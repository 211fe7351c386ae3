#!/usr/bin/env python3
"""Checks what `heterps elastic serve` left in its state directory.

  check_serve.py STATE --jobs N --samples S --min-resizes K

Every job succeeded exactly once (the service started it once, its job
directory's report.json says succeeded after one supervisor's life, with no
restart), and at least K resizes were applied across the jobs.
"""
import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("state")
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--min-resizes", type=int, default=0)
    parser.add_argument("--samples", type=int, required=True)
    args = parser.parse_args()
    with open(os.path.join(args.state, "state.json")) as file:
        state = json.load(file)
    jobs = state["jobs"]
    errors = []
    if len(jobs) != args.jobs:
        errors.append("%d jobs, expected %d" % (len(jobs), args.jobs))
    resizes = 0
    for job in jobs:
        starts = [d for d in state["decisions"] if d["job"] == job["id"] and d["action"] == "start"]
        if job["starts"] != 1 or len(starts) != 1:
            errors.append("%s started %d times (%d start decisions)" % (job["id"], job["starts"], len(starts)))
        if job["phase"] != "succeeded":
            errors.append("%s: %s (%s)" % (job["id"], job["phase"], job["reason"]))
        with open(os.path.join(args.state, "jobs", job["id"], "report.json")) as file:
            report = json.load(file)
        if report["outcome"] != "succeeded" or report["restarts"] != 0:
            errors.append("%s: report %s, %d restarts" % (job["id"], report["outcome"], report["restarts"]))
        if report["samples"] != args.samples:
            errors.append("%s trained %d samples" % (job["id"], report["samples"]))
        firsts = [a for a in report["attempts"] if a["start_step"] == 0]
        if len(firsts) != 1:
            errors.append("%s: %d attempts started from step 0" % (job["id"], len(firsts)))
        resizes += len(report["resizes"])
    if resizes < args.min_resizes:
        errors.append("%d resizes, expected at least %d" % (resizes, args.min_resizes))
    if errors:
        print("error: " + "; ".join(errors))
        sys.exit(1)
    print("ok: %d jobs succeeded once each, %d resizes" % (len(jobs), resizes))


if __name__ == "__main__":
    main()
