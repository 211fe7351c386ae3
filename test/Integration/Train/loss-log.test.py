"""Checks a --loss-log file against the progress lines of the same run
(--log-every 1): the same steps, and each loss to the progress line's 4
digits."""
import re
import sys

progress = {int(step): loss for step, loss in
            re.findall(r"^step (\d+)/\d+\s+loss ([0-9.]+)", open(sys.argv[1]).read(), re.M)}
logged = [line.split() for line in open(sys.argv[2])]
steps = [int(step) for step, _ in logged]
assert steps == sorted(progress), f"steps {steps}, progress lines {sorted(progress)}"
# %.9g drops trailing zeros, so only some lines show all 9 digits.
assert max(len(loss.replace(".", "").lstrip("0")) for _, loss in logged) > 4, "no more digits"
for step, loss in logged:
    assert f"{float(loss):.4f}" == progress[int(step)], f"step {step}: {loss} vs {progress[int(step)]}"
print(f"ok: steps {steps[0]}-{steps[-1]}, more digits than the progress lines, equal to their 4")
