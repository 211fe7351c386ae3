#!/usr/bin/env python3
"""Checks a supervised job's report.json (docs/Jobs.md).

  check_report.py REPORT [--restarts N] [--max-redone K] [--resizes N]

The outcome must be "succeeded" with every sample trained; with --restarts
the restart count and one failure per restart, each failure naming a rank
or the engine; with --max-redone no failure may redo more than K steps;
with --resizes the resize count, each with its timings. Prints `ok ...` or
exits 1 naming the first difference.
"""
import argparse
import json
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--restarts", type=int)
    parser.add_argument("--max-redone", type=int)
    parser.add_argument("--resizes", type=int)
    args = parser.parse_args()
    with open(args.report) as file:
        report = json.load(file)
    if report["outcome"] != "succeeded":
        fail("outcome %s: %s" % (report["outcome"], report["message"]))
    if args.restarts is not None:
        if report["restarts"] != args.restarts:
            fail("%d restarts, expected %d" % (report["restarts"], args.restarts))
        if len(report["failures"]) != args.restarts:
            fail("%d failures for %d restarts" % (len(report["failures"]), args.restarts))
    for failure in report["failures"]:
        if failure["kind"] not in ("signal", "exit", "hang", "host", "engine", "lost"):
            fail("failure of unknown kind %s" % failure["kind"])
        if failure["kind"] in ("signal", "exit", "hang") and not failure["role"]:
            fail("a %s failure names no rank" % failure["kind"])
        if args.max_redone is not None and failure["steps_redone"] > args.max_redone:
            fail("attempt %d redid %d steps, more than %d" %
                 (failure["attempt"], failure["steps_redone"], args.max_redone))
        if failure["seconds_lost"] <= 0:
            fail("attempt %d lost no time?" % failure["attempt"])
    if args.resizes is not None:
        if len(report["resizes"]) != args.resizes:
            fail("%d resizes, expected %d" % (len(report["resizes"]), args.resizes))
        for resize in report["resizes"]:
            if not resize["total_seconds"] > 0:
                fail("resize %s has no timing" % resize["id"])
    print("ok: outcome %s, %d restarts, %d failures, steps redone %d" %
          (report["outcome"], report["restarts"], len(report["failures"]),
           report["steps_redone"]))


if __name__ == "__main__":
    main()
