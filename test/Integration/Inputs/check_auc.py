#!/usr/bin/env python3
"""Checks that a trained model's eval AUC is within MARGIN of the ground
truth's AUC on the same eval file.

Usage: check_auc.py REFERENCE TRAIN_LOG MARGIN
REFERENCE is what `heterps datagen` printed for the eval file (its
ground-truth AUC), or the log of another training run on the same eval file
(its last eval AUC); TRAIN_LOG is what `heterps run --train --eval` printed.
"""
import re
import sys


def last(pattern, text, what):
    found = re.findall(pattern, text)
    if not found:
        sys.exit(f"no {what} in the output:\n{text}")
    return float(found[-1])


def main():
    report, log, margin = open(sys.argv[1]).read(), open(sys.argv[2]).read(), float(sys.argv[3])
    if "ground-truth AUC" in report:
        truth = last(r"ground-truth AUC ([0-9.]+)", report, "ground-truth AUC")
    else:
        truth = last(r"eval step \S+\s+auc ([0-9.]+)", report, "reference eval AUC")
    trained = last(r"eval step \S+\s+auc ([0-9.]+)", log, "eval AUC")
    gap = truth - trained
    verdict = "ok" if gap <= margin else "FAIL"
    print(f"reference {truth:.4f}  trained {trained:.4f}  gap {gap:.4f}  (margin {margin}) {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
