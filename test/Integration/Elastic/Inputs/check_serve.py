#!/usr/bin/env python3
"""Checks what `heterps elastic serve` left in its state directory.

  check_serve.py STATE --jobs N --samples S [--samples ID=S ...]
      --min-resizes K [--min-shrinks K] [--min-grows K]
      [--solo ID=LOG ... --auc-margin M]

Every job succeeded exactly once (the service started it once, its job
directory's report.json says succeeded after one supervisor's life, with no
restart, each attempt starting where the one before it stopped), and at
least K resizes were applied across the jobs (of which at
least so many to fewer and to more workers). Every job trained S samples,
or the S given for its ID. With --solo, each named job's
final eval AUC (in STATE/jobs/ID.log) is within M of the one in LOG, a run
of the same job alone.
"""
import argparse
import json
import os
import re
import sys


def last_auc(path):
    with open(path) as file:
        found = re.findall(r"eval step \S+\s+auc ([0-9.]+)", file.read())
    return float(found[-1]) if found else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("state")
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--min-resizes", type=int, default=0)
    parser.add_argument("--samples", action="append", required=True)
    parser.add_argument("--min-shrinks", type=int, default=0)
    parser.add_argument("--min-grows", type=int, default=0)
    parser.add_argument("--solo", action="append", default=[])
    parser.add_argument("--auc-margin", type=float, default=0.005)
    args = parser.parse_args()
    with open(os.path.join(args.state, "state.json")) as file:
        state = json.load(file)
    jobs = state["jobs"]
    samples = {}
    for value in args.samples:
        job_id, _, count = value.rpartition("=")
        samples[job_id] = int(count)
    errors = []
    if len(jobs) != args.jobs:
        errors.append("%d jobs, expected %d" % (len(jobs), args.jobs))
    resizes = shrinks = grows = 0
    aucs = []
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
        if report["samples"] != samples.get(job["id"], samples.get("")):
            errors.append("%s trained %d samples" % (job["id"], report["samples"]))
        # Nothing trained twice or lost: the first attempt starts from step
        # 0 and each later one where the one before it stopped (a resize
        # checkpoints as it stops, also a resize before the first step).
        attempts = report["attempts"]
        if not attempts or attempts[0]["start_step"] != 0:
            errors.append("%s: its first attempt did not start from step 0" % job["id"])
        for before, after in zip(attempts, attempts[1:]):
            if after["start_step"] != before["end_step"]:
                errors.append("%s: attempt %d started from step %d, not where attempt %d stopped (%d)"
                              % (job["id"], after["attempt"], after["start_step"],
                                 before["attempt"], before["end_step"]))
        resizes += len(report["resizes"])
        for resize in report["resizes"]:
            change = resize["to"]["workers"] - resize["from"]["workers"]
            shrinks += change < 0
            grows += change > 0
    if resizes < args.min_resizes:
        errors.append("%d resizes, expected at least %d" % (resizes, args.min_resizes))
    if shrinks < args.min_shrinks or grows < args.min_grows:
        errors.append("%d shrinks and %d grows, expected at least %d and %d"
                      % (shrinks, grows, args.min_shrinks, args.min_grows))
    for pair in args.solo:
        job_id, log = pair.split("=", 1)
        served = last_auc(os.path.join(args.state, "jobs", job_id + ".log"))
        alone = last_auc(log)
        if served is None or alone is None:
            errors.append("%s: no eval AUC (%s served, %s alone)" % (job_id, served, alone))
        elif abs(served - alone) > args.auc_margin:
            errors.append("%s: eval AUC %.4f served, %.4f alone" % (job_id, served, alone))
        else:
            aucs.append(job_id)
    if errors:
        print("error: " + "; ".join(errors))
        sys.exit(1)
    print("ok: %d jobs succeeded once each, %d resizes" % (len(jobs), resizes)
          + (" (%d shrinks, %d grows)" % (shrinks, grows) if args.min_shrinks or args.min_grows else "")
          + ("; eval AUC within %s of the solo run for %s" % (args.auc_margin, ", ".join(aucs)) if aucs else ""))


if __name__ == "__main__":
    main()
