#!/usr/bin/env python3
"""Checks a resized job against a run at a fixed size.

  check_resized.py REPORT RESIZED_LOG FIXED_LOG --samples N --auc-margin M

Counts samples: the report's trained samples and its data position must both
be N, in the first epoch (the data file holds more rows than N), so no
sample was skipped or read twice across the resizes: each attempt resumed at
exactly its checkpoint's position, which the resumed lines in the log show
(each attempt's "resumed from ... line=L" equals the samples of the
checkpoint it names). Then the final eval AUCs of both logs must be within M.
"""
import argparse
import json
import re
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def last_auc(path):
    found = re.findall(r"eval step \S+\s+auc ([0-9.]+)", open(path).read())
    if not found:
        fail("no eval AUC in " + path)
    return float(found[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("resized_log")
    parser.add_argument("fixed_log")
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--auc-margin", type=float, required=True)
    args = parser.parse_args()
    report = json.load(open(args.report))
    if report["outcome"] != "succeeded":
        fail("outcome " + report["outcome"])
    position = dict(word.split("=", 1) for word in report["data_position"].split() if "=" in word)
    if report["samples"] != args.samples:
        fail("%d samples trained, expected %d" % (report["samples"], args.samples))
    if int(position.get("epoch", -1)) != 0 or int(position.get("line", -1)) != args.samples:
        fail("data position %s after %d samples" % (report["data_position"], args.samples))
    log = open(args.resized_log).read()
    resumes = re.findall(r"resuming from \S+ \(step (\d+), (\d+) samples\)", log)
    positions = re.findall(r"resumed from \S+ \(step (\d+), data [^)]*line=(\d+) epoch=(\d+)", log)
    if len(resumes) != len(positions) or not resumes:
        fail("%d resumes announced, %d resumed" % (len(resumes), len(positions)))
    for (step, samples), (resumed_step, line, epoch) in zip(resumes, positions):
        if step != resumed_step or samples != line or epoch != "0":
            fail("resumed step %s at line %s (epoch %s), its checkpoint holds %s samples"
                 % (resumed_step, line, epoch, samples))
    resized, fixed = last_auc(args.resized_log), last_auc(args.fixed_log)
    if abs(resized - fixed) > args.auc_margin:
        fail("eval AUC %.4f resized, %.4f at a fixed size" % (resized, fixed))
    print("ok: %d samples, position %s, %d resumes at their checkpoints, "
          "AUC within %s" % (args.samples, report["data_position"], len(resumes), args.auc_margin))


if __name__ == "__main__":
    main()
