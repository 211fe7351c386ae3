#!/usr/bin/env python3
"""Runs a command and checks its peak resident memory.

  max_rss.py LIMIT_MIB COMMAND [ARG...]

The command's stdout and stderr pass through. Prints `peak rss N MiB (limit
LIMIT_MIB) ok` or `... FAIL` after it; exits with the command's status if it
failed, else 1 when the peak exceeds the limit, else 0.
"""
import resource
import subprocess
import sys


def main():
    limit = int(sys.argv[1])
    status = subprocess.run(sys.argv[2:]).returncode
    # ru_maxrss is in KiB on Linux: the largest of the waited-for children.
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    verdict = "ok" if peak <= limit else "FAIL"
    print("peak rss %d MiB (limit %d) %s" % (peak, limit, verdict))
    if status != 0:
        return status
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
