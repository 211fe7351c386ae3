#!/usr/bin/env python3
"""Plays a job supervisor's part against a training run, for lit tests.

  liveness_driver.py stop --beats DIR --stop FILE --role worker-0 --step K -- CMD...
      Runs CMD with HETERPS_HEARTBEAT_DIR=DIR and HETERPS_STOP_FILE=FILE; once
      DIR/<role> reports a step of at least K, creates FILE; waits for CMD.
  liveness_driver.py hang --beats DIR --role worker-1 -- CMD...
      Runs CMD with HETERPS_HEARTBEAT_DIR=DIR (HETERPS_FAULT set by the
      caller hangs a rank); waits until the process of DIR/<role> is stopped
      (SIGSTOP), checks that its heartbeat file no longer changes, then
      SIGKILLs that process (as a supervisor would) and waits for CMD.

CMD's stdout and stderr pass through. Prints what it saw on stdout, last
"exit N" (or "signal N") for CMD. Gives up after 120 s.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

TIMEOUT = 120.0
INTERVAL_MS = 100


def read_beat(path):
    """The key=value words of a heartbeat file, or None."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    if not text.endswith("\n"):
        sys.exit("liveness_driver: partial heartbeat line in %s: %r" % (path, text))
    return dict(word.split("=", 1) for word in text.split())


def wait_for(what, condition, process):
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        if process.poll() is not None:
            sys.exit("liveness_driver: the command ended (%d) before %s"
                     % (process.returncode, what))
        time.sleep(0.02)
    process.kill()
    sys.exit("liveness_driver: timed out waiting for " + what)


def process_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            # The state follows the command name in parentheses.
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def finish(process):
    try:
        code = process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        sys.exit("liveness_driver: timed out waiting for the command to end")
    print("exit %d" % code if code >= 0 else "signal %d" % -code, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["stop", "hang"])
    parser.add_argument("--beats", required=True)
    parser.add_argument("--role", required=True)
    parser.add_argument("--stop")
    parser.add_argument("--step", type=int, default=1)
    if "--" not in sys.argv:
        sys.exit("liveness_driver: give the command after --")
    split = sys.argv.index("--")
    args = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    env = dict(os.environ)
    env["HETERPS_HEARTBEAT_DIR"] = args.beats
    env["HETERPS_HEARTBEAT_INTERVAL_MS"] = str(INTERVAL_MS)
    if args.mode == "stop":
        env["HETERPS_STOP_FILE"] = args.stop
    beat_path = os.path.join(args.beats, args.role)
    process = subprocess.Popen(command, env=env)

    if args.mode == "stop":
        beat = wait_for(
            "step %d in %s" % (args.step, beat_path),
            lambda: (lambda b: b if b and int(b["step"]) >= args.step else None)(
                read_beat(beat_path)),
            process)
        open(args.stop, "w").close()
        print("stop file created at step %s or later" % beat["step"], flush=True)
        finish(process)
        return

    # hang: the rank's process stops; its heartbeat goes stale.
    pid = int(wait_for("a heartbeat in " + beat_path,
                       lambda: read_beat(beat_path), process)["pid"])
    wait_for("process %d to stop" % pid,
             lambda: process_state(pid) == "T", process)
    # The thread may have been between two writes: wait out one interval.
    time.sleep(2 * INTERVAL_MS / 1000)
    before = read_beat(beat_path)
    time.sleep(10 * INTERVAL_MS / 1000)
    after = read_beat(beat_path)
    print("%s stopped (state T); heartbeat %s for %d intervals at step %s"
          % (args.role, "unchanged" if before == after else "CHANGED", 10,
             after["step"]), flush=True)
    os.kill(pid, signal.SIGKILL)
    finish(process)


if __name__ == "__main__":
    main()
