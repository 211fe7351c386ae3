#!/usr/bin/env python3
"""Compares two training runs of `heterps run --train` / `heterps launch`.

  compare_training.py losses A.log B.log --steps N [--rtol R]
      the progress lines `step k/N  loss L ...` of both logs: every step
      1..N present once in each, losses equal within relative tolerance R.
  compare_training.py params DIR_A DIR_B [--rtol R]
      two --dump-parameters directories: the same files, shapes and ids,
      values equal within R (0: bit-identical).

Prints one line per check and `ok ...` at the end; exits 1 naming the first
difference.
"""
import argparse
import os
import re
import sys

STEP = re.compile(r"^step (\d+)/(\d+)\s+loss (\S+)")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_losses(path):
    losses = {}
    with open(path) as log:
        for line in log:
            match = STEP.match(line)
            if not match:
                continue
            step = int(match.group(1))
            if step in losses:
                fail("%s: step %d is reported twice" % (path, step))
            losses[step] = float(match.group(3))
    return losses


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def compare_losses(args):
    first, second = read_losses(args.first), read_losses(args.second)
    worst = 0.0
    for step in range(1, args.steps + 1):
        for path, losses in ((args.first, first), (args.second, second)):
            if step not in losses:
                fail("%s has no progress line for step %d" % (path, step))
        a, b = first[step], second[step]
        difference = abs(a - b) / max(abs(a), abs(b), 1e-12)
        worst = max(worst, difference)
        if not close(a, b, args.rtol):
            fail("step %d: loss %.6g vs %.6g (relative difference %.3g > %g)"
                 % (step, a, b, difference, args.rtol))
    print("ok: %d steps agree, largest relative loss difference %.3g"
          % (args.steps, worst))


def compare_params(args):
    import numpy

    names = sorted(os.listdir(args.first))
    if names != sorted(os.listdir(args.second)):
        fail("the dumps hold different files: %s vs %s"
             % (names, sorted(os.listdir(args.second))))
    if not names:
        fail("the dumps are empty")
    worst = 0.0
    for name in names:
        a = numpy.load(os.path.join(args.first, name))
        b = numpy.load(os.path.join(args.second, name))
        if a.shape != b.shape or a.dtype != b.dtype:
            fail("%s: %s %s vs %s %s" % (name, a.dtype, a.shape, b.dtype, b.shape))
        if a.dtype.kind in "iu":
            if not numpy.array_equal(a, b):
                fail("%s: the ids differ" % name)
            continue
        scale = numpy.maximum(numpy.maximum(abs(a), abs(b)), 1e-6)
        difference = float(numpy.max(abs(a - b) / scale)) if a.size else 0.0
        worst = max(worst, difference)
        if args.rtol == 0 and not numpy.array_equal(a, b):
            fail("%s: not bit-identical (largest relative difference %.3g)"
                 % (name, difference))
        if difference > args.rtol:
            fail("%s: largest relative difference %.3g > %g"
                 % (name, difference, args.rtol))
    print("ok: %d parameter files agree, largest relative difference %.3g"
          % (len(names), worst))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["losses", "params"])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--steps", type=int, default=0)
    parser.add_argument("--rtol", type=float, default=0.0)
    args = parser.parse_args()
    if args.mode == "losses":
        if args.steps < 1:
            fail("losses needs --steps N")
        compare_losses(args)
    else:
        compare_params(args)


if __name__ == "__main__":
    main()
