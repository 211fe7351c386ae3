#!/usr/bin/env python3
"""Checks that a trained model's eval AUC is within MARGIN of the ground
truth's AUC on the same eval file.

Usage: check_auc.py DATAGEN_REPORT TRAIN_LOG MARGIN
DATAGEN_REPORT is what `heterps datagen` printed for the eval file;
TRAIN_LOG is what `heterps run --train --eval` printed.
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
    truth = last(r"ground-truth AUC ([0-9.]+)", report, "ground-truth AUC")
    trained = last(r"eval step \S+\s+auc ([0-9.]+)", log, "eval AUC")
    gap = truth - trained
    verdict = "ok" if gap <= margin else "FAIL"
    print(f"ground truth {truth:.4f}  trained {trained:.4f}  gap {gap:.4f}  (margin {margin}) {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
