"""Reads slow_failing_compiler.sh's log: prints how many runs started and
ended, and "ok" when no more of them overlapped than the machine has cores
(and at least MIN_RUNS ran), else how many did."""
import os
import sys

log, min_runs = sys.argv[1], int(sys.argv[2])
events = sorted((int(time), 1 if kind == "start" else -1)
                for kind, time in (line.split() for line in open(log)))
running = most = 0
for _, change in events:
    running += change
    most = max(most, running)
starts = sum(1 for _, change in events if change > 0)
ends = len(events) - starts
cores = os.cpu_count()
verdict = "ok" if most <= cores and starts >= min_runs else \
    f"{most} overlapped on {cores} cores"
print("runs", starts, "ended", ends, verdict)
